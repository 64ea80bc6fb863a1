package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLeadershipChangeCompletesParkedProduce parks an acks=all produce
// (one follower held back), then moves leadership: the produce completes at
// once with NOT_LEADER_OR_FOLLOWER and, on Produce v10+, the new leader
// (KIP-951), and a fetch with the old epoch is fenced.
func TestLeadershipChangeCompletesParkedProduce(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("moving", 1, 3, nil); err != nil { // replicas 1, 2, 3
		t.Fatal(err)
	}
	if err := c.PauseReplica("moving", 0, 3); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 60_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "moving"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = buildBatch(t, "parked")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	type result struct {
		resp kmsg.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := cl.Broker(1).Request(testContext(t), byTopicID(c, req))
		done <- result{resp, err}
	}()
	waitFor(t, 10*time.Second, "the produce to be appended and parked", func() bool {
		ps, _ := c.Partition("moving", 0)
		return ps.Replicas[0].LogEndOffset == 1 && ps.Replicas[1].LogEndOffset == 1
	})
	if _, err := c.ElectLeader("moving", 0, 2, false); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked produce did not complete when leadership moved")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	p := r.resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != 2 || p.CurrentLeader.LeaderEpoch != 1 {
		t.Fatalf("error %d, current leader %+v; want NOT_LEADER_OR_FOLLOWER with leader 2 at epoch 1", p.ErrorCode, p.CurrentLeader)
	}
	if f := rawFetch(t, c, 2, 12, "moving", 0, 0, 0, 0); f.ErrorCode != kerr.FencedLeaderEpoch.Code || f.CurrentLeader.LeaderID != 2 {
		t.Fatalf("fetch with the old epoch: error %d, leader %+v; want FENCED_LEADER_EPOCH with leader 2", f.ErrorCode, f.CurrentLeader)
	}
}
