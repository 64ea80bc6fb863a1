package group

import (
	"encoding/json"
	"maps"
	"testing"
)

func offsetValue(t *testing.T, o Offset) []byte {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	tp0 = TopicPartition{"t", 0}
	tp1 = TopicPartition{"t", 1}
)

// Commits, tombstones and unreadable values, replayed in order.
func TestOffsetsReplayCommit(t *testing.T) {
	o := NewOffsets()
	if !o.Empty() {
		t.Fatal("new offsets are not empty")
	}
	got, ok := o.ReplayCommit(tp0, offsetValue(t, Offset{Offset: 5, LeaderEpoch: 2, Metadata: "m", Timestamp: 100}))
	if !ok || got != (Offset{Offset: 5, LeaderEpoch: 2, Metadata: "m", Timestamp: 100}) {
		t.Fatalf("commit: %v %v", got, ok)
	}
	o.ReplayCommit(tp1, offsetValue(t, Offset{Offset: 7, LeaderEpoch: -1}))
	o.ReplayCommit(tp0, offsetValue(t, Offset{Offset: 6, LeaderEpoch: 2}))
	if _, ok := o.ReplayCommit(tp1, []byte("{not json")); ok {
		t.Fatal("an unreadable value was applied")
	}
	want := map[TopicPartition]Offset{tp0: {Offset: 6, LeaderEpoch: 2}, tp1: {Offset: 7, LeaderEpoch: -1}}
	if !maps.Equal(o.Committed, want) {
		t.Fatalf("committed %v, want %v", o.Committed, want)
	}
	if _, ok := o.ReplayCommit(tp1, nil); ok {
		t.Fatal("a tombstone answered an offset")
	}
	if _, has := o.Committed[tp1]; has || o.Empty() {
		t.Fatalf("after the tombstone: %v", o.Committed)
	}
	o.ReplayCommit(tp0, nil)
	if !o.Empty() {
		t.Fatalf("after both tombstones: %v", o.Committed)
	}
}

// Transactional offsets stay pending (and unstable) until their
// producer's marker: a commit makes them committed over what was there,
// an abort drops them; other producers are untouched.
func TestOffsetsTransactions(t *testing.T) {
	o := NewOffsets()
	o.ReplayCommit(tp0, offsetValue(t, Offset{Offset: 1}))
	o.ReplayPending(7, tp0, offsetValue(t, Offset{Offset: 10}))
	o.ReplayPending(7, tp1, offsetValue(t, Offset{Offset: 11}))
	o.ReplayPending(8, tp1, offsetValue(t, Offset{Offset: 20}))
	o.ReplayPending(8, tp1, nil)               // a tombstone is not a pending offset
	o.ReplayPending(9, tp1, []byte("{broken")) // nor is an unreadable value
	if o.Committed[tp0].Offset != 1 || !o.Unstable(tp0) || !o.Unstable(tp1) {
		t.Fatalf("pending offsets are visible or not unstable: %v", o.Committed)
	}
	var applied []TopicPartition
	o.CompleteTxn(7, true, func(tp TopicPartition, off Offset) { applied = append(applied, tp) })
	want := map[TopicPartition]Offset{tp0: {Offset: 10}, tp1: {Offset: 11}}
	if !maps.Equal(o.Committed, want) || len(applied) != 2 {
		t.Fatalf("after commit: %v, applied %v", o.Committed, applied)
	}
	if o.Unstable(tp0) || !o.Unstable(tp1) {
		t.Fatal("unstable after producer 7's commit: tp0 should be stable, tp1 still pending for 8")
	}
	o.CompleteTxn(8, false, func(TopicPartition, Offset) { t.Fatal("an abort applied an offset") })
	if !maps.Equal(o.Committed, want) || o.Unstable(tp1) || len(o.Pending) != 0 {
		t.Fatalf("after abort: %v pending %v", o.Committed, o.Pending)
	}
	o.CompleteTxn(42, true, nil) // a marker of a producer without offsets here
	if !maps.Equal(o.Committed, want) {
		t.Fatalf("an unrelated marker changed %v", o.Committed)
	}
	e := NewOffsets()
	e.ReplayPending(1, tp0, offsetValue(t, Offset{Offset: 3}))
	if e.Empty() {
		t.Fatal("a group with only pending offsets counts as empty")
	}
}
