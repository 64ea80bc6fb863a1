package replication

import (
	"slices"
	"testing"
	"time"
)

// got is a change in brief: kind, broker, offsets and reason.
type got struct {
	Kind     ChangeKind
	Broker   int32
	From, To int64
	Reason   string
}

func summary(cs []Change) []got {
	var out []got
	for _, c := range cs {
		out = append(out, got{c.Kind, c.Broker, c.From, c.To, c.Reason})
	}
	return out
}

func checkChanges(t *testing.T, p *Partition, want ...got) []Change {
	t.Helper()
	cs := p.TakeChanges()
	if !slices.Equal(summary(cs), want) {
		t.Fatalf("changes\n got %+v\nwant %+v", summary(cs), want)
	}
	if p.HasChanges() {
		t.Fatal("TakeChanges left changes behind")
	}
	return cs
}

func TestNoChangesForCreationAppendsAndFetches(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(3), -1)
	replicateAll(t, p)
	checkReplicas(t, p, map[int32]offsets{1: {3, 3}, 2: {3, 3}, 3: {3, 3}})
	checkChanges(t, p)
	if p.Committed() != 3 {
		t.Fatalf("committed %d, want 3", p.Committed())
	}
}

func TestChangesISRShrinkAndExpand(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	fetch(t, p, 2, t0)
	later := t0.Add(31 * time.Second)
	p.MaybeShrinkISR(later)
	cs := checkChanges(t, p, got{ISRShrunk, 2, 0, 0, ReasonLag}, got{ISRShrunk, 3, 0, 0, ReasonLag})
	if !slices.Equal(cs[1].ISR, []int32{1}) || cs[1].Epoch != 0 {
		t.Fatalf("ISR after the shrink %v epoch %d, want [1] 0", cs[1].ISR, cs[1].Epoch)
	}
	fetch(t, p, 3, later) // gets 2 records
	fetch(t, p, 3, later) // leader learns LEO 2 = HW 2: back in
	checkChanges(t, p, got{ISRExpanded, 3, 0, 0, ReasonCaughtUp})
	p.SetISR([]int32{1, 2}, later)
	checkChanges(t, p, got{ISRShrunk, 3, 0, 0, ReasonManual}, got{ISRExpanded, 2, 0, 0, ReasonManual})
	p.RemoveFromISR(2, later)
	checkChanges(t, p, got{ISRShrunk, 2, 0, 0, ReasonFenced})
}

func TestChangesUncleanElectionLosesAcknowledgedRecords(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(2), 1)
	p.SetISR([]int32{1}, t0) // HW 2 with the leader alone: acknowledged
	p.SetOnline(1, false, t0)
	checkChanges(t, p, got{ISRShrunk, 2, 0, 0, ReasonManual})
	if code := p.Elect(2, true, t0); code != 0 {
		t.Fatal(code)
	}
	cs := checkChanges(t, p,
		got{LeaderChanged, 2, 0, 0, ""},
		got{ISRShrunk, 1, 0, 0, ReasonUncleanElection},
		got{ISRExpanded, 2, 0, 0, ReasonUncleanElection},
		got{RecordsLost, 2, 0, 2, ReasonUncleanElection})
	if cs[0].OldLeader != 1 || cs[0].Epoch != 1 || !cs[0].Unclean || !slices.Equal(cs[0].ISR, []int32{2}) {
		t.Fatalf("leader change %+v", cs[0])
	}
	if p.Committed() != 0 {
		t.Fatalf("committed %d after the loss, want 0", p.Committed())
	}
	mustAppend(t, p, batch(1), 1)
	p.SetOnline(1, true, t0)
	fetch(t, p, 1, t0)
	checkChanges(t, p, got{LogTruncated, 1, 2, 0, ReasonLeaderEpoch})
}

