package server

// A leader that dies between replicating and answering, and followers that
// converge on the new leader's log.

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
