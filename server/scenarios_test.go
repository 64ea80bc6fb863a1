package server

// The failure scenarios of kafka-semantics.md §10 (and the seed's example),
// each driven through franz-go over TCP against a real cluster: what the
// producer is told, what the consumer sees, and what every replica's log
// holds afterwards. Helpers here are prefixed sc so they cannot collide
// with helpers of other test files.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scFast makes franz-go notice failovers quickly: metadata may be refreshed
// every 10ms and retries back off 10ms. AlwaysRetryEOF: by default franz-go
// does not retry an EOF on the first request of a connection (it suspects
// missing SASL or TLS) and reports it as a fetch error, and a broker that
// stops just after accepting a connection produces exactly that.
func scFast() []kgo.Opt {
	return []kgo.Opt{
		kgo.AlwaysRetryEOF(),
		kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
	}
}

// scClient is newClient with scFast.
func scClient(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, c, append(scFast(), opts...)...)
}

// scRec is one record as stored: offset, the leader epoch of its batch and
// its value.
type scRec struct {
	Offset int64
	Epoch  int32
	Value  string
}

func (r scRec) String() string { return fmt.Sprintf("%d:%q(e%d)", r.Offset, r.Value, r.Epoch) }

// scDecode decodes concatenated v2 batches.
func scDecode(t *testing.T, b []byte) []scRec {
	t.Helper()
	var out []scRec
	for len(b) > 0 {
		batch, rest, err := protocol.NextBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		h, err := protocol.ParseBatchHeader(batch)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := protocol.Records(batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, scRec{h.BaseOffset + int64(r.OffsetDelta), h.PartitionLeaderEpoch, string(r.Value)})
		}
		b = rest
	}
	return out
}

// scReplicaLog is everything broker's replica of topic/partition holds,
// past its HW included: the stored batch bytes, decoded.
func scReplicaLog(t *testing.T, c *Cluster, topic string, partition, broker int32) []scRec {
	t.Helper()
	p := c.partition(topic, partition)
	p.mu.Lock()
	var raw []byte
	for _, b := range p.st.Replica(broker).Log().Batches() {
		raw = append(raw, b.Raw...)
	}
	p.mu.Unlock()
	return scDecode(t, raw)
}

// scFetchFrom is what a consumer reads from broker's replica of topic/0
// with Fetch v12 (any replica serves v11+, up to its own HW).
func scFetchFrom(t *testing.T, c *Cluster, broker int32, topic string) []scRec {
	t.Helper()
	p := rawFetch(t, c, broker, 12, topic, 0, -1, 0, 0)
	if p.ErrorCode != 0 {
		t.Fatalf("fetch %s from broker %d: %v", topic, broker, kerr.ErrorForCode(p.ErrorCode))
	}
	return scDecode(t, p.RecordBatches)
}

func scValues(rs []scRec) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}

// scBatch builds one batch of values; pid -1 makes it non-idempotent.
func scBatch(t *testing.T, pid int64, epoch int16, seq int32, values ...string) []byte {
	t.Helper()
	var rs []protocol.Record
	for _, v := range values {
		rs = append(rs, protocol.Record{Value: []byte(v)})
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()}, protocol.CodecNone, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scAcksClient is a client for raw Produce requests with acks: franz-go
// rewrites a raw ProduceRequest's Acks to the client's RequiredAcks
// (pkg/kgo/broker.go), so the acks must be configured on the client.
func scAcksClient(t *testing.T, c *Cluster, acks int16) *kgo.Client {
	t.Helper()
	switch acks {
	case 1:
		return scClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case -1:
		return scClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	t.Fatalf("acks %d", acks)
	return nil
}

// scProduce sends one raw Produce of batch to topic/0 on broker through
// cl, which must have been made on the test goroutine; it may run on any
// goroutine.
func scProduce(ctx context.Context, cl *kgo.Client, broker int32, topic string, acks int16, timeoutMillis int32, batch []byte) (kmsg.ProduceResponseTopicPartition, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, timeoutMillis
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0], nil
}

func scMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func scPartition(t *testing.T, c *Cluster, topic string, partition int32) PartitionState {
	t.Helper()
	ps, ok := c.Partition(topic, partition)
	if !ok {
		t.Fatalf("no partition %s/%d", topic, partition)
	}
	return ps
}

// scSettled reports whether every replica of topic/partition is online and
// in the ISR with LEO = HW = the leader's LEO (and = leo unless leo < 0).
func scSettled(c *Cluster, topic string, partition int32, leo int64) bool {
	ps, ok := c.Partition(topic, partition)
	if !ok || ps.Leader < 0 || len(ps.ISR) != len(ps.Replicas) {
		return false
	}
	if leo < 0 {
		leo = ps.HighWatermark
	}
	for _, r := range ps.Replicas {
		if r.State == "offline" || r.LogEndOffset != leo || r.HighWatermark != leo {
			return false
		}
	}
	return ps.HighWatermark == leo
}

func scWaitSettled(t *testing.T, c *Cluster, topic string, partition int32, leo int64) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("%s/%d to settle at LEO %d on every replica", topic, partition, leo), func() bool {
		return scSettled(c, topic, partition, leo)
	})
}

// scConsume reads topic/0 from the start with a fresh franz-go consumer
// until it has n records.
func scConsume(t *testing.T, c *Cluster, topic string, n int) []*kgo.Record {
	t.Helper()
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records of %s", len(out), n, topic)
		}
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// scRecordsAre checks that rs hold exactly values at offsets 0, 1, ...
func scRecordsAre(t *testing.T, what string, rs []*kgo.Record, values ...string) {
	t.Helper()
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = string(r.Value)
		if r.Offset != int64(i) {
			t.Errorf("%s: record %d at offset %d", what, i, r.Offset)
		}
	}
	if !slices.Equal(got, values) {
		t.Errorf("%s: consumed %q, want %q", what, got, values)
	}
}

// scLogsAre checks that every replica of topic/0 stores exactly values.
func scLogsAre(t *testing.T, c *Cluster, topic string, values ...string) {
	t.Helper()
	for _, r := range scPartition(t, c, topic, 0).Replicas {
		if got := scValues(scReplicaLog(t, c, topic, 0, r.Broker)); !slices.Equal(got, values) {
			t.Errorf("broker %d's log of %s holds %q, want %q", r.Broker, topic, got, values)
		}
	}
}

