package server

// Groups seen from outside: describing, listing, deleting, offset
// deletion, a coordinator failover, faults and the control API.

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeListDeleteGroups: DescribeGroups shows a Stable group's
// protocol, members and assignments; ListGroups filters by state and
// type; DeleteGroups refuses a group with members and deletes an Empty
// one with its offsets, for good: a new coordinator does not bring it back.
func TestDescribeListDeleteGroups(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)
	adm := kadm.NewClient(cl)
	offsets := kadm.Offsets{}
	offsets.AddOffset("work", 0, 5, -1)
	if r, err := adm.CommitOffsets(ctx, "offsets-only", offsets); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}

	described, err := adm.DescribeGroups(ctx, "g", "offsets-only", "unknown")
	if err != nil {
		t.Fatal(err)
	}
	g := described["g"]
	if g.Err != nil || g.State != "Stable" || g.Protocol != "range" || g.ProtocolType != "consumer" || len(g.Members) != 1 {
		t.Fatalf("describe g: %+v", g)
	}
	if a, ok := g.Members[0].Assigned.AsConsumer(); !ok || len(a.Topics) != 1 || len(a.Topics[0].Partitions) != 4 || g.Members[0].ClientID != "raw" || g.Members[0].ClientHost != "/127.0.0.1" {
		t.Fatalf("describe g member: %+v", g.Members[0])
	}
	if o := described["offsets-only"]; o.Err != nil || o.State != "Empty" || o.ProtocolType != "" {
		t.Fatalf("describe offsets-only: %+v", o)
	}
	// DescribeGroups v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND.
	if u := described["unknown"]; !errors.Is(u.Err, kerr.GroupIDNotFound) || u.State != "Dead" {
		t.Fatalf("describe unknown: %+v", u)
	}

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := listed.Groups(); len(got) != 2 || listed["g"].State != "Stable" || listed["g"].ProtocolType != "consumer" || listed["offsets-only"].State != "Empty" {
		t.Fatalf("list: %+v", listed)
	}
	if stable, err := adm.ListGroups(ctx, "stable"); err != nil || len(stable) != 1 || stable["g"].Group != "g" {
		t.Fatalf("list stable: %v %+v", err, stable)
	}
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.TypesFilter = []string{"consumer"}
	for _, sh := range cl.RequestSharded(ctx, lreq) {
		if sh.Err == nil && len(sh.Resp.(*kmsg.ListGroupsResponse).Groups) != 0 {
			t.Fatalf("no KIP-848 group, yet %+v", sh.Resp)
		}
	}

	deleted, err := adm.DeleteGroups(ctx, "g", "offsets-only", "unknown")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(deleted["g"].Err, kerr.NonEmptyGroup) || deleted["offsets-only"].Err != nil || !errors.Is(deleted["unknown"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("delete: %+v", deleted)
	}
	fetched, err := adm.FetchOffsets(ctx, "offsets-only")
	if err != nil || fetched.Error() != nil || len(fetched) != 0 {
		t.Fatalf("offsets of a deleted group: %v %+v", err, fetched)
	}
	lreq2 := kmsg.NewPtrLeaveGroupRequest()
	lreq2.Group, lreq2.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: m.id}}
	if resp, err := lreq2.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %v %+v", err, resp)
	}
	gs := waitGroup(t, c, "g", "empty", func(gs GroupState) bool { return gs.State == "Empty" })
	if gs.Generation != 2 {
		t.Fatalf("empty group at generation %d, want 2", gs.Generation)
	}
	if deleted, err := adm.DeleteGroups(ctx, "g"); err != nil || deleted["g"].Err != nil {
		t.Fatalf("delete g: %v %+v", err, deleted)
	}
	if _, ok := c.Group("g"); ok {
		t.Fatal("deleted group still there")
	}

	// Crash the coordinator: the next one must not bring them back.
	coordinator, _ := c.coordinatorOf("offsets-only")
	if err := c.StopBroker(coordinator, StopCrash); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"g", "offsets-only"} {
		if gs, ok := c.Group(id); ok {
			t.Errorf("group %s is back after a failover: %+v", id, gs)
		}
	}
}

