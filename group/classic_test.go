package group

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// host is a test coordinator: a manual clock, the events and metadata
// writes the group made.
type host struct {
	clk      *clock.Clock
	g        *Classic
	delay    time.Duration
	consumer int
	events   []Event
	persists []MetaSnapshot
}

// After arms f on the manual clock. A timer already due would fire on the
// clock's own goroutine, racing the test, which plays the group's lock:
// such a timer waits for the test's next Advance instead.
func (h *host) After(d time.Duration, f func()) *clock.Timer {
	return h.clk.AfterFunc(max(d, time.Nanosecond), func() {
		if !h.g.Shut {
			f()
		}
	})
}
func (h *host) Emit(ev Event)                        { h.events = append(h.events, ev) }
func (h *host) PersistAsync(s MetaSnapshot)          { h.persists = append(h.persists, s) }
func (h *host) ConsumerMembers() int                 { return h.consumer }
func (h *host) Now() time.Time                       { return h.clk.Now() }
func (h *host) InitialRebalanceDelay() time.Duration { return h.delay }
func (h *host) Log() *slog.Logger                    { return slog.New(slog.DiscardHandler) }

// take returns the events since the last take, as "type member".
func (h *host) take() []string {
	out := []string{}
	names := []string{"joined", "left", "expired", "rebalance", "stable"}
	for _, e := range h.events {
		out = append(out, strings.TrimSpace(names[e.Type]+" "+e.Member))
	}
	h.events = nil
	return out
}

func newClassic(delay time.Duration) (*Classic, *host) {
	h := &host{clk: clock.NewManual(time.Unix(1_000_000, 0)), delay: delay}
	g := NewClassic("g", h)
	h.g = &g
	g.Restore(nil)
	return h.g, h
}

const (
	session   = 10 * time.Second
	rebalance = 30 * time.Second
)

func joinReq(id, client string) JoinRequest {
	return JoinRequest{Version: 9, MemberID: id, ClientID: client, Host: "/10.0.0.1", Session: session, Rebalance: rebalance,
		ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte(client)}}}
}

// joinNew runs a new member's two JoinGroups (MEMBER_ID_REQUIRED, then
// with the id) and returns its id and the channel of its join.
func joinNew(t *testing.T, g *Classic, client string) (string, chan JoinResult) {
	t.Helper()
	res, ch, _ := g.Join(joinReq("", client))
	if res.Code != kerr.MemberIDRequired.Code || ch != nil || !strings.HasPrefix(res.MemberID, client+"-") {
		t.Fatalf("first join: %+v", res)
	}
	_, ch, _ = g.Join(joinReq(res.MemberID, client))
	if ch == nil {
		t.Fatal("the join with the id was answered at once")
	}
	return res.MemberID, ch
}

func answered[T any](t *testing.T, what string, ch chan T) T {
	t.Helper()
	select {
	case r := <-ch:
		return r
	default:
		t.Fatalf("%s: no answer", what)
	}
	panic("unreachable")
}

func waiting[T any](t *testing.T, what string, ch chan T) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: answered %+v", what, r)
	default:
	}
}

func syncAll(t *testing.T, g *Classic, leader string, members ...string) {
	t.Helper()
	as := map[string][]byte{}
	for _, m := range members {
		as[m] = []byte("for " + m)
	}
	// Followers first: each waits for the leader's assignment.
	slices.SortStableFunc(members, func(x, y string) int {
		if x == leader {
			return 1
		}
		if y == leader {
			return -1
		}
		return 0
	})
	var chs []chan SyncResult
	for _, m := range members {
		req := SyncRequest{MemberID: m, Generation: g.Generation}
		if m == leader {
			req.Assignments = as
		}
		res, _, _, ch, ls := g.Sync(req)
		if res.Code != 0 || ch == nil {
			t.Fatalf("sync %s: %+v", m, res)
		}
		chs = append(chs, ch)
		if ls != nil {
			g.CompleteSync(ls.Generation, ls.Assignments, 0)
		}
	}
	for i, ch := range chs {
		if r := answered(t, "sync "+members[i], ch); r.Code != 0 || string(r.Assignment) != "for "+members[i] {
			t.Fatalf("sync %s: %+v", members[i], r)
		}
	}
}