// TestScenario01AcksOneLostOnLeaderCrash: acks=1, the leader acknowledges
// and crashes before any follower fetched; a follower takes over, the
// acknowledged record is gone and its offset goes to another record, and
// the old leader truncates its copy when it comes back.
func TestScenario01AcksOneLostOnLeaderCrash(t *testing.T) {
	c := NewTestCluster(t, Config{})
	const topic = "s1"
	scMust(t, c.CreateTopic(topic, 1, 3, nil)) // replicas 1, 2, 3: leader 1
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for _, v := range []string{"a", "b"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 2)

	for _, id := range []int32{2, 3} {
		scMust(t, c.PauseReplica(topic, 0, id))
	}
	lost, err := prod.ProduceSync(ctx, kgo.StringRecord("lost")).First()
	if err != nil || lost.Offset != 2 {
		t.Fatalf("acks=1 produce: offset %d, error %v; want acknowledged at 2", lost.Offset, err)
	}
	ps := scPartition(t, c, topic, 0)
	if ps.Replicas[0].LogEndOffset != 3 || ps.Replicas[1].LogEndOffset != 2 || ps.Replicas[2].LogEndOffset != 2 || ps.HighWatermark != 2 {
		t.Fatalf("before the crash: %+v; want only the leader at LEO 3, HW 2", ps)
	}

	// The followers are paused but still in the ISR (30s lag time), so
	// the controller's election is clean: follower 2, first in line.
	since := evLastSeq(c)
	scMust(t, c.StopBroker(1, StopCrash))
	ps = scPartition(t, c, topic, 0)
	if ps.Leader != 2 || ps.LeaderEpoch != 1 || !slices.Equal(ps.ISR, []int32{2, 3}) {
		t.Fatalf("after the crash: leader %d epoch %d ISR %v; want 2, 1, [2 3]", ps.Leader, ps.LeaderEpoch, ps.ISR)
	}
	for _, id := range []int32{2, 3} {
		scMust(t, c.ResumeReplica(topic, 0, id))
	}
	reused, err := prod.ProduceSync(ctx, kgo.StringRecord("new")).First()
	if err != nil || reused.Offset != lost.Offset {
		t.Fatalf("produce after failover: offset %d, error %v; want the lost record's offset %d", reused.Offset, err, lost.Offset)
	}

	scMust(t, c.StartBroker(1))
	scWaitSettled(t, c, topic, 0, 3)
	if _, err := c.WaitFor(ctx, ISRExpanded(topic, 0)); err != nil {
		t.Fatal(err)
	}
	// The acks=1 record was above the HW, so its loss is a truncation,
	// not a records_lost: nothing committed went away.
	evCheckStory(t, c, since, topic,
		"broker_stopped 1 crash",
		"broker_fenced 1",
		"isr_shrunk s1/0 broker 1 isr [2 3] (broker fenced)",
		"leader_elected s1/0 leader 2 (was 1) epoch 1 isr [2 3] (broker fenced)",
		"replica_resumed s1/0 2",
		"replica_resumed s1/0 3",
		"broker_started 1",
		"log_truncated s1/0 broker 1 3->2 (leader epoch)",
		"isr_expanded s1/0 broker 1 isr [1 2 3] (caught up)",
	)
	scLogsAre(t, c, topic, "a", "b", "new")
	scRecordsAre(t, "consumer", scConsume(t, c, topic, 3), "a", "b", "new")
	for _, id := range []int32{1, 2, 3} {
		if got := scValues(scFetchFrom(t, c, id, topic)); !slices.Equal(got, []string{"a", "b", "new"}) {
			t.Errorf("fetch from broker %d: %q", id, got)
		}
	}
}

// scAck is what a producer was told for one record.
type scAck struct {
	partition int32
	offset    int64
}

// scProducer produces unique sequence numbers as values, round robin over
// partitions, with at most 64 records in flight, until stopped, and keeps
// every acknowledgement.
type scProducer struct {
	cl         *kgo.Client
	topic      string
	partitions int32

	mu    sync.Mutex
	acked map[string]scAck
	errs  []error
	n     atomic.Int64 // acknowledged so far

	stop chan struct{}
	done chan struct{}
	sent int
}

func scStartProducer(t *testing.T, c *Cluster, topic string, partitions int32, opts ...kgo.Opt) *scProducer {
	p := &scProducer{
		cl:         scClient(t, c, append([]kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond)}, opts...)...),
		topic:      topic,
		partitions: partitions,
		acked:      map[string]scAck{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	ctx := testContext(t)
	go func() {
		defer close(p.done)
		sem := make(chan struct{}, 64)
		for seq := 0; ; seq++ {
			select {
			case <-p.stop:
				p.sent = seq
				return
			case sem <- struct{}{}:
			}
			r := &kgo.Record{Topic: topic, Partition: int32(seq) % partitions, Value: []byte(strconv.Itoa(seq))}
			p.cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				<-sem
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.errs = append(p.errs, fmt.Errorf("record %s: %w", r.Value, err))
					return
				}
				p.acked[string(r.Value)] = scAck{r.Partition, r.Offset}
				p.n.Add(1)
			})
		}
	}()
	return p
}

// finish stops producing, waits for every record's answer and returns the
// acknowledgements.
func (p *scProducer) finish(t *testing.T) map[string]scAck {
	t.Helper()
	close(p.stop)
	<-p.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		t.Fatalf("%d of %d records failed, first: %v", len(p.errs), p.sent, p.errs[0])
	}
	if len(p.acked) != p.sent {
		t.Fatalf("%d records acknowledged, %d sent", len(p.acked), p.sent)
	}
	return p.acked
}

// scAwait waits until cond holds or timeout passes and reports which.
// Unlike waitFor it does not fail: callers use it to pace random steps.
func scAwait(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
	return true
}

// scConsumeEverything reads every partition of topic from the start up to
// its HW with a fresh consumer and returns (partition, offset) -> value.
func scConsumeEverything(t *testing.T, c *Cluster, topic string, partitions int32) map[scAck]string {
	t.Helper()
	want := 0
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		want += int(scPartition(t, c, topic, p).HighWatermark)
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := map[scAck]string{}
	for len(got) < want {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(got), want)
		}
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			k := scAck{r.Partition, r.Offset}
			if v, ok := got[k]; ok && v != string(r.Value) {
				t.Errorf("partition %d offset %d consumed as %q and %q", r.Partition, r.Offset, v, r.Value)
			}
			got[k] = string(r.Value)
		})
	}
	return got
}

// scCheckAcked checks that every acknowledged record is in log at the
// offset it was acknowledged at, and that no value appears twice.
func scCheckAcked(t *testing.T, acked map[string]scAck, log map[scAck]string) {
	t.Helper()
	for v, a := range acked {
		if got, ok := log[a]; !ok || got != v {
			t.Errorf("record %s acknowledged at partition %d offset %d, which holds %q (present %v)", v, a.partition, a.offset, got, ok)
		}
	}
	where := map[string]scAck{}
	for k, v := range log {
		if prev, ok := where[v]; ok {
			t.Errorf("record %s is in the log twice: %+v and %+v", v, prev, k)
		}
		where[v] = k
	}
}

