package share

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kerr"
)

var testTopic = [16]byte{1, 2, 3}

func testTopics(id [16]byte) (int32, bool) {
	if id == testTopic {
		return 2, true
	}
	return 0, false
}

// applied is a shard plus the log its committed writes make, so that a
// fresh load can replay it.
type applied struct {
	t   *testing.T
	s   *CoordinatorShard
	log [][]coordinator.Record
}

func newApplied(t *testing.T, perSnapshot int) *applied {
	return &applied{t: t, s: NewCoordinatorShard(0, coordinator.Epoch{Leader: 1, Epoch: 0}, perSnapshot, testTopics)}
}

// commit replays recs as the runtime does once they are committed.
func (a *applied) commit(recs []coordinator.Record, r Result) Result {
	a.t.Helper()
	if len(recs) > 0 {
		a.log = append(a.log, recs)
		a.s.Replay(coordinator.Batch{Offset: -1, Records: recs})
	}
	return r
}

func (a *applied) reload() *CoordinatorShard {
	s := NewCoordinatorShard(0, coordinator.Epoch{Leader: 2, Epoch: 1}, a.s.perSnapshot, testTopics)
	for i, recs := range a.log {
		s.Replay(coordinator.Batch{Offset: int64(i), Records: recs})
	}
	return s
}

func recordType(t *testing.T, r coordinator.Record) string {
	t.Helper()
	var k RecordKey
	if err := json.Unmarshal(r.Key, &k); err != nil {
		t.Fatal(err)
	}
	if r.Value == nil {
		return k.Type + "(tombstone)"
	}
	return k.Type
}

