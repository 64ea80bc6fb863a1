package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Produce details as Kafka 4.4 answers them (produce_validate.go,
// produce_dedupe.go), through franz-go over TCP.

// pdRequest sends req to the leader of its first topic's partition 0.
func pdRequest(t *testing.T, c *Cluster, cl *kgo.Client, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	t.Helper()
	leader := scPartition(t, c, req.Topics[0].Topic, 0).Leader
	resp, err := cl.Broker(int(leader)).Request(testContext(t), byTopicID(c, req)) // v13 names topics by id
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.ProduceResponse)
}

func pdBatch(t *testing.T, ts int64, codec protocol.Codec, keys ...string) []byte {
	t.Helper()
	var recs []protocol.Record
	for i, k := range keys {
		r := protocol.Record{Value: []byte{byte('a' + i)}}
		if k != "" {
			r.Key = []byte(k)
		}
		recs = append(recs, r)
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: ts}, codec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A LogAppendTime topic stamps the append time on the batch: the producer
// gets it back in LogAppendTime (franz-go does not read it; the raw answer
// is checked) and a consumer sees it with the LogAppendTime type, also
// after a recompression; an idempotent retry answers the first append's
// time.
func TestProduceLogAppendTimeSeenByConsumer(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := NewTestCluster(t, Config{Clock: clock.NewManual(start)})
	scMust(t, c.CreateTopic("lat", 1, 3, map[string]string{"message.timestamp.type": "LogAppendTime"}))
	scMust(t, c.CreateTopic("lat-gzip", 1, 3, map[string]string{"message.timestamp.type": "LogAppendTime", "compression.type": "gzip"}))
	ctx := testContext(t)
	prod := scClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	created := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	cl := newClient(t, c)
	for _, topic := range []string{"lat", "lat-gzip"} {
		scMust(t, prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v"), Timestamp: created}).FirstErr())
		sp := pdRequest(t, c, cl, produceBatchRequest(topic, 1, 5000, pdBatch(t, created.UnixMilli(), protocol.CodecNone, ""))).Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.LogAppendTime != start.UnixMilli() || sp.BaseOffset != 1 {
			t.Errorf("%s: answer %+v; want offset 1, LogAppendTime %d", topic, sp, start.UnixMilli())
		}
		cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		got := scPollValues(t, cons, 1)
		if !got[0].Timestamp.Equal(start) || got[0].Attrs.TimestampType() != 1 {
			t.Errorf("%s: consumed timestamp %v type %d, want %v type 1 (LogAppendTime)", topic, got[0].Timestamp, got[0].Attrs.TimestampType(), start)
		}
	}
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"lat-gzip": {0: kgo.NewOffset().AtStart()}}))
	if got := scPollValues(t, cons, 1); got[0].Attrs.CompressionType() != 1 {
		t.Errorf("lat-gzip: consumed codec %d, want 1 (gzip)", got[0].Attrs.CompressionType())
	}

	// The retry of an idempotent batch answers the time of the first
	// append, even after the clock moved on; a refused batch answers -1.
	pid := initProducerID(t, c)
	batch := scBatch(t, pid, 0, 0, "i")
	first := pdRequest(t, c, cl, produceBatchRequest("lat", -1, 5000, batch)).Topics[0].Partitions[0]
	c.AdvanceClock(time.Minute)
	retry := pdRequest(t, c, cl, produceBatchRequest("lat", -1, 5000, batch)).Topics[0].Partitions[0]
	if first.ErrorCode != 0 || retry.ErrorCode != 0 || retry.BaseOffset != first.BaseOffset || retry.LogAppendTime != start.UnixMilli() || first.LogAppendTime != start.UnixMilli() {
		t.Errorf("first %+v, retry %+v: want the same offset and append time %d", first, retry, start.UnixMilli())
	}
	bad := pdRequest(t, c, cl, produceBatchRequest("lat", -1, 5000, scBatch(t, pid, 0, 7, "gap"))).Topics[0].Partitions[0]
	if bad.ErrorCode != kerr.OutOfOrderSequenceNumber.Code || bad.LogAppendTime != -1 || bad.LogStartOffset != 0 {
		t.Errorf("out of order: %+v; want OUT_OF_ORDER_SEQUENCE_NUMBER, append time -1, log start 0", bad)
	}
}