// TestScenario02AcksAllSurvivesRollingCrashes produces continuously with an
// idempotent acks=all producer while every broker in turn crashes and
// restarts (the next only once the ISR is full again): every acknowledged
// record is there afterwards, at its offset, exactly once.
func TestScenario02AcksAllSurvivesRollingCrashes(t *testing.T) {
	for _, tc := range []struct {
		rf     int16
		minISR int
	}{{3, 2}, {2, 1}, {2, 2}} {
		t.Run(fmt.Sprintf("rf=%d min.insync.replicas=%d", tc.rf, tc.minISR), func(t *testing.T) {
			const topic, partitions = "s2", 2
			c := NewTestCluster(t, Config{Brokers: int(tc.rf)})
			scMust(t, c.CreateTopic(topic, partitions, tc.rf, map[string]string{"min.insync.replicas": strconv.Itoa(tc.minISR)}))
			prod := scStartProducer(t, c, topic, partitions)
			progress := func(what string) {
				t.Helper()
				from := prod.n.Load()
				waitFor(t, 5*time.Second, what, func() bool { return prod.n.Load() >= from+200 })
			}
			progress("records to be acknowledged")
			for id := int32(1); id <= int32(tc.rf); id++ {
				scMust(t, c.StopBroker(id, StopCrash))
				// With rf=2 and min.insync.replicas=2 one broker down
				// stops acks=all writes (NOT_ENOUGH_REPLICAS, retried);
				// otherwise the survivors go on acknowledging.
				if int(tc.rf)-1 >= tc.minISR {
					progress(fmt.Sprintf("progress while broker %d is down", id))
				}
				scMust(t, c.StartBroker(id))
				waitFor(t, 5*time.Second, "the ISRs to be full again", func() bool {
					for p := range int32(partitions) {
						if ps := scPartition(t, c, topic, p); len(ps.ISR) != int(tc.rf) {
							return false
						}
					}
					return true
				})
				progress(fmt.Sprintf("progress after broker %d restarted", id))
			}
			acked := prod.finish(t)
			for p := range int32(partitions) {
				scWaitSettled(t, c, topic, p, -1)
			}
			log := scConsumeEverything(t, c, topic, partitions)
			if len(log) != len(acked) {
				t.Errorf("the log holds %d records, %d were acknowledged", len(log), len(acked))
			}
			scCheckAcked(t, acked, log)
			// Every crash moved leadership away and back cleanly, and no
			// committed record was ever lost.
			counts := map[EventType]int{}
			for _, e := range c.Events(0) {
				if e.Topic == topic || e.Type == EventBrokerStopped {
					counts[e.Type]++
				}
				if e.Type == EventRecordsLost || e.Type == EventLeaderElected && e.Unclean {
					t.Errorf("event %s", evLine(e))
				}
			}
			if counts[EventBrokerStopped] != int(tc.rf) || counts[EventLeaderElected] < int(tc.rf) || counts[EventISRShrunk] == 0 || counts[EventISRExpanded] == 0 {
				t.Errorf("events about %s: %v; want leaders elected, ISRs shrunk and expanded", topic, counts)
			}
		})
	}
}

// scProduceWrites counts the Produce requests a client writes.
type scProduceWrites struct{ n atomic.Int64 }

func (h *scProduceWrites) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 0 && err == nil {
		h.n.Add(1)
	}
}

// TestScenario03NotEnoughReplicas: with the ISR below min.insync.replicas
// acks=all gets NOT_ENOUGH_REPLICAS and nothing is appended; a producer
// that keeps retrying through the outage succeeds once a follower is back,
// and the log holds its record exactly once.
func TestScenario03NotEnoughReplicas(t *testing.T) {
	t.Run("SetISR", func(t *testing.T) { notEnoughReplicas(t, false) })
	t.Run("lag time", func(t *testing.T) { notEnoughReplicas(t, true) })
}

// notEnoughReplicas pauses both followers before they first fetch, then
// takes them out of the ISR with SetISR or lets the leader drop them once
// replica.lag.time.max.ms (Kafka's 30 s, on a manual clock) passes.
func notEnoughReplicas(t *testing.T, byLag bool) {
	c := manualCluster(t, Config{})
	const topic = "s3"
	scMust(t, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
	for _, id := range []int32{2, 3} {
		scMust(t, c.PauseReplica(topic, 0, id))
	}
	if byLag {
		c.AdvanceClock(30 * time.Second)
		if isr := scPartition(t, c, topic, 0).ISR; len(isr) != 3 {
			t.Fatalf("ISR %v before the lag time passed, want all three", isr)
		}
		c.AdvanceClock(15 * time.Second) // the next ISR check
		if isr := scPartition(t, c, topic, 0).ISR; len(isr) != 1 {
			t.Fatalf("ISR %v once the lag time passed, want the leader alone", isr)
		}
	} else {
		scMust(t, c.SetISR(topic, 0, []int32{1}))
	}
	ctx := testContext(t)
	why := map[bool]string{false: "manual", true: "lag"}[byLag]
	for _, id := range []int32{2, 3} {
		e, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventISRShrunk && e.Topic == topic && e.Broker == id })
		if err != nil || e.Reason != why {
			t.Fatalf("isr_shrunk of %d: %+v, %v; want reason %s", id, e, err, why)
		}
	}

	r, err := scProduce(ctx, scAcksClient(t, c, -1), 1, topic, -1, 5000, scBatch(t, -1, -1, -1, "raw"))
	if err != nil || r.ErrorCode != kerr.NotEnoughReplicas.Code || r.BaseOffset != -1 {
		t.Fatalf("raw acks=all produce: %+v, %v; want NOT_ENOUGH_REPLICAS", r, err)
	}
	// acks=1 does not look at min.insync.replicas.
	if r, err := scProduce(ctx, scAcksClient(t, c, 1), 1, topic, 1, 5000, scBatch(t, -1, -1, -1, "acks1")); err != nil || r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("raw acks=1 produce: %+v, %v; want success at 0", r, err)
	}
	noRetry := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err := noRetry.ProduceSync(ctx, kgo.StringRecord("no-retry")).FirstErr(); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("franz-go without retries: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if ps := scPartition(t, c, topic, 0); ps.Replicas[0].LogEndOffset != 1 {
		t.Fatalf("leader LEO %d after the refusals, want 1 (only the acks=1 record)", ps.Replicas[0].LogEndOffset)
	}

	// An idempotent producer with retries starts during the outage.
	writes := new(scProduceWrites)
	retrying := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.WithHooks(writes))
	type result struct {
		r   *kgo.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := retrying.ProduceSync(ctx, kgo.StringRecord("patient")).First()
		done <- result{r, err}
	}()
	waitFor(t, 5*time.Second, "the producer to retry at least twice", func() bool { return writes.n.Load() >= 3 })
	if ps := scPartition(t, c, topic, 0); ps.Replicas[0].LogEndOffset != 1 {
		t.Fatalf("leader LEO %d while refusing, want 1", ps.Replicas[0].LogEndOffset)
	}
	select {
	case res := <-done:
		t.Fatalf("the producer finished during the outage: %v", res.err)
	default:
	}

	since := evLastSeq(c)
	scMust(t, c.ResumeReplica(topic, 0, 2)) // one follower is enough
	res := <-done
	if res.err != nil || res.r.Offset != 1 {
		t.Fatalf("retrying producer: offset %d, error %v; want success at 1", res.r.Offset, res.err)
	}
	scMust(t, c.ResumeReplica(topic, 0, 3))
	scWaitSettled(t, c, topic, 0, 2)
	scLogsAre(t, c, topic, "acks1", "patient")
	scRecordsAre(t, "consumer", scConsume(t, c, topic, 2), "acks1", "patient")
	// Follower 2 rejoins first (its return let the producer through),
	// then follower 3.
	for _, id := range []int32{2, 3} {
		if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventISRExpanded && e.Topic == topic && e.Broker == id }); err != nil {
			t.Fatal(err)
		}
	}
	evCheckStory(t, c, since, topic,
		"replica_resumed s3/0 2",
		"isr_expanded s3/0 broker 2 isr [1 2] (caught up)",
		"replica_resumed s3/0 3",
		"isr_expanded s3/0 broker 3 isr [1 2 3] (caught up)")
}

