package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceThrottleMutesOnTheClock: a Produce v7 over the quota is
// answered at once with Kafka's throttle time (KIP-219), and the next
// request on the connection waits until the cluster's clock has moved that
// far.
func TestProduceThrottleMutesOnTheClock(t *testing.T) {
	c, nc, r, produce, want := throttleSetup(t, 7, 1)
	if _, err := nc.Write(produce); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	if err := resp.ReadFrom(readResponse(t, r, 1)); err != nil {
		t.Fatal(err)
	}
	if resp.ThrottleMillis != want || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("throttle %d ms (error %d), want %d", resp.ThrottleMillis, resp.Topics[0].Partitions[0].ErrorCode, want)
	}
	// ApiVersions waits behind the mute until the clock has moved the whole
	// throttle time.
	if _, err := nc.Write(frame(18, 0, 2, nil)); err != nil {
		t.Fatal(err)
	}
	releasedAfter(t, c, nc, r, want, 2)
}

// TestProduceThrottleOldVersionDelaysAnswer: before KIP-219 (Produce v5)
// the broker holds the answer itself for the throttle time.
func TestProduceThrottleOldVersionDelaysAnswer(t *testing.T) {
	c, nc, r, produce, want := throttleSetup(t, 5, 1)
	if _, err := nc.Write(produce); err != nil {
		t.Fatal(err)
	}
	body := releasedAfter(t, c, nc, r, want, 1)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 5
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if resp.ThrottleMillis != want {
		t.Fatalf("throttle %d ms, want %d", resp.ThrottleMillis, want)
	}
}

// TestProduceThrottleAcksZeroMutes: acks=0 gets no answer, but the
// connection is still muted for the throttle time, as in Kafka.
func TestProduceThrottleAcksZeroMutes(t *testing.T) {
	c, nc, r, produce, want := throttleSetup(t, 7, 0)
	if _, err := nc.Write(produce); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(frame(18, 0, 2, nil)); err != nil {
		t.Fatal(err)
	}
	releasedAfter(t, c, nc, r, want, 2)
}

