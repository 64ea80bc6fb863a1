package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKIP848FailedWriteLeavesNothingApplied: a heartbeat whose state
// cannot be written (the coordinator's partition below
// min.insync.replicas) fails and leaves the group as its last committed
// record says; once writes succeed again the member joins.
func TestKIP848FailedWriteLeavesNothingApplied(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{MinInsyncReplicas: 2})
	heartbeat := func(id string) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "g", id, 0, 30000
		req.SubscribedTopicNames = []string{"work"}
		coord, code := c.coordinatorOf("g")
		if code != 0 {
			t.Fatal(errorName(code))
		}
		resp, err := cl.Broker(int(coord)).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ConsumerGroupHeartbeatResponse)
	}
	if r := heartbeat("member-a-0000000000000000000000"); r.ErrorCode != 0 {
		t.Fatalf("a joins: %v", errorName(r.ErrorCode))
	}
	before, _ := c.Group("g")

	sh, err := c.coord.ShardFor("g")
	if err != nil {
		t.Fatal(err)
	}
	leader, _ := sh.Coordinator()
	if err := c.SetISR(offsetsTopic, sh.Index(), []int32{leader}); err != nil {
		t.Fatal(err)
	}
	if r := heartbeat("member-b-0000000000000000000000"); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("b joins while the write cannot replicate: %v", errorName(r.ErrorCode))
	}
	after, _ := c.Group("g")
	if len(after.Members) != 1 || after.Generation != before.Generation {
		t.Fatalf("the failed join was applied: %d members at epoch %d, was %d at %d",
			len(after.Members), after.Generation, len(before.Members), before.Generation)
	}

	if err := c.SetISR(offsetsTopic, sh.Index(), []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if r := heartbeat("member-b-0000000000000000000000"); r.ErrorCode != 0 {
		t.Fatalf("b joins once writes succeed: %v", errorName(r.ErrorCode))
	}
	if gs, _ := c.Group("g"); len(gs.Members) != 2 || gs.Generation <= before.Generation {
		t.Fatalf("after b joined: %d members at epoch %d", len(gs.Members), gs.Generation)
	}
}