// TestScenario04ISRShrinksAfterAppend: an acks=all record is appended, then
// the ISR falls below min.insync.replicas while the request waits. Since
// Kafka 3.7 the HW freezes and the request expires with REQUEST_TIMED_OUT;
// with LegacyMinISR the HW moves and the answer is
// NOT_ENOUGH_REPLICAS_AFTER_APPEND. Either way the record stays in the
// leader's log and a consumer sees it once the ISR heals.
func TestScenario04ISRShrinksAfterAppend(t *testing.T) {
	for _, tc := range []struct {
		name          string
		legacy        bool
		want          *kerr.Error
		hwAfterShrink int64
	}{
		{"3.7+ HW frozen", false, kerr.RequestTimedOut, 0},
		{"legacy min ISR", true, kerr.NotEnoughReplicasAfterAppend, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const timeout = 30 * time.Second // request.timeout.ms, on a manual clock
			c := manualCluster(t, Config{LegacyMinISR: tc.legacy})
			const topic = "s4"
			scMust(t, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
			for _, id := range []int32{2, 3} {
				scMust(t, c.PauseReplica(topic, 0, id))
			}
			ctx := testContext(t)
			cl := scAcksClient(t, c, -1)
			type result struct {
				r   kmsg.ProduceResponseTopicPartition
				err error
			}
			done := make(chan result, 1)
			batch := scBatch(t, -1, -1, -1, "parked")
			timers, _ := c.Clock().Pending()
			go func() {
				r, err := scProduce(ctx, cl, 1, topic, -1, int32(timeout.Milliseconds()), batch)
				done <- result{r, err}
			}()
			waitFor(t, 5*time.Second, "the leader to append and park the request", func() bool {
				n, _ := c.Clock().Pending()
				return scPartition(t, c, topic, 0).Replicas[0].LogEndOffset == 1 && n > timers
			})
			since := evLastSeq(c)
			scMust(t, c.SetISR(topic, 0, []int32{1}))
			if ps := scPartition(t, c, topic, 0); ps.HighWatermark != tc.hwAfterShrink {
				t.Errorf("HW %d after the shrink, want %d", ps.HighWatermark, tc.hwAfterShrink)
			}
			if !tc.legacy {
				// The frozen HW holds the request until its timeout passes.
				c.AdvanceClock(timeout - time.Millisecond)
				select {
				case res := <-done:
					t.Fatalf("answered before the timeout: %+v", res)
				default:
				}
				c.AdvanceClock(time.Millisecond)
			}
			res := <-done
			if res.err != nil || res.r.ErrorCode != tc.want.Code {
				t.Fatalf("answer: error %v, code %v; want %v", res.err, kerr.ErrorForCode(res.r.ErrorCode), tc.want)
			}
			ps := scPartition(t, c, topic, 0)
			if ps.Replicas[0].LogEndOffset != 1 || ps.HighWatermark != tc.hwAfterShrink {
				t.Fatalf("after the answer: leader LEO %d HW %d; want the record kept, HW %d", ps.Replicas[0].LogEndOffset, ps.HighWatermark, tc.hwAfterShrink)
			}

			for _, id := range []int32{2, 3} {
				scMust(t, c.ResumeReplica(topic, 0, id))
			}
			scWaitSettled(t, c, topic, 0, 1)
			scRecordsAre(t, "consumer", scConsume(t, c, topic, 1), "parked")
			// Both followers leave by hand and rejoin once caught up, in
			// whichever order their fetchers run.
			for _, id := range []int32{2, 3} {
				if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventISRExpanded && e.Topic == topic && e.Broker == id }); err != nil {
					t.Fatal(err)
				}
			}
			story := evStory(c, since, topic)
			if len(story) != 6 || story[0] != "isr_shrunk s4/0 broker 2 isr [1] (manual)" || story[1] != "isr_shrunk s4/0 broker 3 isr [1] (manual)" ||
				story[2] != "replica_resumed s4/0 2" || story[3] != "replica_resumed s4/0 3" ||
				!strings.HasPrefix(story[4], "isr_expanded s4/0") || !strings.HasPrefix(story[5], "isr_expanded s4/0") {
				t.Errorf("events: %q", story)
			}
		})
	}
}

// TestScenario05LeaderDiesAfterReplicatingBeforeAnswering: an acks=all
// record reaches follower 2 but the HW cannot pass it (follower 3 is held
// back) and the leader crashes before answering. Follower 2, first in
// line, takes over with the record. A non-idempotent retry of the same
// batch duplicates it; an idempotent retry gets the original offset.
func TestScenario05LeaderDiesAfterReplicatingBeforeAnswering(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-idempotent retry duplicates", true: "idempotent retry dedupes"}[idempotent], func(t *testing.T) {
			c := NewTestCluster(t, Config{})
			const topic = "s5"
			scMust(t, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"})) // replicas 1, 2, 3
			ctx := testContext(t)
			pid, epoch, seq := int64(-1), int16(-1), int32(-1)
			if idempotent {
				req := kmsg.NewPtrInitProducerIDRequest()
				resp, err := req.RequestWith(ctx, scClient(t, c))
				if err != nil || resp.ErrorCode != 0 {
					t.Fatalf("InitProducerID: %+v, %v", resp, err)
				}
				pid, epoch, seq = resp.ProducerID, resp.ProducerEpoch, 0
			}
			batch := scBatch(t, pid, epoch, seq, "once")
			sent := slices.Clone(batch)

			scMust(t, c.PauseReplica(topic, 0, 3))
			cl := scAcksClient(t, c, -1)
			type result struct {
				r   kmsg.ProduceResponseTopicPartition
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := scProduce(ctx, cl, 1, topic, -1, 30_000, batch)
				done <- result{r, err}
			}()
			waitFor(t, 5*time.Second, "follower 2 to replicate the record", func() bool {
				ps := scPartition(t, c, topic, 0)
				return ps.Replicas[0].LogEndOffset == 1 && ps.Replicas[1].LogEndOffset == 1
			})
			if ps := scPartition(t, c, topic, 0); ps.HighWatermark != 0 {
				t.Fatalf("HW %d with follower 3 held back, want 0", ps.HighWatermark)
			}
			scMust(t, c.StopBroker(1, StopCrash))
			if res := <-done; res.err == nil {
				t.Fatalf("the producer got an answer from the crashed leader: %+v", res.r)
			}
			ps := scPartition(t, c, topic, 0)
			if ps.Leader != 2 || ps.Replicas[1].LogEndOffset != 1 {
				t.Fatalf("after the crash: %+v; want follower 2 leading with the record", ps)
			}
			scMust(t, c.ResumeReplica(topic, 0, 3))

			if !slices.Equal(batch, sent) {
				t.Fatal("the batch bytes changed on the way")
			}
			r, err := scProduce(ctx, cl, 2, topic, -1, 5000, batch)
			if err != nil || r.ErrorCode != 0 {
				t.Fatalf("retry: %+v, %v", r, err)
			}
			want, wantOffset := []string{"once", "once"}, int64(1)
			if idempotent {
				want, wantOffset = []string{"once"}, 0
			}
			if r.BaseOffset != wantOffset {
				t.Errorf("retry acknowledged at %d, want %d", r.BaseOffset, wantOffset)
			}
			scMust(t, c.StartBroker(1))
			scWaitSettled(t, c, topic, 0, int64(len(want)))
			scLogsAre(t, c, topic, want...)
			scRecordsAre(t, "consumer", scConsume(t, c, topic, len(want)), want...)
		})
	}
}