// Two members join, sync and rebalance again when a third arrives; the
// leader gets the member list, everyone their assignment.
func TestClassicJoinSyncRebalance(t *testing.T) {
	g, h := newClassic(0)
	a, cha := joinNew(t, g, "ca")
	r := answered(t, "a's join", cha)
	if r.Code != 0 || r.Generation != 1 || r.Leader != a || r.Protocol != "range" || len(r.Members) != 1 || g.State != CompletingRebalance {
		t.Fatalf("a's join: %+v, %s", r, g.State)
	}
	if got := h.take(); !slices.Equal(got, []string{"joined " + a, "rebalance", "stable"}) && !slices.Equal(got, []string{"joined " + a, "rebalance"}) {
		t.Fatalf("events %v", got)
	}
	// A follower of the same generation must wait for the leader.
	syncAll(t, g, a, a)
	if g.State != Stable || h.take()[0] != "stable" {
		t.Fatalf("after sync: %s", g.State)
	}
	if g.Heartbeat(a, nil, 1) != 0 {
		t.Fatal("heartbeat in Stable")
	}

	b, chb := joinNew(t, g, "cb")
	if g.State != PreparingRebalance {
		t.Fatalf("b joining: %s", g.State)
	}
	waiting(t, "b before a rejoined", chb)
	if code := g.Heartbeat(a, nil, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("a's heartbeat during the rebalance: %v", kerr.ErrorForCode(code))
	}
	_, cha, _ = g.Join(joinReq(a, "ca"))
	ra, rb := answered(t, "a's rejoin", cha), answered(t, "b's join", chb)
	if ra.Generation != 2 || ra.Leader != a || len(ra.Members) != 2 || rb.Generation != 2 || rb.Members != nil || rb.Leader != a {
		t.Fatalf("generation 2: a %+v, b %+v", ra, rb)
	}
	if got := h.take(); !slices.Equal(got, []string{"joined " + b, "rebalance"}) {
		t.Fatalf("events %v", got)
	}
	// The follower's sync waits for the leader's.
	res, _, _, chs, ls := g.Sync(SyncRequest{MemberID: b, Generation: 2})
	if res.Code != 0 || ls != nil {
		t.Fatal("b's sync")
	}
	waiting(t, "b's sync before the leader's", chs)
	res, _, _, chl, ls := g.Sync(SyncRequest{MemberID: a, Generation: 2, Assignments: map[string][]byte{a: []byte("x"), "gone": []byte("y")}})
	if res.Code != 0 || ls == nil || len(ls.Assignments) != 2 || string(ls.Assignments[b]) != "" || ls.Snap.Meta.Generation != 2 || len(ls.Snap.Meta.Members) != 2 {
		t.Fatalf("leader's sync: %+v %+v", res, ls)
	}
	g.CompleteSync(ls.Generation, ls.Assignments, 0)
	if r := answered(t, "leader", chl); string(r.Assignment) != "x" {
		t.Fatalf("leader got %q", r.Assignment)
	}
	if r := answered(t, "follower", chs); r.Code != 0 || len(r.Assignment) != 0 {
		t.Fatalf("follower got %+v", r)
	}
	// In Stable a sync answers at once; a follower rejoining unchanged gets
	// the current generation.
	if res, pt, p, ch, _ := g.Sync(SyncRequest{MemberID: b, Generation: 2}); res.Code != 0 || ch != nil || pt != "consumer" || p != "range" {
		t.Fatalf("sync in Stable: %+v", res)
	}
	if res, ch, _ := g.Join(joinReq(b, "cb")); ch != nil || res.Generation != 2 || res.Code != 0 {
		t.Fatalf("follower's unchanged rejoin: %+v", res)
	}
}

