package server

// The failure scenarios of kafka-semantics.md §10 (and the seed's example),
// each driven through franz-go over TCP against a real cluster: what the
// producer is told, what the consumer sees, and what every replica's log
// holds afterwards, in scenarios*_test.go. Helpers
// (scenarios_helpers_test.go) are prefixed sc so they cannot collide with
// helpers of other test files.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
			// Broker 2 may rejoin before broker 3 is resumed: each
			// follower's expansion comes after its own resume.
			story := evStory(c, since, topic)
			at := func(prefix string) int {
				return slices.IndexFunc(story, func(s string) bool { return strings.HasPrefix(s, prefix) })
			}
			ok := len(story) == 6 && story[0] == "isr_shrunk s4/0 broker 2 isr [1] (manual)" && story[1] == "isr_shrunk s4/0 broker 3 isr [1] (manual)"
			for _, id := range []string{"2", "3"} {
				resumed, expanded := at("replica_resumed s4/0 "+id), at("isr_expanded s4/0 broker "+id+" ")
				ok = ok && resumed > 1 && expanded > resumed
			}
			if !ok {
				t.Errorf("events: %q", story)
			}
		})
	}
}
