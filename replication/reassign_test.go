package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func allOnline(int32) bool { return true }

func checkReassignment(t *testing.T, p *Partition, replicas, adding, removing []int32) {
	t.Helper()
	ra, ok := p.Reassignment()
	if !ok {
		t.Fatalf("no reassignment in progress; replicas %v", p.replicaIDs())
	}
	if !slices.Equal(ra.Replicas, replicas) || !slices.Equal(ra.Adding, adding) || !slices.Equal(ra.Removing, removing) {
		t.Fatalf("reassignment %+v, want replicas %v adding %v removing %v", ra, replicas, adding, removing)
	}
}

func changeKinds(cs []Change) []ChangeKind {
	var out []ChangeKind
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

// TestReassignMovesAFollower: [1 2 3] → [1 2 4]. Replica 4 starts empty at
// LEO 0, fetches the leader's log, joins the ISR once it reaches the HW,
// and only then does 3 leave, with the leader epoch bumped.
func TestReassignMovesAFollower(t *testing.T) {
	p := newPartition(t, 2)
	mustAppend(t, p, batch(3), -1)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	checkReplicas(t, p, map[int32]offsets{1: {3, 3}, 2: {3, 0}, 3: {3, 0}})
	p.TakeChanges()

	if code := p.Reassign([]int32{1, 2, 4}, allOnline, t0); code != 0 {
		t.Fatalf("reassign: %v", kerr.ErrorForCode(code))
	}
	checkReassignment(t, p, []int32{1, 2, 4, 3}, []int32{4}, []int32{3})
	checkReplicas(t, p, map[int32]offsets{4: {0, 0}})
	if p.InISR(4) || p.LeaderEpoch() != 0 {
		t.Fatalf("ISR %v epoch %d: the new replica must earn its place", p.ISR(), p.LeaderEpoch())
	}

	// More data arrives before 4 copies: HW 5 needs 2 and 3, not 4.
	mustAppend(t, p, batch(2), -1)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	fetch(t, p, 2, t0)
	checkReplicas(t, p, map[int32]offsets{1: {5, 3}})
	fetch(t, p, 3, t0)
	checkReplicas(t, p, map[int32]offsets{1: {5, 5}})

	// 4's first fetch copies offsets 0-4; the leader learns 4 is at LEO 0.
	res := fetch(t, p, 4, t0)
	if res.Batches != 2 || res.HW != 5 {
		t.Fatalf("first fetch by 4: %+v", res)
	}
	checkReplicas(t, p, map[int32]offsets{4: {5, 5}})
	if p.InISR(4) {
		t.Fatal("4 joined the ISR before the leader learnt its LEO")
	}
	checkReassignment(t, p, []int32{1, 2, 4, 3}, []int32{4}, []int32{3})

	// Its next fetch says LEO 5 = HW: it joins, and the reassignment
	// completes: 3 is removed with its log, the epoch moves to 1.
	fetch(t, p, 4, t0)
	if _, ok := p.Reassignment(); ok {
		t.Fatal("reassignment still in progress")
	}
	if got := p.replicaIDs(); !slices.Equal(got, []int32{1, 2, 4}) {
		t.Fatalf("replicas %v, want [1 2 4]", got)
	}
	if p.Replica(3) != nil || !slices.Equal(p.ISR(), []int32{1, 2, 4}) || p.Leader() != 1 || p.LeaderEpoch() != 1 {
		t.Fatalf("after: ISR %v leader %d epoch %d", p.ISR(), p.Leader(), p.LeaderEpoch())
	}
	cs := p.TakeChanges()
	if !slices.Equal(changeKinds(cs), []ChangeKind{ISRExpanded, ISRShrunk, ReassignmentCompleted}) ||
		cs[1].Broker != 3 || cs[1].Reason != ReasonReassignment || !slices.Equal(cs[2].Replicas, []int32{1, 2, 4}) {
		t.Fatalf("changes %+v", cs)
	}

	// The new replica carries on as a follower of the new epoch: a write
	// commits on 1, 2 and 4.
	mustAppend(t, p, batch(1), -1)
	for range 3 { // data, the leader learns the LEOs, the followers learn the HW
		fetch(t, p, 2, t0)
		fetch(t, p, 4, t0)
	}
	checkReplicas(t, p, map[int32]offsets{1: {6, 6}, 2: {6, 6}, 4: {6, 6}})
	if _, code := p.ReplicaFetch(3, 1<<20, t0); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("removed replica fetch: %d", code)
	}
}