// TestScenario06FollowersConvergeOnTheNewLeader is the seed's example: the
// leader has records 4 and 5, follower A too, follower B only 4; the
// leader dies and B is elected. A truncates 5 and every log converges.
func TestScenario06FollowersConvergeOnTheNewLeader(t *testing.T) {
	c := NewTestCluster(t, Config{})
	const topic = "s6"
	const b, a = 2, 3 // replicas 1, 2, 3: B is first in line after the leader
	scMust(t, c.CreateTopic(topic, 1, 3, nil))
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for i := range 4 {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord("r"+strconv.Itoa(i))).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 4)

	scMust(t, c.PauseReplica(topic, 0, a))
	scMust(t, c.PauseReplica(topic, 0, b))
	scMust(t, prod.ProduceSync(ctx, kgo.StringRecord("r4")).FirstErr())
	scMust(t, c.ResumeReplica(topic, 0, b))
	waitFor(t, 5*time.Second, "B to copy record 4", func() bool { return scPartition(t, c, topic, 0).Replicas[b-1].LogEndOffset == 5 })
	scMust(t, c.PauseReplica(topic, 0, b))
	scMust(t, prod.ProduceSync(ctx, kgo.StringRecord("r5")).FirstErr())
	scMust(t, c.ResumeReplica(topic, 0, a))
	waitFor(t, 5*time.Second, "A to copy record 5", func() bool { return scPartition(t, c, topic, 0).Replicas[a-1].LogEndOffset == 6 })
	scMust(t, c.PauseReplica(topic, 0, a))
	ps := scPartition(t, c, topic, 0)
	if got := []int64{ps.Replicas[0].LogEndOffset, ps.Replicas[1].LogEndOffset, ps.Replicas[2].LogEndOffset}; !slices.Equal(got, []int64{6, 5, 6}) {
		t.Fatalf("LEOs of brokers 1, 2, 3: %v, want [6 5 6]", got)
	}

	since := evLastSeq(c)
	scMust(t, c.StopBroker(1, StopCrash))
	ps = scPartition(t, c, topic, 0)
	if ps.Leader != b {
		t.Fatalf("leader %d after the crash, want B (%d)", ps.Leader, b)
	}
	scMust(t, c.ResumeReplica(topic, 0, a))
	scMust(t, c.ResumeReplica(topic, 0, b))
	r, err := prod.ProduceSync(ctx, kgo.StringRecord("r5'")).First()
	if err != nil || r.Offset != 5 {
		t.Fatalf("produce on B: offset %d, error %v; want 5", r.Offset, err)
	}
	waitFor(t, 5*time.Second, "A to converge on B", func() bool {
		ps := scPartition(t, c, topic, 0)
		return ps.Replicas[a-1].LogEndOffset == 6 && ps.Replicas[a-1].HighWatermark == 6 && len(ps.ISR) == 2
	})
	want := []string{"r0", "r1", "r2", "r3", "r4", "r5'"}
	for _, id := range []int32{a, b} {
		if got := scValues(scReplicaLog(t, c, topic, 0, id)); !slices.Equal(got, want) {
			t.Errorf("broker %d holds %q, want %q", id, got, want)
		}
		if got := scValues(scFetchFrom(t, c, id, topic)); !slices.Equal(got, want) {
			t.Errorf("consumer fetch from broker %d: %q, want %q", id, got, want)
		}
	}
	// The old leader truncates its record 5 when it returns.
	scMust(t, c.StartBroker(1))
	scWaitSettled(t, c, topic, 0, 6)
	scLogsAre(t, c, topic, want...)
	// Every replica stores the very same batches.
	p := c.partition(topic, 0)
	p.mu.Lock()
	for _, r := range p.st.Replicas()[1:] {
		for i, bt := range r.Log().Batches() {
			if string(bt.Raw) != string(p.st.Replicas()[0].Log().Batches()[i].Raw) {
				t.Errorf("broker %d batch %d differs from broker 1's", r.Broker, i)
			}
		}
	}
	p.mu.Unlock()
	scRecordsAre(t, "consumer", scConsume(t, c, topic, 6), want...)
	// B took over cleanly; A and then the old leader cut their record 5;
	// it was above the HW, so nothing committed was lost.
	var story []string
	for _, e := range c.Events(since) {
		if e.Topic == topic && (e.Type == EventLeaderElected || e.Type == EventLogTruncated || e.Type == EventRecordsLost) {
			story = append(story, evLine(e))
		}
	}
	if want := []string{
		"leader_elected s6/0 leader 2 (was 1) epoch 1 isr [2 3] (broker fenced)",
		"log_truncated s6/0 broker 3 6->5 (leader epoch)",
		"log_truncated s6/0 broker 1 6->5 (leader epoch)",
	}; !slices.Equal(story, want) {
		t.Errorf("events:\n got %q\nwant %q", story, want)
	}
}

// TestScenario07KIP101 reproduces both KIP-101 scenarios with legacy HW
// truncation and shows that epoch truncation (the default) avoids them.
func TestScenario07KIP101(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		mode := map[bool]string{true: "legacy HW truncation", false: "epoch truncation"}[legacy]
		t.Run("scenario 1 "+mode, func(t *testing.T) { kip101Scenario1(t, legacy) })
		t.Run("scenario 2 "+mode, func(t *testing.T) { kip101Scenario2(t, legacy) })
	}
}