func TestCoordinatorShardSteps(t *testing.T) {
	a := newApplied(t, 2)
	k := Key{Group: "g", TopicID: testTopic, Partition: 1}

	// Read and write of an uninitialized share partition are invalid.
	if _, r := a.s.Read(k, 0, 0); r.Code != kerr.InvalidRequest.Code || *r.Message != MsgReadUninitialized {
		t.Fatalf("read uninitialized: %+v", r)
	}
	if _, r := a.s.Write(k, WriteState{StateEpoch: 0, LeaderEpoch: 0, StartOffset: 0}, 0); r.Code != kerr.InvalidRequest.Code {
		t.Fatalf("write uninitialized: %d", r.Code)
	}
	if r := a.s.ReadSummary(k); r.Code != 0 || r.Offset.StartOffset != -1 || r.Offset.DeliveryCompleteCount != -1 || r.Offset.StateEpoch != 0 {
		t.Fatalf("summary uninitialized: %+v", r)
	}

	// Initialize at state epoch 3, start offset 0.
	recs, r := a.s.Initialize(k, 3, 0, 1000)
	if r.Code != 0 || len(recs) != 1 || recordType(t, recs[0]) != RecordShareSnapshot {
		t.Fatalf("initialize: %+v %d", r, len(recs))
	}
	a.commit(recs, r)

	// The first read at leader epoch 5 answers the state and records the
	// new leader epoch (a ShareUpdate).
	recs, r = a.s.Read(k, 5, 1001)
	if r.Code != 0 || r.Offset.StateEpoch != 3 || r.Offset.StartOffset != 0 || len(r.Offset.Batches) != 0 {
		t.Fatalf("read: %+v", r)
	}
	if len(recs) != 1 || recordType(t, recs[0]) != RecordShareUpdate {
		t.Fatalf("read records %d", len(recs))
	}
	a.commit(recs, r)
	// A second read at the same epoch writes nothing.
	if recs, _ := a.s.Read(k, 5, 1002); len(recs) != 0 {
		t.Fatal("read at the same leader epoch wrote")
	}
	// An older leader is fenced.
	if _, r := a.s.Read(k, 4, 1002); r.Code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale read: %d", r.Code)
	}

	// Writes: offsets 0-4 acquired once and released, then 0-1 acked.
	a.commit(a.s.Write(k, WriteState{StateEpoch: 3, LeaderEpoch: 5, StartOffset: 0, DeliveryCompleteCount: -1,
		Batches: []StateBatch{{0, 4, Available, 1}}}, 1003))
	// Two updates since the snapshot: the next write is a snapshot.
	recs, r = a.s.Write(k, WriteState{StateEpoch: 3, LeaderEpoch: 5, StartOffset: 2, DeliveryCompleteCount: 0,
		Batches: []StateBatch{{0, 1, Acknowledged, 1}}}, 1004)
	if r.Code != 0 || recordType(t, recs[0]) != RecordShareSnapshot {
		t.Fatalf("third write: %+v %s", r, recordType(t, recs[0]))
	}
	a.commit(recs, r)
	st := a.s.Partitions()
	if len(st) != 1 {
		t.Fatalf("partitions %d", len(st))
	}
	want := Offset{SnapshotEpoch: 1, StateEpoch: 3, LeaderEpoch: 5, StartOffset: 2, DeliveryCompleteCount: 0,
		Batches: []StateBatch{{2, 4, Available, 1}}, CreateTimestamp: 1004, WriteTimestamp: 1004}
	if !reflect.DeepEqual(st[0].Offset, want) || st[0].UpdatesSinceSnapshot != 0 {
		t.Fatalf("state %+v (updates %d), want %+v", st[0].Offset, st[0].UpdatesSinceSnapshot, want)
	}

	// Fencing: an older leader epoch, then an older state epoch.
	if _, r := a.s.Write(k, WriteState{StateEpoch: 3, LeaderEpoch: 4, StartOffset: 2}, 1005); r.Code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale leader write: %d", r.Code)
	}
	if _, r := a.s.Write(k, WriteState{StateEpoch: 2, LeaderEpoch: 5, StartOffset: 2}, 1005); r.Code != kerr.FencedStateEpoch.Code {
		t.Fatalf("stale state write: %d", r.Code)
	}
	if _, r := a.s.Initialize(k, 2, 0, 1005); r.Code != kerr.FencedStateEpoch.Code {
		t.Fatalf("stale initialize: %d", r.Code)
	}
	// Unknown topic and partition.
	if _, r := a.s.Write(Key{Group: "g", TopicID: [16]byte{9}, Partition: 0}, WriteState{}, 0); r.Code != kerr.InvalidRequest.Code {
		t.Fatalf("write of unknown topic (uninitialized first): %d", r.Code)
	}
	if _, r := a.s.Initialize(Key{Group: "g", TopicID: [16]byte{9}, Partition: 0}, 0, 0, 0); r.Code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("initialize unknown topic: %d", r.Code)
	}
	if _, r := a.s.Initialize(Key{Group: "g", TopicID: testTopic, Partition: 2}, 0, 0, 0); r.Code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("initialize partition past the count: %d", r.Code)
	}
	if _, r := a.s.Write(k, WriteState{StateEpoch: 3, LeaderEpoch: -1}, 0); r.Code != kerr.InvalidRequest.Code || *r.Message != MsgNegativeLeaderEpoch {
		t.Fatalf("negative leader epoch: %+v", r)
	}

	// A fresh load replays to the same state.
	if got := a.reload().Partitions(); !reflect.DeepEqual(got, st) {
		t.Fatalf("reloaded %+v\nwant %+v", got, st)
	}

	// Summary, then delete: a tombstone, and the partition is gone.
	if r := a.s.ReadSummary(k); r.Offset.StartOffset != 2 || r.Offset.LeaderEpoch != 5 || r.Offset.StateEpoch != 3 || r.Offset.DeliveryCompleteCount != 0 {
		t.Fatalf("summary %+v", r.Offset)
	}
	recs, r = a.s.Delete(k)
	if len(recs) != 1 || recordType(t, recs[0]) != "ShareSnapshot(tombstone)" {
		t.Fatalf("delete records %v", recs)
	}
	a.commit(recs, r)
	if len(a.s.Partitions()) != 0 || len(a.reload().Partitions()) != 0 {
		t.Fatal("deleted partition still there")
	}
	// Deleting again writes nothing and succeeds.
	if recs, r := a.s.Delete(k); len(recs) != 0 || r.Code != 0 {
		t.Fatalf("second delete %v %+v", recs, r)
	}
	// Re-initialized after the delete: snapshot epoch starts at 0 again.
	a.commit(a.s.Initialize(k, 0, 7, 2000))
	if p := a.s.Partitions()[0]; p.Offset.SnapshotEpoch != 0 || p.Offset.StartOffset != 7 || p.Offset.StateEpoch != 0 {
		t.Fatalf("re-initialized %+v", p.Offset)
	}
}

