package server

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestEverySupportedAPIHasAHandler(t *testing.T) {
	for _, r := range protocol.Supported {
		if _, ok := handlers[r.Key]; !ok && r.Key != apiVersionsKey {
			t.Errorf("%s (key %d) is in protocol.Supported but has no handler", r.Name(), r.Key)
		}
	}
	for key := range handlers {
		if _, ok := protocol.Lookup(key); !ok {
			t.Errorf("handler for key %d is not in protocol.Supported", key)
		}
	}
}

// frame builds a size-prefixed request frame with header v1.
func frame(key, version int16, corr int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'x')
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// expectClosed reads until the broker closes the connection.
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadAll(nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("broker kept the connection open")
	}
}

// TestGarbageDoesNotDisturbOthers sends malformed input of every kind to a
// live broker while a producer and consumer keep working on the same
// broker; their data is intact afterwards.
func TestGarbageDoesNotDisturbOthers(t *testing.T) {
	c := NewTestCluster(t, Config{MaxRequestBytes: 1 << 20})
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("survivor"), kgo.AllowAutoTopicCreation())
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	attacks := map[string][]byte{
		"oversize prefix":    {0x7f, 0xff, 0xff, 0xff, 1, 2, 3},
		"negative prefix":    {0xff, 0xff, 0xff, 0xfe},
		"just over the max":  binary.BigEndian.AppendUint32(nil, 1<<20+1),
		"truncated header":   {0, 0, 0, 3, 0, 1, 0},
		"unknown api key":    frame(9999, 0, 1, nil),
		"unsupported api":    frame(int16(kmsg.DescribeDelegationToken), 0, 1, nil),
		"version too new":    frame(0, 99, 1, nil),
		"version too old":    frame(0, 0, 1, nil),
		"garbage body":       frame(3, 1, 1, []byte{0x7f, 0xff, 0xff, 0xff, 0x01, 0x02}),
		"truncated produce":  frame(0, 3, 1, []byte{0xff, 0xff, 0, 1}),
		"random bytes":       []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"zero-length frame":  {0, 0, 0, 0},
		"header length lies": {0, 0, 0, 20, 0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0xff},
		// A v3 header's tag buffer, then a client software name that
		// claims 63 bytes and has 1: Kafka closes, as for any body.
		"truncated ApiVersions v3": frame(18, 3, 1, []byte{0, 0x40, 'a'}),
	}
	for name, payload := range attacks {
		t.Run(name, func(t *testing.T) {
			nc, err := net.Dial("tcp", c.Bootstrap()[0])
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if _, err := nc.Write(payload); err != nil {
				t.Fatal(err)
			}
			if name == "truncated header" || name == "header length lies" {
				nc.(*net.TCPConn).CloseWrite() // the broker sees EOF mid-frame
			}
			expectClosed(t, nc)
		})
	}

	// An ApiVersions version from the future gets a v0 answer with
	// UNSUPPORTED_VERSION and ApiVersions' own range (KIP-511), not a
	// closed connection.
	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(frame(18, 9, 42, []byte{0})) // v3+ headers end with a tag buffer
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	respFrame, err := protocol.ReadFrame(nc, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(respFrame)); corr != 42 {
		t.Fatalf("correlation id %d", corr)
	}
	var av kmsg.ApiVersionsResponse
	av.Version = 0
	if err := av.ReadFrom(respFrame[4:]); err != nil {
		t.Fatal(err)
	}
	if r, _ := protocol.Lookup(18); av.ErrorCode != 35 || len(av.ApiKeys) != 1 || av.ApiKeys[0].ApiKey != 18 || av.ApiKeys[0].MaxVersion != r.Max {
		t.Fatalf("ApiVersions v9: error %d with keys %+v, want 35 with ApiVersions v%d-%d only", av.ErrorCode, av.ApiKeys, r.Min, r.Max)
	}

	// The original clients and data are unaffected.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := newClient(t, c, kgo.ConsumeTopics("survivor"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if got[0] != "before" || got[1] != "after" {
		t.Fatalf("consumed %q", got)
	}
}

// TestCorruptBatchGetsCorruptMessage flips a byte inside a valid batch: the
// broker answers CORRUPT_MESSAGE and stores nothing.
func TestCorruptBatchGetsCorruptMessage(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("crc", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
		[]protocol.Record{{Value: []byte("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	batch[len(batch)-2] ^= 0xff
	cl := newClient(t, c)
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "crc"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(1).Request(testContext(t), byTopicID(c, req)) // partition 0 is led by broker 1
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 2 {
		t.Fatalf("error code %d, want 2 CORRUPT_MESSAGE", code)
	}
	if ps, _ := c.Partition("crc", 0); ps.Replicas[0].LogEndOffset != 0 {
		t.Fatalf("LEO %d after a corrupt batch", ps.Replicas[0].LogEndOffset)
	}
}