// Errors of SyncGroup, Heartbeat and JoinGroup.
func TestClassicErrors(t *testing.T) {
	g, h := newClassic(0)
	a, cha := joinNew(t, g, "ca")
	answered(t, "join", cha)
	for _, c := range []struct {
		req  SyncRequest
		want int16
	}{
		{SyncRequest{MemberID: "nobody", Generation: 1}, kerr.UnknownMemberID.Code},
		{SyncRequest{MemberID: a, Generation: 7}, kerr.IllegalGeneration.Code},
		{SyncRequest{MemberID: a, Generation: 1, Protocol: new(string)}, kerr.InconsistentGroupProtocol.Code},
	} {
		if res, _, _, _, _ := g.Sync(c.req); res.Code != c.want {
			t.Errorf("sync %+v: %v, want %v", c.req, kerr.ErrorForCode(res.Code), kerr.ErrorForCode(c.want))
		}
	}
	if code := g.Heartbeat(a, nil, 0); code != kerr.IllegalGeneration.Code {
		t.Errorf("heartbeat of an old generation: %v", kerr.ErrorForCode(code))
	}
	if code := g.Heartbeat("nobody", nil, 1); code != kerr.UnknownMemberID.Code {
		t.Errorf("heartbeat of a stranger: %v", kerr.ErrorForCode(code))
	}
	other := joinReq("", "cx")
	other.ProtocolType = "connect"
	if res, _, _ := g.Join(other); res.Code != kerr.InconsistentGroupProtocol.Code {
		t.Errorf("another protocol type: %v", kerr.ErrorForCode(res.Code))
	}
	if res, _, _ := g.Join(joinReq("unknown-id", "cx")); res.Code != kerr.UnknownMemberID.Code {
		t.Errorf("an unknown member id: %v", kerr.ErrorForCode(res.Code))
	}
	h.consumer = 1
	if res, _, _ := g.Join(joinReq("", "cx")); res.Code != kerr.InconsistentGroupProtocol.Code {
		t.Errorf("a KIP-848 group with members: %v", kerr.ErrorForCode(res.Code))
	}
	h.consumer = 0
	// A Dead group answers COORDINATOR_NOT_AVAILABLE to everything.
	g.State = Dead
	if res, _, _ := g.Join(joinReq(a, "ca")); res.Code != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("join a Dead group: %v", kerr.ErrorForCode(res.Code))
	}
	if g.Heartbeat(a, nil, 1) != kerr.CoordinatorNotAvailable.Code || g.CheckCommit(a, 1, nil) != kerr.CoordinatorNotAvailable.Code {
		t.Error("heartbeat or commit to a Dead group")
	}
	if res, _, _, _, _ := g.Sync(SyncRequest{MemberID: a, Generation: 1}); res.Code != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("sync a Dead group: %v", kerr.ErrorForCode(res.Code))
	}
}

