package server

import (
	"context"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The classic group APIs request by request, over TCP: what each answers
// in each state, with exact error codes.

// rawMember is a group member driven by hand.
type rawMember struct {
	cl         *kgo.Client
	group      string
	id         string
	instance   *string
	generation int32
	assignment []byte
}

// joinAndSync joins as a follower (members already there lead) and syncs.
func joinAndSync(t *testing.T, ctx context.Context, cl *kgo.Client, group string, session time.Duration, protocol string, topics ...string) *rawMember {
	t.Helper()
	resp := mustJoin(t, ctx, cl, rawJoinRequest(group, "", session, protocol, topics...))
	if resp.LeaderID == resp.MemberID {
		t.Fatalf("%s leads %s; this helper only follows", resp.MemberID, group)
	}
	m := &rawMember{cl: cl, group: group, id: resp.MemberID, generation: resp.Generation}
	code, assignment := m.sync(t, ctx, nil)
	if code != 0 {
		t.Fatalf("sync: %v", errorName(code))
	}
	m.assignment = assignment
	return m
}

func (m *rawMember) sync(t *testing.T, ctx context.Context, assignments map[string][]byte) (int16, []byte) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.id, m.instance
	for id, a := range assignments {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ErrorCode, resp.MemberAssignment
}

func (m *rawMember) heartbeat(t *testing.T, ctx context.Context) int16 {
	t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.id, m.instance
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ErrorCode
}

func groupCluster(t *testing.T, cfg Config) (*Cluster, *kgo.Client, context.Context) {
	t.Helper()
	if cfg.GroupMinSessionTimeout == 0 {
		cfg.GroupMinSessionTimeout = 100 * time.Millisecond
	}
	c := NewTestCluster(t, cfg)
	if err := c.CreateTopic("work", 4, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c, newClient(t, c, kgo.ClientID("raw")), testContext(t)
}

// TestJoinGroupMemberIDRequired: from v4 a new member first gets
// MEMBER_ID_REQUIRED and an id (client id, "-", a UUID), and joins with
// it; before v4 it joins at once. The leader (the first to join) gets
// every member's metadata, a follower none; followers' SyncGroup waits for
// the leader's, whose assignments it then hands out.
func TestJoinGroupMemberIDRequired(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	req := rawJoinRequest("g", "", time.Second, "range", "work")
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "first join", resp.ErrorCode, kerr.MemberIDRequired)
	if len(resp.MemberID) != len("raw-")+36 || resp.MemberID[:4] != "raw-" || resp.Generation != -1 {
		t.Fatalf("member id %q generation %d", resp.MemberID, resp.Generation)
	}
	if gs, _ := c.Group("g"); gs.State != "Empty" || len(gs.Members) != 0 {
		t.Fatalf("a pending member is not a member yet: %+v", gs)
	}
	req.MemberID = resp.MemberID
	leader := mustJoin(t, ctx, cl, req)
	if leader.LeaderID != leader.MemberID || leader.Generation != 1 || *leader.Protocol != "range" || len(leader.Members) != 1 {
		t.Fatalf("leader's join: %+v", leader)
	}

	// A v3 member joins without a member id round trip; the leader learns
	// of it by heartbeat and rejoins.
	v3 := kversion.Stable()
	v3.SetMaxKeyVersion(11, 3)
	oldCl := newClient(t, c, kgo.ClientID("old"), kgo.MaxVersions(v3))
	old := rawJoinRequest("g", "", time.Second, "range", "work")
	followerDone := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := old.RequestWith(ctx, oldCl)
		if err != nil {
			resp = nil
		}
		followerDone <- resp
	}()
	lm := &rawMember{cl: cl, group: "g", id: leader.MemberID, generation: 1}
	waitFor(t, 5*time.Second, "the leader told to rejoin", func() bool { return lm.heartbeat(t, ctx) == kerr.RebalanceInProgress.Code })
	req.Version = 9
	leader = mustJoin(t, ctx, cl, req)
	follower := <-followerDone
	if follower == nil || follower.ErrorCode != 0 || follower.Generation != 2 || follower.LeaderID != leader.MemberID || len(follower.Members) != 0 {
		t.Fatalf("v3 follower's join: %+v", follower)
	}
	if len(leader.Members) != 2 || string(leader.Members[1].ProtocolMetadata) != string(consumerMetadata("work")) {
		t.Fatalf("leader's members: %+v", leader.Members)
	}

	if follower.MemberID[:4] != "old-" {
		t.Fatalf("v3 member id %q", follower.MemberID)
	}
	fm := &rawMember{cl: oldCl, group: "g", id: follower.MemberID, generation: 2}
	lm.generation = 2
	synced := make(chan []byte, 1)
	go func() {
		code, a := fm.sync(t, ctx, nil)
		if code != 0 {
			a = nil
		}
		synced <- a
	}()
	waitGroup(t, c, "g", "two members", func(gs GroupState) bool { return gs.State == "CompletingRebalance" && len(gs.Members) == 2 })
	select {
	case <-synced:
		t.Fatal("a follower's SyncGroup was answered before the leader's")
	default:
	}
	code, mine := lm.sync(t, ctx, map[string][]byte{lm.id: consumerAssignment("work", 0, 1), fm.id: consumerAssignment("work", 2, 3)})
	wantCode(t, "leader's sync", code, nil)
	if string(mine) != string(consumerAssignment("work", 0, 1)) || string(<-synced) != string(consumerAssignment("work", 2, 3)) {
		t.Fatal("assignments not handed out as the leader sent them")
	}
	gs := waitGroup(t, c, "g", "stable", balanced(2, 4))
	if gs.Generation != 2 || gs.Leader != lm.id {
		t.Fatalf("group %+v", gs)
	}
	wantCode(t, "heartbeat in Stable", lm.heartbeat(t, ctx), nil)
}