// TestReassignMovesTheLeader: [1 2] → [3 2]. Leadership moves to 3 once
// it has caught up and 1 leaves; nothing committed is lost.
func TestReassignMovesTheLeader(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(4), -1)
	fetch(t, p, 2, t0)
	fetch(t, p, 2, t0)
	p.Reassign([]int32{3, 2}, allOnline, t0)
	checkReassignment(t, p, []int32{3, 2, 1}, []int32{3}, []int32{1})
	if p.Leader() != 1 {
		t.Fatalf("leader %d moved before 3 caught up", p.Leader())
	}
	fetch(t, p, 3, t0)
	fetch(t, p, 3, t0)
	if p.Leader() != 3 || p.LeaderEpoch() != 1 || !slices.Equal(p.replicaIDs(), []int32{3, 2}) || !slices.Equal(p.ISR(), []int32{3, 2}) {
		t.Fatalf("leader %d epoch %d replicas %v ISR %v", p.Leader(), p.LeaderEpoch(), p.replicaIDs(), p.ISR())
	}
	checkReplicas(t, p, map[int32]offsets{3: {4, 4}})
	if p.EpochStartOffset() != 4 {
		t.Fatalf("epoch start %d, want 4", p.EpochStartOffset())
	}
	cs := p.TakeChanges()
	if i := slices.IndexFunc(cs, func(c Change) bool { return c.Kind == RecordsLost }); i >= 0 {
		t.Fatalf("records lost: %+v", cs[i])
	}
	if i := slices.IndexFunc(cs, func(c Change) bool { return c.Kind == LeaderChanged }); i < 0 || cs[i].Broker != 3 || cs[i].OldLeader != 1 {
		t.Fatalf("no leader change to 3: %+v", cs)
	}
}

// TestReassignPendingWhileTargetDown: the adding replica's broker is down,
// so it never fetches and the reassignment waits; once it is back it
// catches up and the reassignment completes.
func TestReassignPendingWhileTargetDown(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(2), 1)
	fetch(t, p, 2, t0)
	fetch(t, p, 2, t0)
	p.Reassign([]int32{1, 3}, func(id int32) bool { return id != 3 }, t0)
	if _, code := p.ReplicaFetch(3, 1<<20, t0); code != kerr.ReplicaNotAvailable.Code {
		t.Fatalf("fetch by a stopped replica: %d", code)
	}
	now := t0.Add(time.Hour)
	p.MaybeShrinkISR(now) // 2 did not fetch for an hour: no matter
	checkReassignment(t, p, []int32{1, 3, 2}, []int32{3}, []int32{2})
	p.Restart(3)
	fetch(t, p, 3, now)
	fetch(t, p, 3, now)
	if _, ok := p.Reassignment(); ok || !slices.Equal(p.replicaIDs(), []int32{1, 3}) {
		t.Fatalf("replicas %v, reassignment not completed", p.replicaIDs())
	}
	checkReplicas(t, p, map[int32]offsets{3: {2, 2}})
}