// throttleSetup starts a manual-clock cluster where client id "x" has a
// producer_byte_rate of 1000 B/s, dials it and builds a Produce of one
// 20 kB record. One such request of S bytes into a fresh sensor is a rate
// of S/10 over the minimum 10 s window, so Kafka's throttle is
// (S/10-1000)/1000*10000 = S-10000 ms: want.
func throttleSetup(t *testing.T, version, acks int16) (*Cluster, net.Conn, *bufio.Reader, []byte, int32) {
	t.Helper()
	c := manualCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("x")}, quota.Op{Key: quota.ProducerByteRate, Value: 1000}); err != nil {
		t.Fatal(err)
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
		[]protocol.Record{{Value: make([]byte, 20000)}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	produce := frame(0, version, 1, req.AppendTo(nil)) // client id "x"
	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return c, nc, bufio.NewReader(nc), produce, int32(len(produce) - 4 - 10000)
}

// releasedAfter checks that response corr does not come before the
// cluster's clock has moved want ms, and returns it once it has.
func releasedAfter(t *testing.T, c *Cluster, nc net.Conn, r *bufio.Reader, want, corr int32) []byte {
	t.Helper()
	if _, err := c.WaitFor(testContext(t), ClientThrottled(0)); err != nil {
		t.Fatalf("no client_throttled event: %v", err)
	}
	if err := c.AdvanceClock(time.Duration(want-1) * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Absence can only be shown by waiting: a short read must find nothing.
	nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := r.Peek(1); err == nil {
		t.Fatalf("response %d came before the throttle time passed on the clock", corr)
	}
	if err := c.AdvanceClock(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	return readResponse(t, r, corr)
}

// readResponse reads one response frame and checks its correlation id.
func readResponse(t *testing.T, r *bufio.Reader, corr int32) []byte {
	t.Helper()
	b, err := protocol.ReadFrame(r, 1<<20)
	if err != nil {
		t.Fatalf("reading response %d: %v", corr, err)
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	return b[4:]
}

// throttles is a franz-go hook collecting the throttles brokers report.
type throttles struct {
	mu    sync.Mutex
	total time.Duration
	after bool
	n     int
}

func (h *throttles) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, after bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += d
	h.after = h.after || after
	h.n++
}

// TestThrottledProducer: a franz-go producer under a producer_byte_rate set
// with kadm sees throttle_time_ms (OnBrokerThrottle, applied after the
// response), and its throughput measured on the cluster's clock stays
// within the quota plus one window's allowance.
func TestThrottledProducer(t *testing.T) {
	const rate = 100_000 // B/s
	c := NewTestCluster(t, Config{Brokers: 1, QuotaWindowSize: 50 * time.Millisecond})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: kmsg.StringPtr("slow")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: rate}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("AlterClientQuotas: %+v %v", res, err)
	}

	h := &throttles{}
	cl := newClient(t, c, kgo.ClientID("slow"), kgo.WithHooks(h), kgo.MaxBufferedRecords(4), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const n, size = 200, 1000
	start := c.now()
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: "t", Value: make([]byte, size)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	elapsed := c.now().Sub(start)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 || h.total <= 0 || !h.after {
		t.Fatalf("no throttle after the response seen: %+v", h)
	}
	// The window is 10 samples of 50 ms: at most rate*0.5s may go at once,
	// the rest at the quota's pace.
	allowed := rate * (elapsed.Seconds() + 0.5) * 1.1 // 10% for request overhead
	if produced := float64(n * size); produced > allowed {
		t.Fatalf("%v bytes in %v on the cluster clock: more than the quota allows (%v)", produced, elapsed, allowed)
	}
	if leo := c.State().Topics[0].Partitions[0].Replicas[0].LogEndOffset; leo != n {
		t.Fatalf("LEO %d, want every record (%d): throttling must not lose any", leo, n)
	}
}

func TestClientQuotaAPIs(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))
	user := kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("alice")}, {Type: "client-id"}}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: user, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 2048}, {Key: "request_percentage", Value: 25}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("bob")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip"}, {Type: "user"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "group", Name: kmsg.StringPtr("g")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: kmsg.StringPtr("c")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "nonsense", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: kmsg.StringPtr("not a host!")}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil {
		t.Fatalf("valid entry: %+v", res[0])
	}
	for _, r := range res[1:] {
		if !errors.Is(r.Err, kerr.InvalidRequest) || r.ErrMessage == "" {
			t.Fatalf("%s: %v %q, want INVALID_REQUEST with a message", r.Entity, r.Err, r.ErrMessage)
		}
	}

	desc, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kmsg.StringPtr("alice"), MatchType: 0}})
	if err != nil {
		t.Fatal(err)
	}
	// Kafka lists an entity's client-id before its user.
	if len(desc) != 1 || len(desc[0].Entity) != 2 || desc[0].Entity[0].Name != nil || *desc[0].Entity[1].Name != "alice" || len(desc[0].Values) != 2 ||
		desc[0].Values[0] != (kadm.ClientQuotaValue{Key: "consumer_byte_rate", Value: 2048}) {
		t.Fatalf("DescribeClientQuotas user=alice: %+v", desc)
	}
	if desc, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: kmsg.StringPtr("alice"), MatchType: 0}}); err != nil || len(desc) != 0 {
		t.Fatalf("strict user=alice has no entity of the user alone: %+v %v", desc, err)
	}
	if _, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 0}}); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("EXACT without a name: %v, want INVALID_REQUEST", err)
	}
	if _, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "group", MatchType: 2}}); !errors.Is(err, kerr.UnsupportedVersion) {
		t.Fatalf("an unknown entity type: %v, want UNSUPPORTED_VERSION", err)
	}
	// Kafka reads an entity into a map: the last user wins, and the answer
	// names it alone.
	res, err = adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "user", Name: kmsg.StringPtr("x")}, {Type: "user", Name: kmsg.StringPtr("y")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}},
	}})
	if err != nil || len(res) != 1 || res[0].Err != nil || len(res[0].Entity) != 1 || *res[0].Entity[0].Name != "y" {
		t.Fatalf("a repeated entity type: %+v %v", res, err)
	}

	// validate_only changes nothing; removing the last key removes the entity.
	if _, err := adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: user, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Remove: true}, {Key: "request_percentage", Remove: true}}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.ClientQuotas()); n != 1 {
		t.Fatalf("validate_only changed the quotas: %+v", c.ClientQuotas())
	}
	if _, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: user, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Remove: true}, {Key: "request_percentage", Remove: true}}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.ClientQuotas()); n != 0 {
		t.Fatalf("entity left after removing every key: %+v", c.ClientQuotas())
	}
	// The set and the removal, not the refused or validate-only ones.
	if evs := eventsOfType(c.Events(0), EventQuotaChanged); len(evs) != 2 || evs[0].Detail != "user=alice,client-id=<default>" {
		t.Fatalf("quota_changed events: %+v", evs)
	}
}

// TestThrottledConsumer: a consumer_byte_rate caps each Fetch to what one
// window allows and throttles the consumer (OnBrokerThrottle), which still
// reads every record in order.
func TestThrottledConsumer(t *testing.T) {
	const rate = 100_000
	c := NewTestCluster(t, Config{Brokers: 1, QuotaWindowSize: 50 * time.Millisecond})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newClient(t, c, kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(2000))
	const n = 150
	for i := 0; i < n; i++ {
		p.Produce(ctx, &kgo.Record{Topic: "t", Value: make([]byte, 1000)}, nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("slowc")}, quota.Op{Key: quota.ConsumerByteRate, Value: rate}); err != nil {
		t.Fatal(err)
	}
	h := &throttles{}
	cl := newClient(t, c, kgo.ClientID("slowc"), kgo.WithHooks(h), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := int64(0)
	for next < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range fs.Records() {
			if r.Offset != next {
				t.Fatalf("offset %d, want %d", r.Offset, next)
			}
			next++
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 || !h.after {
		t.Fatalf("the consumer saw no throttle: %+v", h)
	}
}

// TestQuotaIPHostNames: an ip entity's host name is checked for its form
// and never looked up (no traffic leaves the machine).
func TestQuotaIPHostNames(t *testing.T) {
	for host, ok := range map[string]bool{
		"localhost": true, "broker-1.example": true, "broker.example.": true, "a1": true,
		"not a host!": false, "": false, "-bad.example": false, "bad-.example": false, "a..b": false,
		strings.Repeat("a", 64) + ".example": false,
	} {
		if got := wellFormedHost(host); got != ok {
			t.Errorf("wellFormedHost(%q) = %v, want %v", host, got, ok)
		}
	}
}
