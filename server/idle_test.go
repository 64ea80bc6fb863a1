package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIdleClusterKeepsISR idles a cluster for four
// replica.lag.time.max.ms windows (Kafka's 30 s, on a manual clock) and
// checks that nothing left any ISR: a fresh empty topic, a topic with data,
// a partition whose leader just changed and __consumer_offsets. Followers
// keep fetching empty every replica.fetch.wait.max.ms, as Kafka's long
// polls do, so the leader's view of each stays current. Then a group joins
// and commits and acks=all writes succeed with min.insync.replicas 2, all
// through franz-go.
func TestIdleClusterKeepsISR(t *testing.T) {
	const lag = 30 * time.Second
	c := manualCluster(t, Config{MinInsyncReplicas: 2})
	ctx := testContext(t)
	for _, name := range []string{"empty", "data", "moved"} {
		if err := c.CreateTopic(name, 3, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(5*time.Second))
	for p := range int32(3) {
		for _, topic := range []string{"data", "moved"} {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatalf("produce %s/%d: %v", topic, p, err)
			}
		}
	}
	// A group commits once, which creates __consumer_offsets.
	consumeAndCommit(t, c, "g1", "data", 3)
	if _, err := c.ElectLeader("moved", 0, 2, false); err != nil {
		t.Fatal(err)
	}

	// Idle for four lag windows, a window at a time: no ISR shrinks, and
	// every follower was caught up within the last fetch wait (500 ms). (A
	// group write left over from the consumer's leave may land on
	// __consumer_offsets meanwhile; its followers then copy it at once.)
	for i := 1; i <= 4; i++ {
		c.AdvanceClock(lag)
		now := c.Now().UnixMilli()
		for _, ts := range c.State().Topics {
			for _, ps := range ts.Partitions {
				if len(ps.ISR) != 3 {
					t.Fatalf("%s/%d: ISR %v after %d windows idle", ts.Name, ps.Partition, ps.ISR, i)
				}
			}
		}
		waitFor(t, 10*time.Second, "every follower caught up within the last fetch wait", func() bool {
			for _, ts := range c.State().Topics {
				for _, ps := range ts.Partitions {
					for _, r := range ps.Replicas {
						if v := r.LeaderView; r.Broker != ps.Leader && (v == nil || v.LogEndOffset != leo(ps) || now-v.LastCaughtUpTimeMs > 500) {
							return false
						}
					}
				}
			}
			return true
		})
	}
	if c.topic(offsetsTopic) == nil {
		t.Fatal("__consumer_offsets was never created")
	}

	// The idle cluster still works: a new group joins and commits on the
	// idle __consumer_offsets, and acks=all writes land on every topic.
	for p := range int32(3) {
		for _, topic := range []string{"empty", "data", "moved"} {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("y")}).FirstErr(); err != nil {
				t.Fatalf("acks=all produce to idle %s/%d: %v", topic, p, err)
			}
		}
	}
	consumeAndCommit(t, c, "g2", "empty", 3)
}

// leo is the leader's log end offset of ps.
func leo(ps PartitionState) int64 {
	for _, r := range ps.Replicas {
		if r.Broker == ps.Leader {
			return r.LogEndOffset
		}
	}
	return -1
}

// consumeAndCommit joins group on topic, consumes n records and commits
// them synchronously.
func consumeAndCommit(t *testing.T, c *Cluster, group, topic string, n int) {
	t.Helper()
	cl := newClient(t, c, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("group %s: poll: %v", group, err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("group %s: commit: %v", group, err)
	}
}