// KIP-101 scenario 1 under both truncation rules: the pre-0.11 rule
// truncates the restarted follower to its stale HW and the election then
// loses committed m2; by epoch nothing is truncated or lost.
func TestChangesKIP101Scenario1(t *testing.T) {
	for _, mode := range []TruncationMode{TruncateToHW, TruncateByEpoch} {
		p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1, Truncation: mode}, t0)
		mustAppend(t, p, batch(1), 1)
		fetch(t, p, 2, t0)
		fetch(t, p, 2, t0)
		mustAppend(t, p, batch(1), 1)
		fetch(t, p, 2, t0)
		fetch(t, p, 2, t0)
		p.CheckpointHW()
		p.Crash(2, false)
		p.Restart(2)
		crash(p, 1)
		if code := p.Elect(2, false, t0); code != 0 {
			t.Fatal(code)
		}
		if mode == TruncateToHW {
			checkChanges(t, p,
				got{LogTruncated, 2, 2, 1, ReasonHighWatermark},
				got{ISRShrunk, 1, 0, 0, ReasonFenced},
				got{LeaderChanged, 2, 0, 0, ""},
				got{RecordsLost, 2, 1, 2, ReasonShortLeader})
		} else {
			checkChanges(t, p, got{ISRShrunk, 1, 0, 0, ReasonFenced}, got{LeaderChanged, 2, 0, 0, ""})
		}
	}
}

func TestChangesPowerLossAndLeaderless(t *testing.T) {
	p := NewPartition([]int32{1}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(2), 1)
	p.Flush(1)
	mustAppend(t, p, batch(3), 1) // HW 5, recovery point 2
	p.Crash(1, true)
	p.MakeLeaderless()
	cs := checkChanges(t, p, got{LogTruncated, 1, 5, 2, ReasonPowerLoss}, got{LeaderChanged, -1, 0, 0, ""})
	if cs[1].OldLeader != 1 || cs[1].Epoch != 1 {
		t.Fatalf("leaderless change %+v", cs[1])
	}
	p.Restart(1)
	if code := p.Elect(1, false, t0); code != 0 {
		t.Fatal(code)
	}
	checkChanges(t, p, got{LeaderChanged, 1, 0, 0, ""}, got{RecordsLost, 1, 2, 5, ReasonShortLeader})
}

// A deposed leader with records of its own past the HW comes back as the
// unclean leader: its log is longer than where it agrees with the
// committed history, and the loss starts where the epochs part, not at its
// LEO.
func TestChangesLossStartsWhereTheLogsDiverge(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(5), -1)
	replicateAll(t, p)
	mustAppend(t, p, batch(5), 1) // 5..9 on broker 1 only, epoch 0
	crash(p, 1)
	if code := p.Elect(2, false, t0); code != 0 {
		t.Fatal(code)
	}
	mustAppend(t, p, batch(8), -1) // 5..12 at epoch 1 on 2, then on 3
	replicateAll(t, p)
	checkReplicas(t, p, map[int32]offsets{1: {10, 5}, 2: {13, 13}, 3: {13, 13}})
	p.TakeChanges()

	p.SetOnline(2, false, t0)
	p.SetOnline(3, false, t0)
	p.MakeLeaderless()
	p.SetOnline(1, true, t0)
	if code := p.Elect(1, true, t0); code != 0 {
		t.Fatal(code)
	}
	cs := p.TakeChanges()
	lost := cs[len(cs)-1]
	if lost.Kind != RecordsLost || lost.From != 5 || lost.To != 13 || lost.Broker != 1 {
		t.Fatalf("last change %+v, want records 5..12 lost on leader 1 (LEO 10 holds epoch-0 records from 5)", lost)
	}
	if p.Committed() != 5 {
		t.Fatalf("committed %d after the loss, want 5", p.Committed())
	}
}

