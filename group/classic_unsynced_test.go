package group

import (
	"slices"
	"testing"
	"time"
)

// New members that join (v1, no member id round trip) and never sync nor
// heartbeat, session and rebalance timeout both 6 s: the member's session
// and the pending-sync timer share a deadline, and whichever fires first
// removes it; together they move the generation once, as Kafka's
// heartbeat expiry and expirePendingSync do (the rebalance one starts
// cancels the other).

func unsyncedReq(client string) JoinRequest {
	r := joinReq("", client)
	r.Version, r.Session, r.Rebalance = 1, 6*time.Second, 6*time.Second
	return r
}

// TestClassicUnsyncedJoinWhileMemberLives: b joins while a (joined, never
// synced) is still there: b waits until a's session ends at exactly 6 s
// after a's join completed, then completes generation 2 alone.
func TestClassicUnsyncedJoinWhileMemberLives(t *testing.T) {
	g, h := newClassic(0)
	_, cha, _ := g.Join(unsyncedReq("ca"))
	ra := answered(t, "a", cha)
	if ra.Generation != 1 || g.State != CompletingRebalance {
		t.Fatalf("a: %+v, %s", ra, g.State)
	}
	h.clk.Advance(time.Second)
	_, chb, _ := g.Join(unsyncedReq("cb"))
	if g.State != PreparingRebalance || g.Generation != 1 {
		t.Fatalf("b's join: %s, generation %d", g.State, g.Generation)
	}
	h.take()
	h.clk.Advance(5*time.Second - time.Nanosecond)
	waiting(t, "b before a's session ends", chb)
	h.clk.Advance(time.Nanosecond)
	rb := answered(t, "b", chb)
	if rb.Generation != 2 || rb.Leader != rb.MemberID || len(rb.Members) != 1 || len(g.Members) != 1 {
		t.Fatalf("b: %+v, %d members", rb, len(g.Members))
	}
	if got := h.take(); !slices.Equal(got, []string{"expired " + ra.MemberID}) {
		t.Fatalf("events %v", got)
	}
	// a's pending-sync timer was due at the same instant: it was cancelled
	// by the rebalance b's join started, and moves nothing now.
	h.clk.Advance(time.Second)
	if g.Generation != 2 || g.State != CompletingRebalance {
		t.Fatalf("after a's sync deadline: %s, generation %d", g.State, g.Generation)
	}
}

// TestClassicUnsyncedMemberExpiresAlone: a alone never syncs: at 6 s it is
// removed and the group rebalances to Empty, generation 2, written once;
// the next join then completes generation 3 at once.
func TestClassicUnsyncedMemberExpiresAlone(t *testing.T) {
	g, h := newClassic(0)
	_, cha, _ := g.Join(unsyncedReq("ca"))
	ra := answered(t, "a", cha)
	h.take()
	h.clk.Advance(6*time.Second - time.Nanosecond)
	if g.State != CompletingRebalance || g.Generation != 1 {
		t.Fatalf("before 6 s: %s, generation %d", g.State, g.Generation)
	}
	h.clk.Advance(time.Nanosecond)
	if g.State != Empty || g.Generation != 2 || len(g.Members) != 0 {
		t.Fatalf("after 6 s: %s, generation %d, %d members", g.State, g.Generation, len(g.Members))
	}
	if got := h.take(); !slices.Equal(got, []string{"expired " + ra.MemberID, "rebalance", "stable"}) {
		t.Fatalf("events %v", got)
	}
	if len(h.persists) != 1 || h.persists[0].Meta.Generation != 2 {
		t.Fatalf("persists %+v", h.persists)
	}
	h.clk.Advance(time.Minute) // nothing else is due
	if g.Generation != 2 {
		t.Fatalf("generation %d after both timers", g.Generation)
	}
	_, chb, _ := g.Join(unsyncedReq("cb"))
	if rb := answered(t, "b", chb); rb.Generation != 3 {
		t.Fatalf("b: %+v", rb)
	}
}