// kip101Scenario1: follower A restarts with a stale HW checkpoint and,
// before it fetches again, leader B dies and A is elected. Truncating to
// the HW on restart loses the committed records; by epoch they survive.
func kip101Scenario1(t *testing.T, legacy bool) {
	// The HW checkpoint never runs (1h), so a crash restarts at HW 0; the
	// controller takes a minute to notice a crash, so A restarts before
	// being fenced and stays in the ISR.
	c := NewTestCluster(t, Config{LegacyHWTruncation: legacy, HWCheckpointInterval: time.Hour, BrokerSessionTimeout: time.Minute})
	const topic = "kip101-1"
	const b, a = 1, 2
	scMust(t, c.CreateTopic(topic, 1, 2, nil)) // replicas 1 (B, leader), 2 (A)
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	for _, v := range []string{"m1", "m2"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr()) // committed and acknowledged
	}
	scWaitSettled(t, c, topic, 0, 2)

	scMust(t, c.PauseReplica(topic, 0, a)) // A will not fetch after its restart
	scMust(t, c.StopBroker(a, StopCrash))
	scMust(t, c.StartBroker(a))
	ps := scPartition(t, c, topic, 0)
	wantA := int64(2)
	if legacy {
		wantA = 0 // cut to its checkpointed HW at once
	}
	if ps.Replicas[a-1].LogEndOffset != wantA || len(ps.ISR) != 2 {
		t.Fatalf("A after its restart: %+v; want LEO %d, still in the ISR", ps, wantA)
	}

	scMust(t, c.StopBroker(b, StopCrash))
	if _, err := c.ElectLeader(topic, 0, a, false); err != nil {
		t.Fatal(err)
	}
	// The events say what happened to the committed m1 and m2.
	var lost []string
	for _, e := range c.Events(0) {
		if e.Topic == topic && (e.Type == EventRecordsLost || e.Type == EventLogTruncated) {
			lost = append(lost, evLine(e))
		}
	}
	var wantLost []string
	if legacy {
		wantLost = []string{
			"log_truncated kip101-1/0 broker 2 2->0 (high watermark)",
			"records_lost kip101-1/0 broker 2 0->2 (new leader lacks acknowledged records)",
		}
	}
	if !slices.Equal(lost, wantLost) {
		t.Errorf("truncations and losses: %q, want %q", lost, wantLost)
	}
	// The controller would fence B after the session timeout; do it now
	// so that acks=all does not wait for it.
	scMust(t, c.SetISR(topic, 0, []int32{a}))
	scMust(t, c.ResumeReplica(topic, 0, a))
	r, err := prod.ProduceSync(ctx, kgo.StringRecord("m3")).First()
	if err != nil || r.Offset != wantA {
		t.Fatalf("produce on A: offset %d, error %v; want %d", r.Offset, err, wantA)
	}
	want := []string{"m1", "m2", "m3"}
	if legacy {
		want = []string{"m3"} // the committed m1 and m2 are gone
	}
	scMust(t, c.StartBroker(b))
	scWaitSettled(t, c, topic, 0, int64(len(want)))
	scLogsAre(t, c, topic, want...)
	scRecordsAre(t, "consumer", scConsume(t, c, topic, len(want)), want...)
}

// kip101Scenario2: both replicas lose power; B comes back with less than A
// (A had flushed m2, B had not), leads and writes m3 at offset 1; then A
// returns with an HW checkpoint of 2. Truncating to the HW keeps A's m2 at
// offset 1 while B has m3 there, for good; by epoch A truncates and
// converges.
func kip101Scenario2(t *testing.T, legacy bool) {
	// Nothing is flushed or checkpointed except by clean shutdowns, so
	// each replica's recovery point and HW checkpoint are set exactly.
	c := NewTestCluster(t, Config{LegacyHWTruncation: legacy, HWCheckpointInterval: time.Hour})
	const topic = "kip101-2"
	const a, b = 1, 2
	scMust(t, c.CreateTopic(topic, 1, 2, nil)) // replicas 1 (A, leader), 2 (B)
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	restartClean := func(id int32, leo int64) {
		t.Helper()
		scMust(t, c.StopBroker(id, StopClean))
		scMust(t, c.StartBroker(id))
		scWaitSettled(t, c, topic, 0, leo)
	}

	scMust(t, prod.ProduceSync(ctx, kgo.StringRecord("m1")).FirstErr())
	scWaitSettled(t, c, topic, 0, 1)
	restartClean(b, 1) // B: m1 on disk
	scMust(t, prod.ProduceSync(ctx, kgo.StringRecord("m2")).FirstErr())
	scWaitSettled(t, c, topic, 0, 2)
	restartClean(a, 2) // A: m1, m2 on disk, HW 2 checkpointed; B leads now

	scMust(t, c.StopBroker(a, StopPowerLoss))
	scMust(t, c.StopBroker(b, StopPowerLoss))
	ps := scPartition(t, c, topic, 0)
	if ps.Leader != -1 || ps.Replicas[a-1].LogEndOffset != 2 || ps.Replicas[b-1].LogEndOffset != 1 {
		t.Fatalf("after the power loss: %+v; want no leader, A at LEO 2, B at 1", ps)
	}
	scMust(t, c.StartBroker(b)) // the last ISR member: it leads again
	if ps := scPartition(t, c, topic, 0); ps.Leader != b {
		t.Fatalf("leader %d after B's restart, want B", ps.Leader)
	}
	// m2 was committed (HW 2) but B lost it with the power: whatever A
	// does later, offset 1 no longer holds it on the leader.
	if e, err := c.WaitFor(ctx, RecordsLost(topic, 0)); err != nil || e.From != 1 || e.To != 2 || e.Broker != b {
		t.Errorf("records_lost %s, %v; want 1->2 on B", evLine(e), err)
	}
	r, err := prod.ProduceSync(ctx, kgo.StringRecord("m3")).First()
	if err != nil || r.Offset != 1 {
		t.Fatalf("produce on B: offset %d, error %v; want 1", r.Offset, err)
	}
	scMust(t, c.StartBroker(a))
	scWaitSettled(t, c, topic, 0, 2)

	// Both replicas have LEO 2 and HW 2, so the state alone does not show
	// the divergence; what each serves a consumer (Fetch v12) does.
	onA, onB := scFetchFrom(t, c, a, topic), scFetchFrom(t, c, b, topic)
	if legacy {
		if got := scValues(onA); !slices.Equal(got, []string{"m1", "m2"}) {
			t.Errorf("A serves %v, want the diverged [m1 m2]", onA)
		}
		if got := scValues(onB); !slices.Equal(got, []string{"m1", "m3"}) {
			t.Errorf("B serves %v, want [m1 m3]", onB)
		}
		if len(onA) == 2 && len(onB) == 2 && onA[1].Epoch >= onB[1].Epoch {
			t.Errorf("offset 1: A's batch has epoch %d, B's %d; want A's older", onA[1].Epoch, onB[1].Epoch)
		}
		return
	}
	if got := scValues(onB); !slices.Equal(got, []string{"m1", "m3"}) || !slices.Equal(onA, onB) {
		t.Errorf("A serves %v, B %v; want the same [m1 m3] with the same epochs", onA, onB)
	}
	scLogsAre(t, c, topic, "m1", "m3")
}

// scWaitDataLoss polls cons until franz-go reports an ErrDataLoss for
// topic/0, failing on any other fetch error. It returns the loss, the
// records of earlier polls and the records of the poll that reported it.
func scWaitDataLoss(t *testing.T, cons *kgo.Client, topic string) (dl *kgo.ErrDataLoss, before, with []*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	for {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go reported no data loss (polled %v meanwhile)", scDescribe(before))
		}
		for _, e := range fs.Errors() {
			if !errors.As(e.Err, &dl) {
				t.Fatalf("fetch error on %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
			if e.Topic != topic || e.Partition != 0 {
				t.Fatalf("data loss on %s/%d", e.Topic, e.Partition)
			}
		}
		if dl != nil {
			return dl, before, fs.Records()
		}
		before = append(before, fs.Records()...)
	}
}

func scDescribe(rs []*kgo.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%d:%q(e%d)", r.Offset, r.Value, r.LeaderEpoch))
	}
	return out
}

// scPollValues polls cons until it has n more records.
func scPollValues(t *testing.T, cons *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("polled %v, want %d records", scDescribe(recs), n)
		}
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		recs = append(recs, fs.Records()...)
	}
	return recs
}