func TestAgreedUpTo(t *testing.T) {
	l := &Log{&logData{start: 0, end: 10, epochs: []EpochEntry{{0, 0}, {2, 6}}}}
	for _, c := range []struct {
		history []EpochEntry
		end     int64
		want    int64
	}{
		{[]EpochEntry{{0, 0}, {2, 6}}, 10, 10},          // the same history
		{[]EpochEntry{{0, 0}, {2, 6}}, 8, 8},            // bounded by what was committed
		{[]EpochEntry{{0, 0}, {1, 4}, {2, 6}}, 10, 4},   // an epoch l never saw
		{[]EpochEntry{{0, 0}}, 12, 6},                   // l's own later epoch
		{[]EpochEntry{{0, 0}, {2, 6}, {3, 9}}, 12, 9},   // l lacks epoch 3's records
		{[]EpochEntry{{1, 0}}, 10, 0},                   // nothing in common
		{[]EpochEntry{{0, 0}, {2, 6}, {3, 20}}, 30, 10}, // l is short
	} {
		if got := agreedUpTo(l, c.history, c.end); got != c.want {
			t.Errorf("agreedUpTo(%v, %v, %d) = %d, want %d", l.epochs, c.history, c.end, got, c.want)
		}
	}
}

func TestPendingChangesAreBounded(t *testing.T) {
	p := newPartition(t, 1)
	for i := range maxPendingChanges + 10 {
		p.SetISR([]int32{1, 2 + int32(i%2)}, t0) // one shrink and one expand each
	}
	cs := p.TakeChanges()
	if len(cs) != maxPendingChanges {
		t.Fatalf("%d changes kept, want %d", len(cs), maxPendingChanges)
	}
	if last := cs[len(cs)-1]; !slices.Equal(last.ISR, []int32{1, 3}) {
		t.Fatalf("newest change %+v, want the last SetISR's", last)
	}
}

// DeleteRecords moves every replica's log start up to the offset, or to
// the replica's LEO if that is lower; such a follower's next fetch is out
// of range and restarts its log at the leader's log start.
func TestChangesLogStartMoved(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	replicateAll(t, p) // everyone at 2, HW 2
	fetch(t, p, 2, t0)
	mustAppend(t, p, batch(3), 1) // 3 does not fetch from here on
	fetch(t, p, 2, t0)
	later := t0.Add(31 * time.Second)
	p.MaybeShrinkISR(later) // 3 leaves: the HW reaches 5 with 1 and 2
	fetch(t, p, 2, later)
	fetch(t, p, 2, later)
	checkReplicas(t, p, map[int32]offsets{1: {5, 5}, 2: {5, 5}, 3: {2, 2}})
	p.TakeChanges()

	if low, code := p.DeleteRecords(4); code != 0 || low != 4 {
		t.Fatalf("DeleteRecords(4) = %d, %d", low, code)
	}
	// Replica 3 ends at 2: its start stops there.
	checkChanges(t, p, got{LogStartMoved, 1, 0, 4, ReasonDeleteRecords}, got{LogStartMoved, 2, 0, 4, ReasonDeleteRecords},
		got{LogStartMoved, 3, 0, 2, ReasonDeleteRecords})
	if s := p.Replica(3).LogStartOffset(); s != 2 {
		t.Fatalf("replica 3 log start %d, want 2", s)
	}
	if _, code := p.DeleteRecords(4); code != 0 {
		t.Fatal(code)
	}
	checkChanges(t, p) // nothing moved

	fetch(t, p, 3, later)
	checkChanges(t, p, got{LogStartMoved, 3, 2, 4, ReasonFollowerReset})
	fetch(t, p, 3, later) // the leader learns LEO 5: back in the ISR
	checkChanges(t, p, got{ISRExpanded, 3, 0, 0, ReasonCaughtUp})
	if s, e := p.Replica(3).LogStartOffset(), p.Replica(3).LEO(); s != 4 || e != 5 {
		t.Fatalf("replica 3 log %d-%d after the reset, want 4-5", s, e)
	}
}