// TestReassignCancel: cancelling reverts to the original replicas and
// deletes the half-filled new one.
func TestReassignCancel(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(3), 1)
	for range 2 {
		fetch(t, p, 2, t0)
		fetch(t, p, 3, t0)
	}
	p.Reassign([]int32{4, 5, 6}, allOnline, t0)
	checkReassignment(t, p, []int32{4, 5, 6, 1, 2, 3}, []int32{4, 5, 6}, []int32{1, 2, 3})
	fetch(t, p, 4, t0)
	checkReplicas(t, p, map[int32]offsets{4: {3, 3}})
	// A new target replaces the old: 5 and 6 go at once, 4 stays.
	p.Reassign([]int32{1, 2, 4}, allOnline, t0)
	checkReassignment(t, p, []int32{1, 2, 4, 3}, []int32{4}, []int32{3})
	if p.Replica(5) != nil {
		t.Fatal("replica 5 survived a new target without it")
	}
	p.TakeChanges()
	if !p.CancelReassignment(t0) {
		t.Fatal("nothing to cancel")
	}
	if _, ok := p.Reassignment(); ok || !slices.Equal(p.replicaIDs(), []int32{1, 2, 3}) || p.Replica(4) != nil || p.Leader() != 1 || p.LeaderEpoch() != 0 {
		t.Fatalf("after cancel: replicas %v leader %d epoch %d", p.replicaIDs(), p.Leader(), p.LeaderEpoch())
	}
	if cs := p.TakeChanges(); len(cs) != 1 || cs[0].Kind != ReassignmentCancelled || !slices.Equal(cs[0].Replicas, []int32{1, 2, 3}) {
		t.Fatalf("changes %+v", cs)
	}
	if p.CancelReassignment(t0) {
		t.Fatal("cancelled twice")
	}
}

// TestReassignWithoutNewReplicas: a reorder completes at once without an
// epoch bump and leaves the ISR's order as it was (as KRaft does); a
// shrink to replicas in the ISR completes at once with one; a bad target
// is refused.
func TestReassignWithoutNewReplicas(t *testing.T) {
	p := newPartition(t, 1)
	if code := p.Reassign([]int32{3, 1, 2}, allOnline, t0); code != 0 {
		t.Fatal(code)
	}
	if _, ok := p.Reassignment(); ok || !slices.Equal(p.replicaIDs(), []int32{3, 1, 2}) || p.Leader() != 1 || p.LeaderEpoch() != 0 {
		t.Fatalf("reorder: replicas %v leader %d epoch %d", p.replicaIDs(), p.Leader(), p.LeaderEpoch())
	}
	if !slices.Equal(p.ISR(), []int32{1, 2, 3}) {
		t.Fatalf("reorder: ISR %v, want [1 2 3] as before", p.ISR())
	}
	p.Reassign([]int32{2, 3}, allOnline, t0)
	if _, ok := p.Reassignment(); ok || !slices.Equal(p.replicaIDs(), []int32{2, 3}) || p.Leader() != 2 || p.LeaderEpoch() != 1 {
		t.Fatalf("shrink: replicas %v leader %d epoch %d", p.replicaIDs(), p.Leader(), p.LeaderEpoch())
	}
	if !slices.Equal(p.ISR(), []int32{2, 3}) {
		t.Fatalf("shrink: ISR %v, want [2 3]", p.ISR())
	}
	for _, bad := range [][]int32{nil, {2, 2}} {
		if code := p.Reassign(bad, allOnline, t0); code != kerr.InvalidReplicaAssignment.Code {
			t.Errorf("target %v: %d", bad, code)
		}
	}
}

// TestReassignAfterDeleteRecords: a new replica of a partition whose log
// start has moved starts its log there, like Kafka's follower answered
// OFFSET_OUT_OF_RANGE, and still joins the ISR and completes the move.
func TestReassignAfterDeleteRecords(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(3), 1)
	mustAppend(t, p, batch(3), 1)
	fetch(t, p, 2, t0)
	fetch(t, p, 2, t0)
	if low, code := p.DeleteRecords(3); code != 0 || low != 3 {
		t.Fatalf("delete records: %d %d", low, code)
	}
	p.Reassign([]int32{1, 3}, allOnline, t0)
	res := fetch(t, p, 3, t0)
	if r := p.Replica(3); res.Batches != 1 || r.LogStartOffset() != 3 || r.LEO() != 6 {
		t.Fatalf("first fetch %+v: log start %d LEO %d, want 3 and 6", res, r.LogStartOffset(), r.LEO())
	}
	fetch(t, p, 3, t0)
	if _, ok := p.Reassignment(); ok || !slices.Equal(p.replicaIDs(), []int32{1, 3}) {
		t.Fatalf("replicas %v, reassignment not completed", p.replicaIDs())
	}
	checkReplicas(t, p, map[int32]offsets{3: {6, 6}})
}