// TestScenario08PowerLossOfAllReplicas: every replica loses power with
// nothing flushed (Kafka's default flush policy), so records that were
// committed and consumed are gone and their offsets are reused.
//
// What franz-go (v1.22.3) does: its consumer remembers the leader epoch
// of the last batch it consumed. When metadata shows a new leader or epoch
// (or a fetch answers FENCED_LEADER_EPOCH) it holds the partition and
// sends OffsetForLeaderEpoch for that epoch (KIP-320, pkg/kgo
// topics_and_partitions.go migrateCursorTo, consumer.go
// loadEpochsForBrokerLoad). An end offset below its position makes it
// inject a fetch error of type *kgo.ErrDataLoss (ConsumedTo = its
// position, ResetTo = the end offset) into PollFetches, possibly in the
// same poll as the first records after it, and resume at ResetTo. There is
// no consumer-side OnDataLoss callback: kgo.ProducerOnDataLossDetected is
// for producers.
func TestScenario08PowerLossOfAllReplicas(t *testing.T) {
	c := NewTestCluster(t, Config{})
	const topic = "s8"
	scMust(t, c.CreateTopic(topic, 1, 3, nil))
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var old []string
	for i := range 5 {
		v := "old" + strconv.Itoa(i)
		old = append(old, v)
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 5)
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
	scRecordsAre(t, "before the power loss", scPollValues(t, cons, 5), old...)

	// The leader goes first and leadership moves on; the last ISR member
	// (3) goes last and stays in the ISR, so it is the one that can lead.
	since := evLastSeq(c)
	for _, id := range []int32{1, 2, 3} {
		scMust(t, c.StopBroker(id, StopPowerLoss))
	}
	ps := scPartition(t, c, topic, 0)
	for _, r := range ps.Replicas {
		if r.LogEndOffset != 0 {
			t.Fatalf("broker %d kept LEO %d through the power loss; nothing was flushed", r.Broker, r.LogEndOffset)
		}
	}
	if ps.Leader != -1 || !slices.Equal(ps.ISR, []int32{3}) {
		t.Fatalf("after the power loss: leader %d ISR %v; want none and [3]", ps.Leader, ps.ISR)
	}
	for _, id := range []int32{1, 2} {
		scMust(t, c.StartBroker(id))
	}
	if ps := scPartition(t, c, topic, 0); ps.Leader != -1 {
		t.Fatalf("broker %d leads though not in the ISR", ps.Leader)
	}
	scMust(t, c.StartBroker(3))
	ps = scPartition(t, c, topic, 0)
	if ps.Leader != 3 {
		t.Fatalf("leader %d, want 3", ps.Leader)
	}
	evCheckStoryPrefix(t, c, since, topic,
		"broker_stopped 1 powerloss",
		"log_truncated s8/0 broker 1 5->0 (power loss)",
		"broker_fenced 1",
		"isr_shrunk s8/0 broker 1 isr [2 3] (broker fenced)",
		"leader_elected s8/0 leader 2 (was 1) epoch 1 isr [2 3] (broker fenced)",
		"broker_stopped 2 powerloss",
		"log_truncated s8/0 broker 2 5->0 (power loss)",
		"broker_fenced 2",
		"isr_shrunk s8/0 broker 2 isr [3] (broker fenced)",
		"leader_elected s8/0 leader 3 (was 2) epoch 2 isr [3] (broker fenced)",
		"broker_stopped 3 powerloss",
		"log_truncated s8/0 broker 3 5->0 (power loss)",
		"broker_fenced 3",
		"partition_leaderless s8/0 leader -1 (was 3) epoch 3 isr [3] (broker fenced)",
		"broker_started 1",
		"broker_started 2",
		"broker_started 3",
		"leader_elected s8/0 leader 3 (was -1) epoch 4 isr [3] (broker started)",
		"records_lost s8/0 broker 3 0->5 (new leader lacks acknowledged records)",
	)
	for _, v := range []string{"new0", "new1"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 2)

	dl, before, got := scWaitDataLoss(t, cons, topic)
	if dl.ConsumedTo != 5 || dl.ConsumedToEpoch != 0 || dl.ResetTo != 0 {
		t.Errorf("data loss %+v; want consumed to 5 at epoch 0, reset to 0", *dl)
	}
	if len(before) != 0 {
		t.Errorf("polled %v before the data loss was reported", scDescribe(before))
	}
	// It resumes at ResetTo and reads the records that reuse the offsets.
	got = append(got, scPollValues(t, cons, 2-len(got))...)
	scRecordsAre(t, "after the data loss", got, "new0", "new1")
	if got[0].LeaderEpoch != ps.LeaderEpoch {
		t.Errorf("new records carry epoch %d, want %d", got[0].LeaderEpoch, ps.LeaderEpoch)
	}
}

// TestScenario09UncleanElection: a lagging replica outside the ISR becomes
// leader, records the consumer saw are gone, their offsets are reused, the
// consumer detects it as in scenario 8, and the old replicas truncate to
// the new leader's log when they return.
func TestScenario09UncleanElection(t *testing.T) {
	for _, how := range []string{"unclean.leader.election.enable", "ElectLeader unclean"} {
		t.Run(how, func(t *testing.T) {
			c := NewTestCluster(t, Config{})
			const topic = "s9"
			cfg := map[string]string{}
			if how == "unclean.leader.election.enable" {
				cfg["unclean.leader.election.enable"] = "true"
			}
			scMust(t, c.CreateTopic(topic, 1, 3, cfg)) // replicas 1, 2, 3
			ctx := testContext(t)
			prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
			for _, v := range []string{"a", "b"} {
				scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
			}
			scWaitSettled(t, c, topic, 0, 2)
			// Replica 3 stops fetching and leaves the ISR; 1 and 2 go on.
			scMust(t, c.PauseReplica(topic, 0, 3))
			scMust(t, c.SetISR(topic, 0, []int32{1, 2}))
			for _, v := range []string{"c", "d", "e"} {
				scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
			}
			cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
			scRecordsAre(t, "before the election", scPollValues(t, cons, 5), "a", "b", "c", "d", "e")

			if how == "unclean.leader.election.enable" {
				// The ISR dies; the controller elects the lagging 3.
				scMust(t, c.StopBroker(1, StopCrash))
				scMust(t, c.StopBroker(2, StopCrash))
			} else {
				if _, err := c.ElectLeader(topic, 0, 3, false); !errors.Is(err, kerr.EligibleLeadersNotAvailable) {
					t.Fatalf("clean election of a replica outside the ISR: %v", err)
				}
				if _, err := c.ElectLeader(topic, 0, 3, true); err != nil {
					t.Fatal(err)
				}
			}
			// The election's event holds the ISR it set: a live follower
			// (1 in the ElectLeader case) may rejoin right after.
			if e, err := c.WaitFor(ctx, LeaderElectedOn(topic, 0, 3)); err != nil || !e.Unclean || !slices.Equal(e.ISR, []int32{3}) {
				t.Fatalf("leader_elected of 3: %+v, %v; want unclean with ISR [3]", e, err)
			}
			// c, d and e were committed by 1 and 2; 3 never had them.
			if e, err := c.WaitFor(ctx, RecordsLost(topic, 0)); err != nil || e.From != 2 || e.To != 5 || e.Broker != 3 || e.Reason != "unclean election" {
				t.Errorf("records_lost %+v, %v; want 2->5 on broker 3 (unclean election)", e, err)
			}
			if ps := scPartition(t, c, topic, 0); ps.Leader != 3 {
				t.Fatalf("after the unclean election: leader %d, want 3", ps.Leader)
			}
			scMust(t, c.ResumeReplica(topic, 0, 3))
			r, err := prod.ProduceSync(ctx, kgo.StringRecord("x")).First()
			if err != nil || r.Offset != 2 {
				t.Fatalf("produce on the unclean leader: offset %d, error %v; want the reused offset 2", r.Offset, err)
			}

			dl, before, got := scWaitDataLoss(t, cons, topic)
			if dl.ConsumedTo != 5 || dl.ConsumedToEpoch != 0 || dl.ResetTo != 2 {
				t.Errorf("data loss %+v; want consumed to 5 at epoch 0, reset to 2", *dl)
			}
			if len(before) != 0 {
				t.Errorf("polled %v before the data loss was reported", scDescribe(before))
			}
			got = append(got, scPollValues(t, cons, 1-len(got))...)
			if len(got) != 1 || got[0].Offset != 2 || string(got[0].Value) != "x" {
				t.Errorf("after the data loss: %v, want x at 2", got)
			}

			if how == "unclean.leader.election.enable" {
				scMust(t, c.StartBroker(1))
				scMust(t, c.StartBroker(2))
			}
			scWaitSettled(t, c, topic, 0, 3)
			scLogsAre(t, c, topic, "a", "b", "x")
		})
	}
}

