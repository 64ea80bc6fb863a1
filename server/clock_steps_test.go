package server

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clockScenario builds the same cluster state on a fresh manual clock:
// topic "prop" with partitions 0 [1,2,3] and 1 [2,3,1], records on both,
// follower 3 of partition 0 paused behind, a classic group whose only
// member has gone silent, and broker 2 crashed. advance then moves the
// clock a minute, and the result is the state of the topic and the group.
func clockScenario(t *testing.T, advance func(c *Cluster)) ([]PartitionState, GroupState) {
	t.Helper()
	c := manualCluster(t, Config{BrokerSessionTimeout: 9 * time.Second})
	ctx := testContext(t)
	if err := c.CreateTopic("prop", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.DefaultProduceTopic("prop"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(partition int32, n int) {
		for range n {
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: partition, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	settled := func(partition int32, leo int64, brokers ...int32) {
		waitFor(t, 10*time.Second, "the replicas to settle", func() bool {
			ps, _ := c.Partition("prop", partition)
			for _, b := range brokers {
				if r := replicaOf(ps, b); r.LogEndOffset != leo || r.HighWatermark != ps.HighWatermark {
					return false
				}
			}
			return true
		})
	}
	produce(0, 5)
	produce(1, 5)
	settled(0, 5, 1, 2, 3)
	settled(1, 5, 1, 2, 3)
	if err := c.PauseReplica("prop", 0, 3); err != nil {
		t.Fatal(err)
	}
	produce(0, 3)
	settled(0, 8, 1, 2)

	// A group coordinated by broker 1 (so the crash does not move it),
	// whose only member joins, syncs and falls silent.
	group := ""
	for i := 0; group == ""; i++ {
		if g := "g" + string(rune('a'+i)); coordinator.Partition(g, c.cfg.OffsetsTopicPartitions) == 0 {
			group = g
		}
	}
	raw := newClient(t, c)
	resp := mustJoin(t, ctx, raw, rawJoinRequest(group, "", 20*time.Second, "range", "prop"))
	m := &rawMember{cl: raw, group: group, id: resp.MemberID, generation: resp.Generation}
	if code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("prop", 0, 1)}); code != 0 {
		t.Fatalf("sync: %v", errorName(code))
	}
	if gs, _ := c.Group(group); gs.Coordinator != 1 || gs.State != "Stable" {
		t.Fatalf("group %s: coordinator %d state %s; want 1, Stable", group, gs.Coordinator, gs.State)
	}

	if err := c.StopBroker(2, StopCrash); err != nil {
		t.Fatal(err)
	}
	start := c.Now()
	advance(c)
	if got := c.Now().Sub(start); got != time.Minute {
		t.Fatalf("advanced %v, want a minute", got)
	}
	ts := c.State().Topics
	var parts []PartitionState
	for _, topic := range ts {
		if topic.Name == "prop" {
			parts = topic.Partitions
		}
	}
	gs, _ := c.Group(group)
	return parts, gs
}

// TestAdvanceInStepsEqualsOneStep: a minute in one advance and the same
// minute in many uneven steps leave the cluster in the same state, down to
// the leader's view of every follower, and that state is what a minute of
// Kafka's rules gives.
func TestAdvanceInStepsEqualsOneStep(t *testing.T) {
	oneParts, oneGroup := clockScenario(t, func(c *Cluster) { c.AdvanceClock(time.Minute) })
	stepParts, stepGroup := clockScenario(t, func(c *Cluster) {
		steps := []time.Duration{37 * time.Millisecond, 250 * time.Millisecond, time.Second, 3 * time.Millisecond, 500 * time.Millisecond}
		for i, left := 0, time.Minute; left > 0; i++ {
			d := min(steps[i%len(steps)], left)
			c.AdvanceClock(d)
			left -= d
		}
	})
	if !reflect.DeepEqual(oneParts, stepParts) {
		t.Fatalf("one step:\n%+v\nmany steps:\n%+v", oneParts, stepParts)
	}
	if oneGroup.State != stepGroup.State || oneGroup.Generation != stepGroup.Generation || len(oneGroup.Members) != len(stepGroup.Members) {
		t.Fatalf("group after one step %+v, after many %+v", oneGroup, stepGroup)
	}
	// What a minute does: broker 2 fenced at 9 s (partition 1 moves to 3),
	// the paused follower out of partition 0's ISR at the check after 30 s,
	// the silent member expired at 20 s and the group emptied by the
	// rebalance timeout.
	p0, p1 := oneParts[0], oneParts[1]
	if !slices.Equal(p0.ISR, []int32{1}) || p0.HighWatermark != 8 || p0.Leader != 1 {
		t.Errorf("partition 0: leader %d ISR %v HW %d; want 1, [1], 8", p0.Leader, p0.ISR, p0.HighWatermark)
	}
	if p1.Leader != 3 || p1.LeaderEpoch != 1 || !slices.Equal(p1.ISR, []int32{3, 1}) || p1.HighWatermark != 5 {
		t.Errorf("partition 1: leader %d epoch %d ISR %v HW %d; want 3, 1, [3 1], 5", p1.Leader, p1.LeaderEpoch, p1.ISR, p1.HighWatermark)
	}
	if oneGroup.State != "Empty" || oneGroup.Generation != 2 || len(oneGroup.Members) != 0 {
		t.Errorf("group %s generation %d with %d members; want Empty, 2, none", oneGroup.State, oneGroup.Generation, len(oneGroup.Members))
	}
}