// TestGroupRequestErrors checks the errors of JoinGroup, SyncGroup,
// Heartbeat and OffsetCommit in each state.
func TestGroupRequestErrors(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	join := func(req *kmsg.JoinGroupRequest) int16 {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	wantCode(t, "session below the minimum", join(rawJoinRequest("g", "", 50*time.Millisecond, "range", "work")), kerr.InvalidSessionTimeout)
	wantCode(t, "session above the maximum", join(rawJoinRequest("g", "", time.Hour, "range", "work")), kerr.InvalidSessionTimeout)
	if resp, err := cl.Broker(1).Request(ctx, rawJoinRequest("", "", time.Second, "range", "work")); err != nil || resp.(*kmsg.JoinGroupResponse).ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %v %+v", err, resp)
	}
	wantCode(t, "no protocols", join(&kmsg.JoinGroupRequest{Version: 9, Group: "g", SessionTimeoutMillis: 1000, ProtocolType: "consumer"}), kerr.InconsistentGroupProtocol)
	wantCode(t, "unknown member of an unknown group", join(rawJoinRequest("nope", "someone", time.Second, "range", "work")), kerr.UnknownMemberID)

	commit := func(member string, generation int32, instance *string) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.MemberID, req.Generation, req.InstanceID = "g", member, generation, instance
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "work", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
		resp, err := withTopicIDs(c, req).RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	wantCode(t, "simple commit to an empty group", commit("", -1, nil), nil)
	wantCode(t, "generation -1 with a member id to an empty group", commit("someone", -1, nil), nil)
	unknown := kmsg.NewPtrOffsetCommitRequest()
	unknown.Group, unknown.MemberID, unknown.Generation = "nope", "someone", 3
	unknown.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "work", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if resp, err := withTopicIDs(c, unknown).RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("member commit to a group that does not exist (v9): %v %+v", err, resp)
	}

	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	wantCode(t, "another protocol", join(rawJoinRequest("g", "", time.Second, "roundrobin", "work")), kerr.InconsistentGroupProtocol)
	other := rawJoinRequest("g", "", time.Second, "range", "work")
	other.ProtocolType = "connect"
	wantCode(t, "another protocol type", join(other), kerr.InconsistentGroupProtocol)

	// CompletingRebalance: the leader has not synced yet.
	wantCode(t, "commit during CompletingRebalance", commit(m.id, m.generation, nil), kerr.RebalanceInProgress)
	wantCode(t, "heartbeat during CompletingRebalance", m.heartbeat(t, ctx), nil)
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)

	// Stable.
	wantCode(t, "member commit", commit(m.id, m.generation, nil), nil)
	wantCode(t, "simple commit to a group with members", commit("", -1, nil), kerr.UnknownMemberID)
	wantCode(t, "commit from an unknown member", commit("stranger", m.generation, nil), kerr.UnknownMemberID)
	wantCode(t, "commit from an old generation", commit(m.id, m.generation-1, nil), kerr.IllegalGeneration)
	stale := *m
	stale.generation--
	wantCode(t, "heartbeat from an old generation", stale.heartbeat(t, ctx), kerr.IllegalGeneration)
	code, _ = stale.sync(t, ctx, nil)
	wantCode(t, "sync from an old generation", code, kerr.IllegalGeneration)
	stranger := *m
	stranger.id = "stranger"
	wantCode(t, "heartbeat from an unknown member", stranger.heartbeat(t, ctx), kerr.UnknownMemberID)
	unknownGroup := *m
	unknownGroup.group = "nope"
	wantCode(t, "heartbeat to an unknown group", unknownGroup.heartbeat(t, ctx), kerr.UnknownMemberID)
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Group, sreq.Generation, sreq.MemberID, sreq.Protocol = "g", m.generation, m.id, kmsg.StringPtr("roundrobin")
	sresp, err := sreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "sync naming another protocol", sresp.ErrorCode, kerr.InconsistentGroupProtocol)

	// PreparingRebalance: a second member joins; the first is told.
	joined := make(chan int16, 1)
	second := newClient(t, c)
	go func() {
		resp, err := rawJoinRequest("g", "", time.Second, "range", "work").RequestWith(ctx, second)
		if err == nil && resp.ErrorCode == kerr.MemberIDRequired.Code {
			req := rawJoinRequest("g", resp.MemberID, time.Second, "range", "work")
			resp, err = req.RequestWith(ctx, second)
		}
		if err != nil {
			joined <- -1
			return
		}
		joined <- resp.ErrorCode
	}()
	waitGroup(t, c, "g", "a rebalance", func(gs GroupState) bool { return gs.State == "PreparingRebalance" })
	wantCode(t, "heartbeat during PreparingRebalance", m.heartbeat(t, ctx), kerr.RebalanceInProgress)
	code, _ = m.sync(t, ctx, nil)
	wantCode(t, "sync during PreparingRebalance", code, kerr.RebalanceInProgress)
	wantCode(t, "commit during PreparingRebalance (eager members commit before rejoining)", commit(m.id, m.generation, nil), nil)
	mustJoin(t, ctx, cl, rawJoinRequest("g", m.id, time.Second, "range", "work"))
	wantCode(t, "the second member's join", <-joined, nil)
}