// A member that stops heartbeating is removed after its session timeout;
// one that does not rejoin a rebalance is removed when it completes; one
// that never syncs is removed after the rebalance timeout.
func TestClassicTimeouts(t *testing.T) {
	g, h := newClassic(0)
	a, cha := joinNew(t, g, "ca")
	answered(t, "a", cha)
	syncAll(t, g, a, a)
	b, chb := joinNew(t, g, "cb")
	_, cha, _ = g.Join(joinReq(a, "ca"))
	answered(t, "a", cha)
	answered(t, "b", chb)
	syncAll(t, g, a, a, b)
	h.take()

	// b goes silent: a keeps heartbeating every 5 s.
	for _, want := range []int16{0, kerr.RebalanceInProgress.Code} {
		h.clk.Advance(5 * time.Second)
		if code := g.Heartbeat(a, nil, 2); code != want {
			t.Fatalf("a's heartbeat: %v, want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(want))
		}
	}
	if g.Members[b] != nil || g.State != PreparingRebalance {
		t.Fatalf("after b's session: members %d, %s", len(g.Members), g.State)
	}
	if got := h.take(); !slices.Equal(got, []string{"expired " + b, "rebalance"}) {
		t.Fatalf("events %v", got)
	}
	// a does not rejoin either: the rebalance timeout removes it, keeping
	// its session alive meanwhile does not help.
	for range 6 {
		h.clk.Advance(5 * time.Second)
		g.Heartbeat(a, nil, 2)
	}
	if len(g.Members) != 0 || g.State != Empty || g.Generation != 3 {
		t.Fatalf("after the rebalance timeout: %d members, %s, generation %d", len(g.Members), g.State, g.Generation)
	}
	if got := h.take(); !slices.Equal(got, []string{"expired " + a, "stable"}) || len(h.persists) != 1 || h.persists[0].Meta.Generation != 3 {
		t.Fatalf("events %v, persists %v", got, h.persists)
	}

	// A member that joins but never syncs is removed after the rebalance
	// timeout, and the group rebalances (here: to Empty, when its join
	// times out too).
	c, chc := joinNew(t, g, "cc")
	answered(t, "c", chc)
	h.take()
	for range 6 {
		h.clk.Advance(5 * time.Second)
		g.Heartbeat(c, nil, g.Generation)
	}
	if g.Members[c] != nil {
		t.Fatalf("c never synced and is still a member (%s)", g.State)
	}
	if got := h.take(); !slices.Equal(got[:2], []string{"expired " + c, "rebalance"}) {
		t.Fatalf("events %v", got)
	}

	// A member id given out with MEMBER_ID_REQUIRED expires after a
	// session timeout.
	res, _, _ := g.Join(joinReq("", "cd"))
	if len(g.PendingMembers) != 1 {
		t.Fatal("no pending member")
	}
	h.clk.Advance(session)
	if len(g.PendingMembers) != 0 {
		t.Fatal("the pending member did not expire")
	}
	if r, _, _ := g.Join(joinReq(res.MemberID, "cd")); r.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("joining with an expired id: %v", kerr.ErrorForCode(r.Code))
	}
}

// group.initial.rebalance.delay.ms: the first rebalance waits, longer
// while members keep coming, at most the rebalance timeout.
func TestClassicInitialDelay(t *testing.T) {
	g, _ := newClassic(3 * time.Second)
	a, cha := joinNew(t, g, "ca")
	h := g.host.(*host)
	h.clk.Advance(2 * time.Second)
	b, chb := joinNew(t, g, "cb")
	h.clk.Advance(time.Second) // the first delay ends; b came: wait again
	waiting(t, "a during the second delay", cha)
	h.clk.Advance(3 * time.Second)
	ra, rb := answered(t, "a", cha), answered(t, "b", chb)
	if ra.Generation != 1 || rb.Generation != 1 || len(ra.Members) != 2 || ra.Leader != a || rb.MemberID != b {
		t.Fatalf("after the delay: %+v %+v", ra, rb)
	}
}

// Static members join without MEMBER_ID_REQUIRED; one coming back under a
// new id replaces its old incarnation without a rebalance once the
// metadata is written, or comes back as it was if the write fails.
func TestClassicStaticMembers(t *testing.T) {
	g, h := newClassic(0)
	inst := "instance-1"
	req := joinReq("", "ca")
	req.InstanceID = &inst
	_, ch, _ := g.Join(req)
	r := answered(t, "static join", ch)
	old := r.MemberID
	if r.Code != 0 || !strings.HasPrefix(old, "instance-1-") || g.Statics[inst] != old {
		t.Fatalf("static join: %+v", r)
	}
	syncAll(t, g, old, old)
	h.take()

	res, ch, sr := g.Join(req)
	if res.Code != 0 || sr == nil || ch == nil || g.Statics[inst] == old {
		t.Fatalf("static rejoin: %+v %v", res, sr)
	}
	newID := g.Statics[inst]
	if code := g.Heartbeat(old, &inst, 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("the old incarnation's heartbeat: %v", kerr.ErrorForCode(code))
	}
	g.FinishStaticRejoin(sr, 0)
	r = answered(t, "static rejoin", ch)
	if r.Code != 0 || r.MemberID != newID || r.Generation != 1 || !r.SkipAssignment || r.Leader != newID || g.State != Stable {
		t.Fatalf("after the write: %+v, %s", r, g.State)
	}
	if len(h.take()) != 0 {
		t.Fatal("a static replacement rebalanced")
	}

	// The write fails: the previous incarnation comes back.
	req.Version = 8
	res, ch, sr = g.Join(req)
	g.FinishStaticRejoin(sr, kerr.NotCoordinator.Code)
	if r := answered(t, "failed rejoin", ch); r.Code != kerr.NotCoordinator.Code || g.Statics[inst] != newID || g.Leader != newID {
		t.Fatalf("failed rejoin: %+v, statics %v", r, g.Statics)
	}

	// A static member leaves by instance id.
	// The last member leaving ends the rebalance at once, Empty.
	if code := g.Leave("", &inst, nil); code != 0 || len(g.Members) != 0 || g.State != Empty {
		t.Fatalf("leave by instance: %v %s", kerr.ErrorForCode(code), g.State)
	}
	if code := g.Leave("", &inst, nil); code != kerr.UnknownMemberID.Code {
		t.Fatalf("leave again: %v", kerr.ErrorForCode(code))
	}
}