// TestCoordinatorShardSnapshotEveryWrite: a limit of 0 makes every write a
// snapshot (Kafka's share.coordinator.snapshot.update.records.per.snapshot=0).
func TestCoordinatorShardSnapshotEveryWrite(t *testing.T) {
	a := newApplied(t, 0)
	k := Key{Group: "g", TopicID: testTopic, Partition: 0}
	a.commit(a.s.Initialize(k, 0, 0, 1))
	for i := range 3 {
		recs, r := a.s.Write(k, WriteState{LeaderEpoch: 0, StartOffset: int64(i), DeliveryCompleteCount: -1,
			Batches: []StateBatch{{int64(i), int64(i), Acknowledged, 1}}}, 10)
		if recordType(t, recs[0]) != RecordShareSnapshot {
			t.Fatalf("write %d: %s", i, recordType(t, recs[0]))
		}
		a.commit(recs, r)
	}
	p := a.s.Partitions()[0]
	if p.Offset.SnapshotEpoch != 3 || p.Offset.StartOffset != 2 || !reflect.DeepEqual(p.Offset.Batches, []StateBatch{{2, 2, Acknowledged, 1}}) {
		t.Fatalf("%+v", p.Offset)
	}
}

func TestCombineBatches(t *testing.T) {
	for _, tc := range []struct {
		name       string
		soFar, upd []StateBatch
		start      int64
		want       []StateBatch
	}{
		{"empty", nil, nil, 0, nil},
		{"one", nil, []StateBatch{{0, 9, Available, 1}}, 0, []StateBatch{{0, 9, Available, 1}}},
		{"pruned below start", []StateBatch{{0, 4, Available, 1}, {5, 9, Acknowledged, 1}}, nil, 6,
			[]StateBatch{{6, 9, Acknowledged, 1}}},
		{"higher count wins", []StateBatch{{0, 9, Available, 2}}, []StateBatch{{3, 5, Acknowledged, 1}}, 0,
			[]StateBatch{{0, 9, Available, 2}}},
		{"same count: higher state wins", []StateBatch{{0, 9, Available, 1}}, []StateBatch{{3, 5, Acknowledged, 1}}, 0,
			[]StateBatch{{0, 2, Available, 1}, {3, 5, Acknowledged, 1}, {6, 9, Available, 1}}},
		{"adjacent coalesce", []StateBatch{{0, 4, Archived, 1}}, []StateBatch{{5, 9, Archived, 1}}, 0,
			[]StateBatch{{0, 9, Archived, 1}}},
		{"gap kept", []StateBatch{{0, 1, Archived, 1}}, []StateBatch{{5, 6, Archived, 1}}, -1,
			[]StateBatch{{0, 1, Archived, 1}, {5, 6, Archived, 1}}},
		{"redelivered", []StateBatch{{0, 9, Available, 1}}, []StateBatch{{0, 9, Available, 2}}, 0,
			[]StateBatch{{0, 9, Available, 2}}},
	} {
		if got := CombineBatches(tc.soFar, tc.upd, tc.start); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCoordinatorKey(t *testing.T) {
	k := Key{Group: "grp", TopicID: [16]byte{0xff, 1}, Partition: 12}
	if got, want := k.CoordinatorKey(), "grp:_wEAAAAAAAAAAAAAAAAAAA:12"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