// rawJoinAsync joins with req on its own connection and goroutine (which
// must not fail the test) and hands back the answer, nil on an error.
func rawJoinAsync(t *testing.T, c *Cluster, ctx context.Context, req *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	cl := newClient(t, c) // one connection per member, as clients have
	out := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == kerr.MemberIDRequired.Code {
			req.MemberID = resp.MemberID
			resp, err = req.RequestWith(ctx, cl)
		}
		if err != nil {
			resp = nil
		}
		out <- resp
	}()
	return out
}

// TestRebalanceTimeoutRemovesMembers: a member that keeps heartbeating but
// does not rejoin is removed when the rebalance timeout passes on the
// clock, not before, and the others complete their join without it.
func TestRebalanceTimeoutRemovesMembers(t *testing.T) {
	const rebalance = time.Minute
	c, cl, ctx := groupCluster(t, Config{Clock: clock.NewManual(clockStart)})
	a := rawJoinRequest("g", "", 10*time.Minute, "range", "work")
	a.RebalanceTimeoutMillis = int32(rebalance.Milliseconds())
	ra := mustJoin(t, ctx, cl, a)
	ma := &rawMember{cl: cl, group: "g", id: ra.MemberID, generation: ra.Generation}
	code, _ := ma.sync(t, ctx, map[string][]byte{ma.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)

	b := rawJoinRequest("g", "", 10*time.Minute, "range", "work")
	b.RebalanceTimeoutMillis = int32(rebalance.Milliseconds())
	joined := rawJoinAsync(t, c, ctx, b) // waits for a, which never rejoins
	waitGroup(t, c, "g", "b waiting in the rebalance", func(gs GroupState) bool {
		return gs.State == "PreparingRebalance" && len(gs.Members) == 2
	})
	c.AdvanceClock(rebalance - time.Millisecond)
	wantCode(t, "heartbeat during the rebalance", ma.heartbeat(t, ctx), kerr.RebalanceInProgress)
	select {
	case rb := <-joined:
		t.Fatalf("join completed before the rebalance timeout: %+v", rb)
	default:
	}
	c.AdvanceClock(time.Millisecond)
	rb := <-joined
	if rb == nil || rb.Generation != 2 || rb.LeaderID != rb.MemberID || len(rb.Members) != 1 {
		t.Fatalf("join without the member that did not rejoin: %+v", rb)
	}
	ma.generation = 2
	wantCode(t, "heartbeat of the removed member", ma.heartbeat(t, ctx), kerr.UnknownMemberID)
	if gs, _ := c.Group("g"); len(gs.Members) != 1 || gs.Members[0].MemberID != rb.MemberID {
		t.Fatalf("members %+v", gs.Members)
	}
}

// TestInitialRebalanceDelay: the first rebalance of an empty group waits
// group.initial.rebalance.delay.ms (Kafka's 3 s, on a manual clock), so
// members starting together form the first generation together. A member
// that joined during the delay extends it by another delay, capped by the
// rebalance timeout (5 s here): the join completes at exactly 5 s.
func TestInitialRebalanceDelay(t *testing.T) {
	const delay = 3 * time.Second
	c, _, ctx := groupCluster(t, Config{GroupInitialRebalanceDelay: delay, Clock: clock.NewManual(clockStart)})
	var results []<-chan *kmsg.JoinGroupResponse
	for range 2 {
		results = append(results, rawJoinAsync(t, c, ctx, rawJoinRequest("g", "", time.Minute, "range", "work")))
	}
	waitGroup(t, c, "g", "both members waiting", func(gs GroupState) bool {
		return gs.State == "PreparingRebalance" && len(gs.Members) == 2
	})
	for _, step := range []time.Duration{delay, 2*time.Second - time.Millisecond} {
		c.AdvanceClock(step)
		for _, r := range results {
			select {
			case resp := <-r:
				t.Fatalf("join answered at %v, before the delay and its extension passed: %+v", c.Now().Sub(clockStart), resp)
			default:
			}
		}
	}
	c.AdvanceClock(time.Millisecond)
	for _, r := range results {
		resp := <-r
		if resp == nil || resp.ErrorCode != 0 || resp.Generation != 1 {
			t.Fatalf("join: %+v", resp)
		}
	}
	if gs, _ := c.Group("g"); gs.Generation != 1 || len(gs.Members) != 2 {
		t.Fatalf("group %+v", gs)
	}
}

// TestStaticMembership: a static member joins without MEMBER_ID_REQUIRED;
// joining again without a member id replaces it with no rebalance, and the
// old incarnation is fenced everywhere; LeaveGroup by instance id removes
// it.
func TestStaticMembership(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	instance := kmsg.StringPtr("node-1")
	req := rawJoinRequest("g", "", 5*time.Second, "range", "work")
	req.InstanceID = instance
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("static join: %v %+v", err, resp)
	}
	if resp.MemberID[:len("node-1-")] != "node-1-" {
		t.Fatalf("static member id %q", resp.MemberID)
	}
	old := &rawMember{cl: cl, group: "g", id: resp.MemberID, instance: instance, generation: resp.Generation}
	code, _ := old.sync(t, ctx, map[string][]byte{old.id: consumerAssignment("work", 0, 1, 2, 3)})
	wantCode(t, "sync", code, nil)

	// A follower joins too, so the restarted instance is not alone.
	follower := joinAndSyncAfterRebalance(t, ctx, c, old)
	old.generation = follower.generation
	generation := follower.generation

	req.MemberID = ""
	again, err := req.RequestWith(ctx, cl)
	if err != nil || again.ErrorCode != 0 {
		t.Fatalf("static rejoin: %v %+v", err, again)
	}
	if again.MemberID == old.id || again.Generation != generation || !again.SkipAssignment || again.LeaderID != again.MemberID {
		t.Fatalf("static leader's rejoin: %+v, want a new id, generation %d, told to skip the assignment", again, generation)
	}
	cur := &rawMember{cl: cl, group: "g", id: again.MemberID, instance: instance, generation: generation}
	code, a := cur.sync(t, ctx, nil)
	wantCode(t, "sync of the new incarnation", code, nil)
	if len(grp.DecodeAssignment(a)["work"]) == 0 {
		t.Fatalf("new incarnation got %v", grp.DecodeAssignment(a))
	}
	wantCode(t, "heartbeat of the old incarnation", old.heartbeat(t, ctx), kerr.FencedInstanceID)
	code, _ = old.sync(t, ctx, nil)
	wantCode(t, "sync of the old incarnation", code, kerr.FencedInstanceID)
	wantCode(t, "heartbeat of the new incarnation", cur.heartbeat(t, ctx), nil)
	wantCode(t, "heartbeat of the follower: no rebalance", follower.heartbeat(t, ctx), nil)

	// An old (v8) client is told the old id leads, so it follows.
	v8max := kversion.Stable()
	v8max.SetMaxKeyVersion(11, 8)
	req.MemberID = ""
	v8, err := req.RequestWith(ctx, newClient(t, c, kgo.MaxVersions(v8max)))
	if err != nil || v8.ErrorCode != 0 || v8.LeaderID != cur.id || v8.Generation != generation || len(v8.Members) != 0 {
		t.Fatalf("v8 static rejoin: %v %+v, want leader %s", err, v8, cur.id)
	}
	cur.id = v8.MemberID

	leave := func(member string, instance *string) int16 {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group = "g"
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: member, InstanceID: instance}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("leave: %v %+v", err, resp)
		}
		return resp.Members[0].ErrorCode
	}
	wantCode(t, "leave of the old incarnation", leave(old.id, instance), kerr.FencedInstanceID)
	wantCode(t, "leave by instance id alone", leave("", instance), nil)
	wantCode(t, "leave of an unknown instance", leave("", instance), kerr.UnknownMemberID)
	gs := waitGroup(t, c, "g", "the static member gone", func(gs GroupState) bool { return len(gs.Members) == 1 })
	if gs.Members[0].MemberID != follower.id {
		t.Fatalf("members %+v", gs.Members)
	}
}