// LeaveGroup: a member leaving rebalances; a pending id is forgotten.
func TestClassicLeave(t *testing.T) {
	g, h := newClassic(0)
	a, cha := joinNew(t, g, "ca")
	answered(t, "a", cha)
	syncAll(t, g, a, a)
	h.take()
	pend, _, _ := g.Join(joinReq("", "cb"))
	if code := g.Leave(pend.MemberID, nil, nil); code != 0 || len(g.PendingMembers) != 0 {
		t.Fatalf("leave a pending id: %v", kerr.ErrorForCode(code))
	}
	why := "shutting down"
	if code := g.Leave(a, nil, &why); code != 0 || g.State != Empty || g.Generation != 2 || len(h.persists) != 1 {
		t.Fatalf("leave: %v %s", kerr.ErrorForCode(code), g.State)
	}
	if got := h.events; len(got) != 3 || got[0].Type != MemberLeft || got[0].Reason != "member left: shutting down" || got[1].Type != RebalanceStarted {
		t.Fatalf("events %+v", got)
	}
	if code := g.Leave("nobody", nil, nil); code != kerr.UnknownMemberID.Code {
		t.Fatalf("a stranger leaving: %v", kerr.ErrorForCode(code))
	}
}

// OffsetCommit's membership checks.
func TestClassicCheckCommit(t *testing.T) {
	g, h := newClassic(0)
	if code := g.CheckCommit("", -1, nil); code != 0 {
		t.Fatalf("a simple commit to an empty group: %v", kerr.ErrorForCode(code))
	}
	a, cha := joinNew(t, g, "ca")
	answered(t, "a", cha)
	for _, c := range []struct {
		member string
		gen    int32
		want   int16
	}{
		{a, 1, kerr.RebalanceInProgress.Code}, // CompletingRebalance
		{"", -1, kerr.UnknownMemberID.Code},
		{"nobody", 1, kerr.UnknownMemberID.Code},
		{a, 0, kerr.IllegalGeneration.Code},
	} {
		if code := g.CheckCommit(c.member, c.gen, nil); code != c.want {
			t.Errorf("commit %q gen %d: %v, want %v", c.member, c.gen, kerr.ErrorForCode(code), kerr.ErrorForCode(c.want))
		}
	}
	syncAll(t, g, a, a)
	if code := g.CheckCommit(a, 1, nil); code != 0 {
		t.Fatalf("a member's commit: %v", kerr.ErrorForCode(code))
	}
	if g.NoMembers() || !g.HasMembers() {
		t.Fatal("membership")
	}
	h.consumer = 0
}

