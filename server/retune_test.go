package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestShortLagTimeAppliesAtOnce creates a topic whose replica.lag.time.max.ms
// is far below the cluster's 30 s: the ISR check loop retunes at once (to
// every 100 ms), so a paused follower leaves the ISR 300 ms later on the
// clock, not at the cluster's next check 15 s away.
func TestShortLagTimeAppliesAtOnce(t *testing.T) {
	c := manualCluster(t, Config{})
	if err := c.CreateTopic("quick", 1, 3, map[string]string{"replica.lag.time.max.ms": "200"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("quick", 0, 3); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err := prod.ProduceSync(testContext(t), &kgo.Record{Topic: "quick", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c.AdvanceClock(200 * time.Millisecond)
	if ps, _ := c.Partition("quick", 0); len(ps.ISR) != 3 {
		t.Fatalf("ISR %v after 200 ms, want all three until the lag time has passed", ps.ISR)
	}
	c.AdvanceClock(100 * time.Millisecond)
	if ps, _ := c.Partition("quick", 0); len(ps.ISR) != 2 {
		t.Fatalf("ISR %v after 300 ms, want follower 3 out", ps.ISR)
	}
}

// TestEnablingUncleanElectionElectsLeaderlessPartitions: with the only ISR
// member dead, enabling unclean.leader.election.enable at runtime makes a
// live out-of-sync replica lead at once.
func TestEnablingUncleanElectionElectsLeaderlessPartitions(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("headless", 1, 2, nil); err != nil { // replicas 1, 2
		t.Fatal(err)
	}
	if err := c.PauseReplica("headless", 0, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.SetISR("headless", 0, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("headless", 0); ps.Leader != -1 {
		t.Fatalf("leader %d, want none", ps.Leader)
	}
	if err := c.AlterTopicConfig("headless", map[string]string{"unclean.leader.election.enable": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("headless", 0); ps.Leader != 2 || len(ps.ISR) != 1 || ps.ISR[0] != 2 {
		t.Fatalf("leader %d ISR %v, want 2 alone", ps.Leader, ps.ISR)
	}
}

// TestCrashedLeaderListedUntilFenced: until BrokerSessionTimeout passes, the
// controller still counts a crashed broker as alive, so Metadata keeps it in
// the broker list and as leader, as KRaft does; clients keep retrying it.
func TestCrashedLeaderListedUntilFenced(t *testing.T) {
	c := NewTestCluster(t, Config{BrokerSessionTimeout: time.Hour})
	if err := c.CreateTopic("slowfence", 1, 3, nil); err != nil { // leader 1
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}
	resp, err := metadataRequest(12, false, "slowfence").RequestWith(testContext(t), newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...)))
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.Leader != 1 || rp.ErrorCode != 0 || len(rp.OfflineReplicas) != 0 || len(resp.Brokers) != 3 {
		t.Fatalf("leader %d error %d offline %v brokers %d; want broker 1 still leading and listed", rp.Leader, rp.ErrorCode, rp.OfflineReplicas, len(resp.Brokers))
	}
	if err := c.StartBroker(1); err != nil { // back before the fence: nothing moved
		t.Fatal(err)
	}
	if ps, _ := c.Partition("slowfence", 0); ps.Leader != 1 || ps.LeaderEpoch != 0 {
		t.Fatalf("leader %d epoch %d, want 1 at 0", ps.Leader, ps.LeaderEpoch)
	}
}