// TestOffsetDelete: offsets of topics a member subscribes to stay
// (GROUP_SUBSCRIBED_TO_TOPIC), others go, also in an Empty group.
func TestOffsetDelete(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	if err := c.CreateTopic("other", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	offsets := kadm.Offsets{}
	offsets.AddOffset("work", 0, 5, -1)
	offsets.AddOffset("other", 0, 7, -1)
	offsets.AddOffset("other", 1, 8, -1)
	if r, err := adm.CommitOffsets(ctx, "g", offsets); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)

	del := func(topic string, partitions ...int32) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = "g"
		rt := kmsg.OffsetDeleteRequestTopic{Topic: topic}
		for _, p := range partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: p})
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r := del("work", 0)
	wantCode(t, "subscribed topic", r.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	r = del("other", 0, 9)
	wantCode(t, "other/0", r.Topics[0].Partitions[0].ErrorCode, nil)
	wantCode(t, "other/9", r.Topics[0].Partitions[1].ErrorCode, kerr.UnknownTopicOrPartition)
	fetched, _ := adm.FetchOffsets(ctx, "g")
	if _, ok := fetched.Lookup("other", 0); ok {
		t.Fatal("other/0 still committed")
	}
	if o, ok := fetched.Lookup("other", 1); !ok || o.At != 8 {
		t.Fatalf("other/1: %+v", o)
	}

	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Group, lreq.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: m.id}}
	if _, err := lreq.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	waitGroup(t, c, "g", "empty", func(gs GroupState) bool { return gs.State == "Empty" })
	r = del("work", 0)
	wantCode(t, "work/0 of an empty group", r.Topics[0].Partitions[0].ErrorCode, nil)
	gr := kmsg.NewPtrOffsetDeleteRequest()
	gr.Group = "nope"
	if resp, err := gr.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group: %v %+v", err, resp)
	}
	if gs, _ := c.Group("g"); len(gs.Offsets) != 1 || gs.Offsets[0].Topic != "other" {
		t.Fatalf("offsets left %+v", gs.Offsets)
	}
}

// TestGroupRestoredAfterFailover: a new coordinator rebuilds a Stable
// group from its metadata record (members, generation, assignments) and
// its members carry on heartbeating; their sessions start afresh there and
// still expire.
func TestGroupRestoredAfterFailover(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	req := rawJoinRequest("g", "", 500*time.Millisecond, "range", "work")
	req.InstanceID = kmsg.StringPtr("i1")
	resp := mustJoin(t, ctx, cl, req)
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, instance: req.InstanceID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)
	before, _ := c.Group("g")

	if err := c.StopBroker(before.Coordinator, StopCrash); err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, b := range c.State().Brokers {
		if b.Up {
			live = append(live, b.Address)
		}
	}
	m.cl = newClient(t, c, kgo.SeedBrokers(live...))
	wantCode(t, "heartbeat at the new coordinator", m.heartbeat(t, ctx), nil)
	after, _ := c.Group("g")
	if after.Coordinator == before.Coordinator || after.State != "Stable" || after.Generation != before.Generation || after.Leader != m.id ||
		len(after.Members) != 1 || *after.Members[0].InstanceID != "i1" || len(after.Members[0].Assignment["work"]) != 4 || after.Members[0].SessionTimeoutMillis != 500 {
		t.Fatalf("before the crash %+v\nafter %+v", before, after)
	}
	code, a := m.sync(t, ctx, nil)
	if code != 0 || len(grp.DecodeAssignment(a)["work"]) != 4 {
		t.Fatalf("sync at the new coordinator: %v %v", errorName(code), grp.DecodeAssignment(a))
	}
	// The member falls silent: its restored session expires.
	gs := waitGroup(t, c, "g", "the member expired", func(gs GroupState) bool { return gs.State == "Empty" })
	if gs.Generation != before.Generation+1 {
		t.Fatalf("generation %d, want %d", gs.Generation, before.Generation+1)
	}
}