// Protocol selection: every member must support it, the most first
// choices win, ties go to the oldest member's preference.
func TestClassicSelectProtocol(t *testing.T) {
	g, _ := newClassic(0)
	add := func(id string, protos ...string) {
		m := &Member{ID: id}
		for _, p := range protos {
			m.Protocols = append(m.Protocols, Protocol{Name: p})
		}
		m.seq = g.nextSeq
		g.nextSeq++
		g.Members[id] = m
	}
	add("a", "roundrobin", "range")
	add("b", "range", "roundrobin", "sticky")
	if p := g.selectProtocol(); p != "roundrobin" {
		t.Fatalf("tie: %s", p)
	}
	add("c", "range", "roundrobin")
	if p := g.selectProtocol(); p != "range" {
		t.Fatalf("majority: %s", p)
	}
	if g.supports("consumer", []Protocol{{Name: "sticky"}}) {
		t.Fatal("sticky is not supported by every member")
	}
}

// A new coordinator restores the members from the metadata record, with
// fresh sessions; Shutdown answers every waiting request.
func TestClassicRestoreAndShutdown(t *testing.T) {
	g, h := newClassic(0)
	inst := "i"
	md := &Meta{ProtocolType: "consumer", Protocol: "range", Generation: 4, Leader: "gone", Members: []MemberMeta{
		{ID: "m1", ClientID: "c1", SessionTimeoutMs: 10000, RebalanceTimeoutMs: 30000, Subscription: (&kmsg.ConsumerMemberMetadata{Topics: []string{"t"}}).AppendTo(nil), Assignment: []byte("a1")},
		{ID: "m2", InstanceID: &inst, ClientID: "c2", SessionTimeoutMs: 20000, RebalanceTimeoutMs: 30000},
	}}
	g.Restore(md)
	if g.State != Stable || g.Generation != 4 || g.Leader != "m1" || g.Statics["i"] != "m2" || string(g.Members["m1"].Assignment) != "a1" {
		t.Fatalf("restored: %s gen %d leader %s", g.State, g.Generation, g.Leader)
	}
	if ts, ok := Subscription(g.Members["m1"].MetadataFor("range")); !ok || !slices.Equal(ts, []string{"t"}) {
		t.Fatalf("subscription %v", ts)
	}
	snap := g.SnapshotMeta(nil)
	if snap.Seq != 1 || len(snap.Meta.Members) != 2 || snap.Meta.Members[0].ID != "m1" {
		t.Fatalf("snapshot %+v", snap)
	}
	// m1 keeps heartbeating, m2 does not: 20 s later only m1 is left.
	for range 4 {
		h.clk.Advance(5 * time.Second)
		g.Heartbeat("m1", nil, g.Generation)
	}
	if g.Members["m2"] != nil || g.Members["m1"] == nil {
		t.Fatalf("after m2's session: %v", g.Members)
	}
	// The leader rejoins (a rebalance it completes alone) and its sync
	// waits for nothing but its own write, when the coordinator moves.
	_, ch, _ := g.Join(joinReq("m1", "c1"))
	if r := answered(t, "leader's rejoin", ch); r.Generation != 5 {
		t.Fatalf("rejoin: %+v", r)
	}
	_, _, _, sch, ls := g.Sync(SyncRequest{MemberID: "m1", Generation: 5})
	if ls == nil {
		t.Fatal("no leader sync")
	}
	if !g.Shutdown(kerr.NotCoordinator.Code) || g.Shutdown(kerr.NotCoordinator.Code) {
		t.Fatal("Shutdown twice")
	}
	if r := answered(t, "sync at shutdown", sch); r.Code != kerr.NotCoordinator.Code {
		t.Fatalf("sync at shutdown: %+v", r)
	}
	g.CompleteSync(ls.Generation, ls.Assignments, 0) // too late: nothing to answer
	h.clk.Advance(time.Hour)                         // no timer of a shut group fires
	if DecodeAssignment([]byte{0xff}) != nil || len(DecodeAssignment(nil)) != 0 {
		t.Fatal("DecodeAssignment")
	}
	a := (&kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{2, 0}}}}).AppendTo(nil)
	if got := DecodeAssignment(a); !slices.Equal(got["t"], []int32{0, 2}) {
		t.Fatalf("DecodeAssignment %v", got)
	}
	if _, ok := Subscription([]byte{0xff}); ok {
		t.Fatal("an unreadable subscription")
	}
}
