package server

// KIP-101: the HW-based truncation that loses or diverges records, and the
// leader-epoch truncation that fixes it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