// initProducerID takes an idempotent producer id.
func initProducerID(t *testing.T, c *Cluster) int64 {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
	resp, err := req.RequestWith(testContext(t), newClient(t, c))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", resp, err)
	}
	return resp.ProducerID
}

// Kafka's per-record errors: each refused record by index with a message,
// a summary in ErrorMessage, the log start offset, INVALID_RECORD for keys
// and INVALID_TIMESTAMP as soon as one timestamp is wrong. franz-go
// surfaces the code to the application.
func TestProduceRecordErrors(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("compacted", 1, 1, map[string]string{"cleanup.policy": "compact"}))
	scMust(t, c.CreateTopic("ts", 1, 1, map[string]string{"message.timestamp.before.max.ms": "60000"}))
	cl := newClient(t, c)
	now := time.Now().UnixMilli()

	sp := pdRequest(t, c, cl, produceBatchRequest("compacted", -1, 5000, pdBatch(t, now, protocol.CodecNone, "k", "", "k2", ""))).Topics[0].Partitions[0]
	want := "Compacted topic cannot accept message without key in topic partition compacted-0"
	if sp.ErrorCode != kerr.InvalidRecord.Code || len(sp.ErrorRecords) != 2 || sp.ErrorRecords[0].RelativeOffset != 1 || sp.ErrorRecords[1].RelativeOffset != 3 ||
		*sp.ErrorRecords[0].ErrorMessage != want || sp.LogStartOffset != 0 || sp.BaseOffset != -1 {
		t.Errorf("keyless records on a compacted topic: %+v", sp)
	}
	if sp.ErrorMessage == nil || *sp.ErrorMessage != "One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='"+want+"'), RecordError(batchIndex=3, message='"+want+"')]" {
		t.Errorf("ErrorMessage %v", sp.ErrorMessage)
	}

	old := now - 120000
	sp = pdRequest(t, c, cl, produceBatchRequest("ts", -1, 5000, pdBatch(t, old, protocol.CodecGzip, "", ""))).Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.InvalidTimestamp.Code || len(sp.ErrorRecords) != 2 || sp.ErrorMessage == nil ||
		*sp.ErrorMessage != "One or more records have been rejected due to invalid timestamp" ||
		!strings.HasPrefix(*sp.ErrorRecords[1].ErrorMessage, "Timestamp "+strconv.FormatInt(old, 10)+" of message with offset 1 is out of range. The timestamp should be within [") {
		t.Errorf("old timestamps: %+v", sp)
	}
	// message.timestamp.after.max.ms defaults to one hour.
	prod := scClient(t, c, kgo.RecordRetries(0))
	err := prod.ProduceSync(testContext(t), &kgo.Record{Topic: "ts", Value: []byte("late"), Timestamp: time.Now().Add(2 * time.Hour)}).FirstErr()
	if err != kerr.InvalidTimestamp {
		t.Errorf("a record two hours ahead: %v, want INVALID_TIMESTAMP", err)
	}
	err = prod.ProduceSync(testContext(t), &kgo.Record{Topic: "compacted", Value: []byte("no key")}).FirstErr()
	if err != kerr.InvalidRecord {
		t.Errorf("franz-go producing without a key to a compacted topic: %v, want INVALID_RECORD", err)
	}
	if r, err := prod.ProduceSync(testContext(t), &kgo.Record{Topic: "ts", Value: []byte("now")}).First(); err != nil || r.Offset != 0 {
		t.Errorf("a valid record after the refusals: %v at %d, want offset 0", err, r.Offset)
	}
}