// TestGroupFaults injects errors into the group APIs: they are answered
// without the work being done.
func TestGroupFaults(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)

	inject := func(f Fault) {
		t.Helper()
		f.Count = 1
		if _, err := c.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	inject(Fault{API: "Heartbeat", Error: "REBALANCE_IN_PROGRESS"})
	wantCode(t, "injected heartbeat error", m.heartbeat(t, ctx), kerr.RebalanceInProgress)
	if gs, _ := c.Group("g"); gs.State != "Stable" {
		t.Fatalf("an injected heartbeat error changed the group: %+v", gs)
	}

	inject(Fault{API: "OffsetCommit", Error: "NOT_ENOUGH_REPLICAS", Topic: "work", Partition: int32Ptr(1)})
	creq := kmsg.NewPtrOffsetCommitRequest()
	creq.Group, creq.MemberID, creq.Generation = "g", m.id, m.generation
	creq.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "work", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3}, {Partition: 1, Offset: 4}}}}
	cresp, err := withTopicIDs(c, creq).RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cresp.Topics[0].Partitions {
		want := int16(0)
		if p.Partition == 1 {
			want = kerr.NotEnoughReplicas.Code
		}
		if p.ErrorCode != want {
			t.Fatalf("commit of work/%d: %v", p.Partition, errorName(p.ErrorCode))
		}
	}
	if len(cresp.Topics) != 1 || len(cresp.Topics[0].Partitions) != 2 {
		t.Fatalf("commit answer %+v, want one topic with both partitions", cresp.Topics)
	}
	if gs, _ := c.Group("g"); len(gs.Offsets) != 1 || gs.Offsets[0].Partition != 0 {
		t.Fatalf("offsets %+v, want work/0 only", gs.Offsets)
	}

	inject(Fault{API: "LeaveGroup", Error: "COORDINATOR_LOAD_IN_PROGRESS"})
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Group, lreq.Members = "g", []kmsg.LeaveGroupRequestMember{{MemberID: m.id}}
	lresp, err := cl.Broker(1).Request(ctx, lreq) // straight to a broker: franz-go would retry
	if err != nil || lresp.(*kmsg.LeaveGroupResponse).ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("leave: %v %+v", err, lresp)
	}
	if gs, _ := c.Group("g"); len(gs.Members) != 1 {
		t.Fatal("the member left despite the fault")
	}

	inject(Fault{API: "DeleteGroups", Error: "GROUP_AUTHORIZATION_FAILED"})
	dreq := kmsg.NewPtrDeleteGroupsRequest()
	dreq.Groups = []string{"g"}
	dresp, err := cl.Broker(1).Request(ctx, dreq)
	if err != nil || dresp.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("delete: %v %+v", err, dresp)
	}

	inject(Fault{API: "JoinGroup", Error: "NOT_COORDINATOR"})
	jresp, err := cl.Broker(1).Request(ctx, rawJoinRequest("g", m.id, time.Second, "range", "work"))
	if err != nil || jresp.(*kmsg.JoinGroupResponse).ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join: %v %+v", err, jresp)
	}
	if gs, _ := c.Group("g"); gs.State != "Stable" {
		t.Fatalf("an injected join error changed the group: %+v", gs)
	}
	for _, api := range []string{"SyncGroup", "OffsetDelete", "LeaveGroup", "DeleteGroups", "OffsetCommit"} {
		if _, err := c.InjectFault(Fault{API: api, Error: "NOT_COORDINATOR", Count: 1, ClientID: "nobody"}); err != nil {
			t.Errorf("%s: %v", api, err)
		}
	}
}

// TestGroupGoroutinesEndWithCluster: closing the cluster stops the group
// timers and ends every goroutine the coordinator started.
func TestGroupGoroutinesEndWithCluster(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", 200*time.Millisecond, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0)})
	wantCode(t, "sync", code, nil)
	cl.Close()
	c.Close()
	waitFor(t, 5*time.Second, "no group goroutine left", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "fakekafka/server.(*group)")
	})
}
