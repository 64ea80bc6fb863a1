package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
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

func consumerMetadata(topics ...string) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = topics
	return md.AppendTo(nil)
}

func consumerAssignment(topic string, partitions ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: partitions}}
	return a.AppendTo(nil)
}

func rawJoinRequest(group, memberID string, session time.Duration, protocol string, topics ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID = group, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(session.Milliseconds()), 5000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: protocol, Metadata: consumerMetadata(topics...)}}
	return req
}

func mustJoin(t *testing.T, ctx context.Context, cl *kgo.Client, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	t.Helper()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		req.MemberID = resp.MemberID
		if resp, err = req.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("join %s: %v", req.Group, errorName(resp.ErrorCode))
	}
	return resp
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

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: %v, want %v", what, errorName(got), errorName(wantCode))
	}
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
		resp, err := req.RequestWith(ctx, cl)
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
	if resp, err := unknown.RequestWith(ctx, cl); err != nil || resp.Topics[0].Partitions[0].ErrorCode != kerr.GroupIDNotFound.Code {
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
	if len(decodeAssignment(a)["work"]) == 0 {
		t.Fatalf("new incarnation got %v", decodeAssignment(a))
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
	if u := described["unknown"]; u.Err != nil || u.State != "Dead" {
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
	if code != 0 || len(decodeAssignment(a)["work"]) != 4 {
		t.Fatalf("sync at the new coordinator: %v %v", errorName(code), decodeAssignment(a))
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
	cresp, err := creq.RequestWith(ctx, cl)
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

// TestGroupsControlAPI reads groups over HTTP.
func TestGroupsControlAPI(t *testing.T) {
	c, cl, ctx := groupCluster(t, Config{})
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 2, 3)})
	wantCode(t, "sync", code, nil)
	srv := httptest.NewServer(c.ControlHandler())
	defer srv.Close()

	var list struct {
		Groups []GroupState `json:"groups"`
	}
	getJSON(t, srv.URL+"/v1/groups", http.StatusOK, &list)
	if len(list.Groups) != 1 || list.Groups[0].Group != "g" || list.Groups[0].State != "Stable" {
		t.Fatalf("groups %+v", list)
	}
	var one map[string]any
	getJSON(t, srv.URL+"/v1/groups/g", http.StatusOK, &one)
	members := one["members"].([]any)
	assignment := members[0].(map[string]any)["assignment"].(map[string]any)
	if one["protocol"] != "range" || one["generation"] != 1.0 || fmt.Sprint(assignment["work"]) != "[2 3]" {
		t.Fatalf("group %v", one)
	}
	var fail map[string]string
	getJSON(t, srv.URL+"/v1/groups/nope", http.StatusNotFound, &fail)
	if fail["error"] == "" {
		t.Fatalf("error body %v", fail)
	}
}

func getJSON(t *testing.T, url string, status int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d", url, resp.StatusCode, status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
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