// The request-level refusals answer no log start offset and no message;
// the checks after the leader's answer the log start offset; a bad
// magic byte fails the whole request.
func TestProduceRefusalsAsKafka(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopicAssigned("r", [][]int32{{1}, {1}}, nil))
	good := pdBatch(t, time.Now().UnixMilli(), protocol.CodecNone, "")
	v1 := append([]byte(nil), good...)
	v1[16] = 1
	v3 := append([]byte(nil), good...)
	v3[16] = 3
	base7 := append([]byte(nil), good...)
	base7[7] = 7 // a base offset the client may not choose (the CRC does not cover it)
	for _, tc := range []struct {
		name     string
		records  []byte
		version  int16
		code     int16
		logStart int64
		message  string
	}{
		{"magic v1", v1, 11, kerr.InvalidRecord.Code, -1, ""},
		{"two batches", append(append([]byte(nil), good...), good...), 11, kerr.InvalidRecord.Code, -1, ""},
		{"zstd on v6", pdBatch(t, time.Now().UnixMilli(), protocol.CodecZstd, ""), 6, kerr.UnsupportedCompressionType.Code, -1, ""},
		{"base offset 7", base7, 11, kerr.InvalidRecord.Code, 0, ""},
		{"magic v3", v3, 11, kerr.CorruptMessage.Code, -1, "Invalid magic found in record: 3"},
	} {
		req := produceBatchRequest("r", -1, 5000, tc.records)
		req.SetVersion(tc.version)
		// A second, valid partition: a frame error fails it too.
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 1, good
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(0, tc.version)
		resp := pdRequest(t, c, newClient(t, c, kgo.MaxVersions(vs)), req)
		byPartition := map[int32]kmsg.ProduceResponseTopicPartition{}
		for _, p := range resp.Topics[0].Partitions {
			byPartition[p.Partition] = p
		}
		sp := byPartition[0]
		msg := ""
		if sp.ErrorMessage != nil {
			msg = *sp.ErrorMessage
		}
		if sp.ErrorCode != tc.code || sp.LogStartOffset != tc.logStart || msg != tc.message || sp.BaseOffset != -1 || sp.LogAppendTime != -1 {
			t.Errorf("%s: %s log start %d message %q; want %s, %d, %q", tc.name, kerr.ErrorForCode(sp.ErrorCode), sp.LogStartOffset, msg, kerr.ErrorForCode(tc.code), tc.logStart, tc.message)
		}
		wantOther := int16(0)
		if tc.message != "" {
			wantOther = tc.code // the whole request failed
		}
		if other := byPartition[1].ErrorCode; other != wantOther {
			t.Errorf("%s: the other partition answered %s", tc.name, kerr.ErrorForCode(other))
		}
	}
}

// A partition named twice in one request is answered once: the last
// entry's batch is appended, the first is dropped; two topic entries of
// one topic become one.
func TestProduceSamePartitionTwice(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopicAssigned("dup", [][]int32{{1}, {1}}, nil))
	cl := newClient(t, c)
	ts := time.Now().UnixMilli()
	req := produceBatchRequest("dup", -1, 5000, pdBatch(t, ts, protocol.CodecNone, "first"))
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 1, pdBatch(t, ts, protocol.CodecNone, "one")
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	again := produceBatchRequest("dup", -1, 5000, pdBatch(t, ts, protocol.CodecNone, "second", "third"))
	req.Topics = append(req.Topics, again.Topics[0])
	resp := pdRequest(t, c, cl, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("answer %+v; want one topic with partitions 0 and 1", resp.Topics)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.BaseOffset != 0 {
			t.Errorf("partition %d: %+v; want offset 0", p.Partition, p)
		}
	}
	recs := scConsume(t, c, "dup", 2)
	if string(recs[0].Key) != "second" || string(recs[1].Key) != "third" || recs[0].Offset != 0 {
		t.Errorf("partition 0 holds %q@%d, %q; want the last entry's second, third from 0", recs[0].Key, recs[0].Offset, recs[1].Key)
	}
}

