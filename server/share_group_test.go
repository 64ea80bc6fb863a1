package server

import (
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// other.
func TestShareGroupHeartbeatErrors(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	if r := m.heartbeat(0); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("join without topics: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	r := m.join("q")
	if r.MemberEpoch != 1 || r.HeartbeatIntervalMillis != 5000 || *r.MemberID != "m1" {
		t.Fatalf("join: %+v", r)
	}
	wantCode(t, "a fenced epoch", m.heartbeat(7).ErrorCode, kerr.FencedMemberEpoch)
	x := newShareMember(t, c, "sg", "x")
	wantCode(t, "an unknown member", x.heartbeat(1).ErrorCode, kerr.UnknownMemberID)
	y := newShareMember(t, c, "no-such-group", "y")
	wantCode(t, "an unknown group", y.heartbeat(1).ErrorCode, kerr.GroupIDNotFound)
	wantCode(t, "the member's epoch", m.heartbeat(1).ErrorCode, nil)

	// A KIP-848 consumer may not join the share group, and a share
	// member may not join a consumer group.
	ctx := testContext(t)
	chb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Group, chb.MemberID, chb.MemberEpoch, chb.RebalanceTimeoutMillis, chb.SubscribedTopicNames = "sg", "c1", 0, 30000, []string{"q"}
	cresp, err := chb.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "a consumer in a share group", cresp.ErrorCode, kerr.GroupIDNotFound)
	chb.Group = "cg"
	if cresp, err = chb.RequestWith(ctx, m.cl); err != nil || cresp.ErrorCode != 0 {
		t.Fatalf("consumer group: %v %v", err, cresp)
	}
	s := newShareMember(t, c, "cg", "s1")
	r = s.heartbeat(0, "q")
	wantCode(t, "a share member in a consumer group", r.ErrorCode, kerr.GroupIDNotFound)
	if r.ErrorMessage == nil || *r.ErrorMessage != "Group cg is not a share group." {
		t.Fatalf("message %v", r.ErrorMessage)
	}

	// ShareGroupDescribe, ListGroups, DescribeGroups.
	d := kmsg.NewPtrShareGroupDescribeRequest()
	d.GroupIDs = []string{"sg", "cg", "none"}
	dresp, err := d.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]kmsg.ShareGroupDescribeResponseGroup{}
	for _, g := range dresp.Groups {
		byID[g.GroupID] = g
	}
	g := byID["sg"]
	if g.ErrorCode != 0 || g.GroupState != "Stable" || g.GroupEpoch != 1 || g.AssignmentEpoch != 1 || g.Assignor != "simple" ||
		len(g.Members) != 1 || g.Members[0].MemberID != "m1" || g.Members[0].MemberEpoch != 1 ||
		!slices.Equal(g.Members[0].SubscribedTopicNames, []string{"q"}) || len(g.Members[0].Assignment.TopicPartitions) != 1 {
		t.Fatalf("describe sg: %+v", g)
	}
	wantCode(t, "describe a consumer group", byID["cg"].ErrorCode, kerr.GroupIDNotFound)
	wantCode(t, "describe nothing", byID["none"].ErrorCode, kerr.GroupIDNotFound)

	lg := kmsg.NewPtrListGroupsRequest()
	lg.TypesFilter = []string{"share"}
	var listed []string
	for _, b := range []int{1, 2, 3} {
		lresp, err := lg.RequestWith(ctx, m.cl.Broker(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range lresp.Groups {
			listed = append(listed, g.Group+"/"+g.GroupType+"/"+g.GroupState+"/"+g.ProtocolType)
		}
	}
	if !slices.Equal(listed, []string{"sg/share/Stable/share"}) {
		t.Fatalf("ListGroups share: %v", listed)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"sg"}
	dgr, err := dg.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	// Kafka 4.4 from v6 (KIP-1043): not a classic group.
	if g := dgr.Groups[0]; g.ErrorCode != kerr.GroupIDNotFound.Code || g.State != "Dead" || g.ErrorMessage == nil || *g.ErrorMessage != "Group sg is not a classic group." {
		t.Fatalf("DescribeGroups of a share group: %+v", dgr.Groups[0])
	}
}

// its state, and a member makes it anew.
func TestShareInitializedAtAssignmentAndDeleted(t *testing.T) {
	c, _ := newShareCluster(t)
	shareProduce(t, c, "q", 1) // 0: before the group
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	shareProduce(t, c, "q", 2) // 1-2: after the assignment
	wantAcquired(t, "first fetch", m.fetch("q", time.Second), "1-2/1")
	ctx := testContext(t)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"sg"}
	dresp, err := del.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "delete with a member", dresp.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	if r := m.heartbeat(-1); r.ErrorCode != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if dresp, err = del.RequestWith(ctx, m.cl); err != nil || dresp.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete: %v %+v", err, dresp)
	}
	if _, ok := c.Group("sg"); ok {
		t.Fatal("the deleted group is still there")
	}
	// A new group of that id starts at the high watermark again.
	m2 := newShareMember(t, c, "sg", "m2")
	m2.join("q")
	shareProduce(t, c, "q", 1) // 3
	wantAcquired(t, "the new group", m2.fetch("q", time.Second), "3-3/1")
}