// joinAndSyncAfterRebalance adds a follower to a group led by leader:
// the leader rejoins when its heartbeat says so and assigns everything to
// itself.
func joinAndSyncAfterRebalance(t *testing.T, ctx context.Context, c *Cluster, leader *rawMember) *rawMember {
	t.Helper()
	done := make(chan *rawMember, 1)
	cl := newClient(t, c)
	go func() {
		req := rawJoinRequest(leader.group, "", 5*time.Second, "range", "work")
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && resp.ErrorCode == kerr.MemberIDRequired.Code {
			req.MemberID = resp.MemberID
			resp, err = req.RequestWith(ctx, cl)
		}
		if err != nil || resp.ErrorCode != 0 {
			done <- nil
			return
		}
		done <- &rawMember{cl: cl, group: leader.group, id: resp.MemberID, generation: resp.Generation}
	}()
	waitFor(t, 5*time.Second, "the leader told to rejoin", func() bool { return leader.heartbeat(t, ctx) == kerr.RebalanceInProgress.Code })
	req := rawJoinRequest(leader.group, leader.id, 5*time.Second, "range", "work")
	req.InstanceID = leader.instance
	resp := mustJoin(t, ctx, leader.cl, req)
	leader.generation = resp.Generation
	f := <-done
	if f == nil {
		t.Fatal("follower's join failed")
	}
	synced := make(chan int16, 1)
	go func() {
		code, _ := f.sync(t, ctx, nil)
		synced <- code
	}()
	code, _ := leader.sync(t, ctx, map[string][]byte{leader.id: consumerAssignment("work", 0, 1), f.id: consumerAssignment("work", 2, 3)})
	wantCode(t, "leader's sync", code, nil)
	wantCode(t, "follower's sync", <-synced, nil)
	return f
}