// compression.type other than producer recompresses on append: consumers
// see the topic's codec whatever the producer used, at the configured
// level too.
func TestProduceRecompressesToTopicCodec(t *testing.T) {
	c := NewTestCluster(t, Config{})
	topics := map[string]map[string]string{
		"to-gzip":  {"compression.type": "gzip", "compression.gzip.level": "1"},
		"to-lz4":   {"compression.type": "lz4"},
		"to-zstd":  {"compression.type": "zstd", "compression.zstd.level": "10"},
		"to-none":  {"compression.type": "uncompressed"},
		"producer": {"compression.type": "producer"},
	}
	want := map[string]uint8{"to-gzip": 1, "to-lz4": 3, "to-zstd": 4, "to-none": 0, "producer": 2}
	for name, cfg := range topics {
		scMust(t, c.CreateTopic(name, 1, 1, cfg))
	}
	ctx := testContext(t)
	prod := scClient(t, c, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	for name := range topics {
		for i := range 3 {
			scMust(t, prod.ProduceSync(ctx, &kgo.Record{Topic: name, Key: []byte{byte('0' + i)}, Value: []byte(strings.Repeat("x", 100))}).FirstErr())
		}
		recs := scConsume(t, c, name, 3)
		for i, r := range recs {
			if r.Attrs.CompressionType() != want[name] || r.Offset != int64(i) || string(r.Key) != string(rune('0'+i)) || len(r.Value) != 100 {
				t.Errorf("%s: record %d at %d codec %d; want codec %d", name, i, r.Offset, r.Attrs.CompressionType(), want[name])
			}
		}
	}
}

// hasDuplicatePartition finds a repeat in small requests (pairwise) and
// large ones (a map) alike, across topic entries too.
func TestHasDuplicatePartition(t *testing.T) {
	build := func(n int, dupAt int) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		for i := range n {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "t" + strconv.Itoa(i%3)
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = int32(i)
			if i == dupAt {
				rp.Partition = 0 // topic t0's partition 0 again when dupAt%3 == 0
			}
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
	for _, n := range []int{1, 2, 5, 16, 17, 40} {
		if hasDuplicatePartition(build(n, -1), n) {
			t.Errorf("%d distinct partitions: found a duplicate", n)
		}
		if n > 3 && !hasDuplicatePartition(build(n, 3), n) {
			t.Errorf("%d partitions with t0/0 twice: none found", n)
		}
		if n > 4 && hasDuplicatePartition(build(n, 4), n) {
			t.Errorf("%d partitions with t1/0 and t0/0: found a duplicate", n)
		}
	}
}

// Transactional batches recompressed to the topic's codec stay
// transactional: a read_committed consumer sees the committed records in
// the topic's codec and none of the aborted ones.
func TestProduceRecompressesTransactional(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("txn-zstd", 1, 3, map[string]string{"compression.type": "zstd"}))
	prod := scClient(t, c, kgo.DefaultProduceTopic("txn-zstd"), kgo.TransactionalID("recompress"), kgo.ProducerBatchCompression(kgo.GzipCompression()))
	runTxn(t, prod, false, "aborted-1", "aborted-2")
	runTxn(t, prod, true, "committed-1", "committed-2")
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"txn-zstd": {0: kgo.NewOffset().AtStart()}}), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := scPollValues(t, cons, 2)
	if len(got) != 2 || string(got[0].Value) != "committed-1" || string(got[1].Value) != "committed-2" {
		t.Fatalf("read_committed: %v; want committed-1, committed-2", scDescribe(got))
	}
	for _, r := range got {
		if r.Attrs.CompressionType() != 4 || !r.Attrs.IsTransactional() {
			t.Errorf("%q: codec %d transactional %v; want zstd (4), transactional", r.Value, r.Attrs.CompressionType(), r.Attrs.IsTransactional())
		}
	}
}

// Whatever the bytes, the produce checks answer an error code and never
// panic: every single-byte change and every truncation of a valid batch,
// and short garbage.
func TestProduceChecksNeverPanic(t *testing.T) {
	ts := &topicSettings{maxBytes: 1 << 20, compact: true, produce: producePolicy{before: 1000, after: 1000, codec: protocol.CodecGzip, level: protocol.DefaultLevel}}
	valid := pdBatch(t, time.Now().UnixMilli(), protocol.CodecSnappy, "k", "", "k2")
	check := func(records []byte) {
		_ = corruptFrame(records)
		if requestLevelRefusal(11, records) != nil {
			return
		}
		var b replication.Batch
		_ = validateProduced(append([]byte(nil), records...), ts, partitionName{"t", 0}, time.Now().UnixMilli(), time.Now().UnixMilli(), &b)
	}
	for i := range valid {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff} {
			m := append([]byte(nil), valid...)
			m[i] = v
			check(m)
		}
		check(valid[:i])
	}
	for _, g := range [][]byte{nil, {0}, make([]byte, 11), {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x9c, 2, 2, 2, 2, 2, 2}} {
		check(g)
	}
}