// closed session frees its place.
func TestShareSessionLimit(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Clock: clk, ShareGroupMaxShareSessions: 1})
	if err := c.CreateTopic("q", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	a, b := newShareMember(t, c, "sg", "a"), newShareMember(t, c, "sg", "b")
	a.join("q")
	b.join("q")
	wantAcquired(t, "a opens", a.fetch("q", 10*time.Millisecond))
	r := b.fetch("q", 10*time.Millisecond)
	wantCode(t, "b's session", r.ErrorCode, kerr.ShareSessionLimitReached)
	// a closes its session (-1): b gets the place.
	a.epochs[leaderOf(c, "q", 0)] = -1
	wantCode(t, "a closes", a.fetch("q", 0).ErrorCode, nil)
	wantAcquired(t, "b opens", b.fetch("q", 10*time.Millisecond))
}

// count, and the group's coordinator failover keeps the others' epochs.
func TestShareMemberExpiryAndCoordinatorFailover(t *testing.T) {
	c, _ := newShareCluster(t)
	a, b := newShareMember(t, c, "sg", "a"), newShareMember(t, c, "sg", "b")
	a.join("q")
	b.join("q")
	wantAcquired(t, "a opens", a.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 2)
	wantAcquired(t, "a takes both", a.fetch("q", time.Second), "0-1/1")
	// b heartbeats every 20 s; a never again.
	for range 2 {
		if err := c.AdvanceClock(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		if r := b.heartbeat(b.epoch); r.ErrorCode != 0 {
			t.Fatalf("b: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	if err := c.AdvanceClock(6 * time.Second); err != nil { // 46 s since a's last heartbeat
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a expired", func() bool {
		gs, _ := c.Group("sg")
		return len(gs.Members) == 1 && gs.Members[0].MemberID == "b"
	})
	// a's locks ran out too (30 s): 0-1 go to b, second delivery.
	wantAcquired(t, "b opens", b.fetch("q", time.Second), "0-1/2")
	expired := false
	for _, e := range c.Events(0) {
		expired = expired || e.Type == EventGroupMemberExpired && e.Group == "sg" && e.Member == "a"
	}
	if !expired {
		t.Fatal("no group_member_expired event for a")
	}

	// b's heartbeat learns epoch 3; its answer comes once the state is
	// written (a's expiry wrote it on its own timer, maybe not yet).
	if r := b.heartbeat(b.epoch); r.ErrorCode != 0 || r.MemberEpoch != 3 {
		t.Fatalf("b after a's expiry: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	// The coordinator's broker crashes: the new one restores the group
	// from __consumer_offsets and b carries on at its epoch.
	gs, _ := c.Group("sg")
	if gs.Generation != 3 {
		t.Fatalf("before the crash: group at %d", gs.Generation)
	}
	if err := c.StopBroker(gs.Coordinator, StopCrash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "b's heartbeat on the new coordinator", func() bool {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch = "sg", "b", 3
		cl := newClient(t, c) // a fresh coordinator lookup
		defer cl.Close()
		r, err := req.RequestWith(testContext(t), cl)
		if err != nil || r.ErrorCode == kerr.NotCoordinator.Code || r.ErrorCode == kerr.CoordinatorNotAvailable.Code {
			return false // the coordinator is moving
		}
		if r.ErrorCode != 0 || r.MemberEpoch != 3 {
			t.Fatalf("heartbeat on the new coordinator: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
		}
		return true
	})
	if gs2, ok := c.Group("sg"); !ok || gs2.Coordinator == gs.Coordinator || gs2.Type != "share" || len(gs2.Members) != 1 {
		t.Fatalf("after the failover: %+v", gs2)
	}
}