// TestScenario10RandomFailuresKeepAcknowledgedRecords runs a seeded random
// sequence of crashes, clean stops, restarts, follower pauses and resumes
// and clean elections under an idempotent acks=all producer (rf=3,
// min.insync.replicas=2) and a consumer. Afterwards every record the
// consumer saw is still at the offset it saw it at, and every acknowledged
// record is there exactly once.
func TestScenario10RandomFailuresKeepAcknowledgedRecords(t *testing.T) {
	const topic, partitions, steps = "s10", 2, 60
	c := NewTestCluster(t, Config{ReplicaLagTimeMax: 200 * time.Millisecond})
	scMust(t, c.CreateTopic(topic, partitions, 3, map[string]string{"min.insync.replicas": "2"}))
	rng := rand.New(rand.NewPCG(2024, 10))
	prod := scStartProducer(t, c, topic, partitions)

	// The consumer runs throughout and remembers what it saw where.
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(50*time.Millisecond))
	var seenMu sync.Mutex
	seen := map[scAck]string{}
	var consErrs []error
	consCtx, stopConsumer := context.WithCancel(context.Background())
	consDone := make(chan struct{})
	go func() {
		defer close(consDone)
		for consCtx.Err() == nil {
			fs := cons.PollFetches(consCtx)
			seenMu.Lock()
			for _, e := range fs.Errors() {
				if !errors.Is(e.Err, context.Canceled) {
					consErrs = append(consErrs, fmt.Errorf("%s/%d: %w", e.Topic, e.Partition, e.Err))
				}
			}
			fs.EachRecord(func(r *kgo.Record) {
				k := scAck{r.Partition, r.Offset}
				if v, ok := seen[k]; ok && v != string(r.Value) {
					consErrs = append(consErrs, fmt.Errorf("partition %d offset %d seen as %q and %q", r.Partition, r.Offset, v, r.Value))
				}
				seen[k] = string(r.Value)
			})
			seenMu.Unlock()
		}
	}()

	down := map[int32]bool{}
	paused := map[scAck]bool{} // {partition, broker}
	deadline := time.Now().Add(4 * time.Second)
	var log []string
	for step := 0; step < steps && time.Now().Before(deadline); step++ {
		p := int32(rng.IntN(partitions))
		id := int32(rng.IntN(3) + 1)
		var did string
		switch rng.IntN(6) {
		case 0, 1: // stop a broker, at most two at a time
			// Not powerloss: losing the unflushed tail of the last ISR
			// member loses acknowledged records in Kafka too (scenario 8).
			if len(down) < 2 && !down[id] {
				mode := StopCrash
				if rng.IntN(3) == 0 {
					mode = StopClean
				}
				scMust(t, c.StopBroker(id, mode))
				down[id] = true
				did = fmt.Sprintf("stop %d %s", id, mode)
			}
		case 2: // restart
			for d := range down {
				scMust(t, c.StartBroker(d))
				delete(down, d)
				did = fmt.Sprintf("start %d", d)
				break
			}
		case 3: // pause or resume a follower
			k := scAck{p, int64(id)}
			if paused[k] {
				scMust(t, c.ResumeReplica(topic, p, id))
				delete(paused, k)
				did = fmt.Sprintf("resume %d/%d", p, id)
			} else if scPartition(t, c, topic, p).Leader != id {
				scMust(t, c.PauseReplica(topic, p, id))
				paused[k] = true
				did = fmt.Sprintf("pause %d/%d", p, id)
			}
		case 4: // Kafka's own clean choice of another leader
			if l, err := c.ElectLeader(topic, p, -1, false); err == nil {
				did = fmt.Sprintf("elect %d: %d", p, l)
			}
		case 5: // a chosen replica, refused unless it is live and in sync
			if _, err := c.ElectLeader(topic, p, id, false); err == nil {
				did = fmt.Sprintf("elect %d: %d", p, id)
			} else if err := c.ElectPreferredLeader(topic, p); err == nil {
				did = fmt.Sprintf("elect %d: preferred", p)
			}
		}
		if did != "" {
			log = append(log, did)
		}
		from := prod.n.Load()
		scAwait(100*time.Millisecond, func() bool { return prod.n.Load() >= from+10 })
	}
	t.Logf("steps: %v", log)

	// Heal everything and let the producer finish.
	for d := range down {
		scMust(t, c.StartBroker(d))
	}
	for k := range paused {
		scMust(t, c.ResumeReplica(topic, k.partition, int32(k.offset)))
	}
	acked := prod.finish(t)
	for p := range int32(partitions) {
		scWaitSettled(t, c, topic, p, -1)
	}
	final := scConsumeEverything(t, c, topic, partitions)
	// Let the running consumer catch up to the end before comparing.
	waitFor(t, 5*time.Second, "the running consumer to reach the end", func() bool {
		seenMu.Lock()
		defer seenMu.Unlock()
		return len(seen) >= len(final)
	})
	stopConsumer()
	<-consDone

	seenMu.Lock()
	defer seenMu.Unlock()
	for _, err := range consErrs {
		t.Errorf("consumer: %v", err)
	}
	for k, v := range seen {
		if got, ok := final[k]; !ok || got != v {
			t.Errorf("the consumer saw %q at partition %d offset %d, which now holds %q (present %v)", v, k.partition, k.offset, got, ok)
		}
	}
	if len(final) != len(acked) {
		t.Errorf("the log holds %d records, %d were acknowledged", len(final), len(acked))
	}
	scCheckAcked(t, acked, final)
	t.Logf("%d records acknowledged, %d seen by the running consumer", len(acked), len(seen))
}
