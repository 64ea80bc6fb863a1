package share

// The share coordinator's state of one __share_group_state partition on
// package coordinator's runtime, as Kafka 4.4's ShareCoordinatorShard
// keeps it: per share partition (group, topic id, partition) its offset
// state, the highest leader epoch and state epoch seen, and how many
// ShareUpdate records were written since its last ShareSnapshot. It is
// rebuilt by replaying the partition's records on a load and kept current
// by replaying each committed write the same way (Replay).
//
// An operation (Initialize, Write, Read, ReadSummary, Delete) decides from
// the state and returns the records to write; the caller writes them
// through the runtime, whose replay makes them take effect. The caller
// holds Lock from the decision to the end of the write, so that the
// operations of a shard run one at a time, as on Kafka's shard executor.

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Messages of Kafka 4.4's share coordinator for invalid requests.
const (
	MsgNegativePartition     = "The partition id cannot be a negative number."
	MsgNegativeLeaderEpoch   = "The leader epoch cannot be a negative number."
	MsgNegativeStateEpoch    = "The state epoch cannot be a negative number."
	MsgWriteUninitialized    = "Write operation on uninitialized share partition not allowed."
	MsgReadUninitialized     = "Read operation on uninitialized share partition not allowed."
	defaultSnapshotThreshold = 500
)

// Offset is what the share coordinator keeps of one share partition
// (Kafka's ShareGroupOffset).
type Offset struct {
	SnapshotEpoch         int32
	StateEpoch            int32
	LeaderEpoch           int32
	StartOffset           int64
	DeliveryCompleteCount int32 // -1: unknown
	Batches               []StateBatch
	CreateTimestamp       int64
	WriteTimestamp        int64
}

// entry is one share partition of the shard.
type entry struct {
	offset      Offset
	hasOffset   bool
	leaderEpoch int32 // highest seen; valid when hasLeader
	hasLeader   bool
	stateEpoch  int32 // highest seen; valid when hasState
	hasState    bool
	updates     int // ShareUpdate records since the last snapshot
	hasUpdates  bool
}

// Topics answers the partition count of a topic by id (false: unknown),
// as the coordinator's metadata image does.
type Topics func(id [16]byte) (partitions int32, ok bool)

// CoordinatorShard is the share partitions of one __share_group_state
// partition as one load of it holds them.
type CoordinatorShard struct {
	index int32
	at    coordinator.Epoch
	// perSnapshot is share.coordinator.snapshot.update.records.per.snapshot.
	perSnapshot int
	topics      Topics

	opMu sync.Mutex // one operation at a time (Lock/Unlock)

	mu      sync.Mutex // guards entries; Replay takes it
	entries map[Key]*entry
}

// NewCoordinatorShard is the empty state of partition index loaded at at.
func NewCoordinatorShard(index int32, at coordinator.Epoch, perSnapshot int, topics Topics) *CoordinatorShard {
	return &CoordinatorShard{index: index, at: at, perSnapshot: perSnapshot, topics: topics, entries: map[Key]*entry{}}
}

// Index is the shard's partition of __share_group_state.
func (s *CoordinatorShard) Index() int32 { return s.index }

// At is the load the shard belongs to.
func (s *CoordinatorShard) At() coordinator.Epoch { return s.at }

// Lock serialises the shard's operations: held from an operation's
// decision until its records are written (never while Replay runs on
// another goroutine for it: the runtime replays on the writer's).
func (s *CoordinatorShard) Lock()   { s.opMu.Lock() }
func (s *CoordinatorShard) Unlock() { s.opMu.Unlock() }

// Replay applies one committed batch of the partition.
func (s *CoordinatorShard) Replay(b coordinator.Batch) {
	if b.Control {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range b.Records {
		typ, k, ok := decodeKey(r.Key)
		if !ok {
			continue
		}
		switch typ {
		case RecordShareSnapshot:
			if r.Value == nil {
				delete(s.entries, k)
				continue
			}
			var v SnapshotValue
			if json.Unmarshal(r.Value, &v) != nil {
				continue
			}
			s.replaySnapshot(k, v)
		case RecordShareUpdate:
			var v UpdateValue
			if r.Value == nil || json.Unmarshal(r.Value, &v) != nil {
				continue
			}
			s.replayUpdate(k, v)
		}
	}
}

func (s *CoordinatorShard) entry(k Key) *entry {
	e := s.entries[k]
	if e == nil {
		e = &entry{}
		s.entries[k] = e
	}
	return e
}

func (e *entry) seeLeaderEpoch(le int32) {
	if !e.hasLeader || e.leaderEpoch < le {
		e.leaderEpoch, e.hasLeader = le, true
	}
}

func (s *CoordinatorShard) replaySnapshot(k Key, v SnapshotValue) {
	e := s.entry(k)
	e.seeLeaderEpoch(v.LeaderEpoch)
	if !e.hasState || e.stateEpoch < v.StateEpoch {
		e.stateEpoch, e.hasState = v.StateEpoch, true
	}
	e.offset = Offset{SnapshotEpoch: v.SnapshotEpoch, StateEpoch: v.StateEpoch, LeaderEpoch: v.LeaderEpoch,
		StartOffset: v.StartOffset, DeliveryCompleteCount: v.DeliveryCompleteCount, Batches: v.StateBatches,
		CreateTimestamp: v.CreateTimestamp, WriteTimestamp: v.WriteTimestamp}
	e.hasOffset = true
	if e.hasUpdates && e.updates >= s.perSnapshot {
		e.updates = 0
	}
}

func (s *CoordinatorShard) replayUpdate(k Key, v UpdateValue) {
	e := s.entry(k)
	e.seeLeaderEpoch(v.LeaderEpoch)
	if !e.hasOffset {
		e.offset = Offset{SnapshotEpoch: v.SnapshotEpoch, LeaderEpoch: v.LeaderEpoch, StartOffset: v.StartOffset,
			DeliveryCompleteCount: v.DeliveryCompleteCount, Batches: v.StateBatches}
		e.hasOffset = true
	} else {
		o := &e.offset
		if v.StartOffset != -1 {
			o.StartOffset = v.StartOffset
		}
		if v.LeaderEpoch != -1 {
			o.LeaderEpoch = v.LeaderEpoch
		}
		o.DeliveryCompleteCount = v.DeliveryCompleteCount
		o.Batches = CombineBatches(o.Batches, v.StateBatches, o.StartOffset)
	}
	e.updates++
	e.hasUpdates = true
}

// Result is an operation's answer for one share partition: an error code
// and message, or the state it read.
type Result struct {
	Code    int16
	Message *string
	Offset  Offset
}

func fail(code int16, msg string) Result { return Result{Code: code, Message: &msg} }

// failDefault fails with Kafka's default message of e.
func failDefault(e *kerr.Error) Result { return fail(e.Code, ErrorMessage(e.Code)) }

// ErrorMessage is Kafka's message (Errors.message()) of an error code the
// share coordinator answers, kerr's description for others.
func ErrorMessage(code int16) string {
	switch code {
	case kerr.FencedLeaderEpoch.Code:
		return "The leader epoch in the request is older than the epoch on the broker."
	case kerr.NotCoordinator.Code:
		return "This is not the correct coordinator."
	case kerr.CoordinatorNotAvailable.Code:
		return "The coordinator is not available."
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Description
		}
	}
	return ""
}

// known checks the topic and partition against the metadata.
func (s *CoordinatorShard) known(k Key) bool {
	n, ok := s.topics(k.TopicID)
	return ok && k.Partition < n
}

// view copies k's entry (nil when there is none).
func (s *CoordinatorShard) view(k Key) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil {
		return nil
	}
	c := *e
	c.offset.Batches = slices.Clone(e.offset.Batches)
	return &c
}

// Initialize decides an InitializeShareGroupState of k at nowMs.
func (s *CoordinatorShard) Initialize(k Key, stateEpoch int32, startOffset, nowMs int64) ([]coordinator.Record, Result) {
	switch {
	case k.Partition < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativePartition)
	case stateEpoch < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativeStateEpoch)
	}
	e := s.view(k)
	if e != nil && e.hasState && e.stateEpoch > stateEpoch {
		return nil, failDefault(kerr.FencedStateEpoch)
	}
	if !s.known(k) {
		return nil, failDefault(kerr.UnknownTopicOrPartition)
	}
	snap := int32(0)
	if e != nil && e.hasOffset {
		snap = e.offset.SnapshotEpoch + 1
	}
	dcc := int32(0)
	if startOffset == -1 {
		dcc = -1
	}
	o := Offset{SnapshotEpoch: snap, StateEpoch: stateEpoch, LeaderEpoch: 0, StartOffset: startOffset,
		DeliveryCompleteCount: dcc, CreateTimestamp: nowMs, WriteTimestamp: nowMs}
	return []coordinator.Record{snapshotRecord(k, o)}, Result{}
}

// WriteState is a WriteShareGroupState of one share partition.
type WriteState struct {
	StateEpoch            int32
	LeaderEpoch           int32
	StartOffset           int64
	DeliveryCompleteCount int32 // -1: not sent (v0)
	Batches               []StateBatch
}

// Write decides a WriteShareGroupState of k at nowMs.
func (s *CoordinatorShard) Write(k Key, w WriteState, nowMs int64) ([]coordinator.Record, Result) {
	switch {
	case k.Partition < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativePartition)
	case w.LeaderEpoch < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativeLeaderEpoch)
	case w.StateEpoch < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativeStateEpoch)
	}
	e := s.view(k)
	switch {
	case e == nil || !e.hasOffset:
		return nil, fail(kerr.InvalidRequest.Code, MsgWriteUninitialized)
	case e.hasLeader && e.leaderEpoch > w.LeaderEpoch:
		return nil, failDefault(kerr.FencedLeaderEpoch)
	case e.hasState && e.stateEpoch > w.StateEpoch:
		return nil, failDefault(kerr.FencedStateEpoch)
	case !s.known(k):
		return nil, failDefault(kerr.UnknownTopicOrPartition)
	}
	return []coordinator.Record{s.stateRecord(k, e, w, false, nowMs)}, Result{}
}

// stateRecord is the record of a write (or of a read that moves the
// leader epoch, with newLeader): a ShareUpdate, or a ShareSnapshot of the
// merged state once perSnapshot updates were written since the last one.
func (s *CoordinatorShard) stateRecord(k Key, e *entry, w WriteState, newLeader bool, nowMs int64) coordinator.Record {
	cur := e.offset
	leader := cur.LeaderEpoch
	if newLeader {
		leader = w.LeaderEpoch
	}
	start := max(w.StartOffset, cur.StartOffset)
	dcc := w.DeliveryCompleteCount
	switch {
	case w.StartOffset == cur.StartOffset:
		dcc = max(w.DeliveryCompleteCount, cur.DeliveryCompleteCount)
	case w.StartOffset < cur.StartOffset:
		dcc = cur.DeliveryCompleteCount
	}
	if e.updates >= s.perSnapshot {
		return snapshotRecord(k, Offset{SnapshotEpoch: cur.SnapshotEpoch + 1, StateEpoch: cur.StateEpoch, LeaderEpoch: leader,
			StartOffset: start, DeliveryCompleteCount: dcc, Batches: CombineBatches(cur.Batches, w.Batches, start),
			CreateTimestamp: nowMs, WriteTimestamp: nowMs})
	}
	return updateRecord(k, UpdateValue{SnapshotEpoch: cur.SnapshotEpoch, LeaderEpoch: leader, StartOffset: start,
		DeliveryCompleteCount: dcc, StateBatches: CombineBatches(nil, w.Batches, start)})
}

// Read decides a ReadShareGroupState of k by the leader at leaderEpoch:
// the state, and the record that makes leaderEpoch the partition's when it
// is a new one.
func (s *CoordinatorShard) Read(k Key, leaderEpoch int32, nowMs int64) ([]coordinator.Record, Result) {
	switch {
	case k.Partition < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativePartition)
	case leaderEpoch < 0:
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativeLeaderEpoch)
	}
	e := s.view(k)
	switch {
	case e == nil || !e.hasOffset:
		return nil, fail(kerr.InvalidRequest.Code, MsgReadUninitialized)
	case e.hasLeader && e.leaderEpoch > leaderEpoch:
		return nil, failDefault(kerr.FencedLeaderEpoch)
	case !s.known(k):
		return nil, failDefault(kerr.UnknownTopicOrPartition)
	}
	res := Result{Offset: e.offset}
	if e.hasLeader && e.leaderEpoch == leaderEpoch {
		return nil, res
	}
	w := WriteState{StateEpoch: e.offset.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: e.offset.StartOffset,
		DeliveryCompleteCount: e.offset.DeliveryCompleteCount}
	return []coordinator.Record{s.stateRecord(k, e, w, true, nowMs)}, res
}

// ReadSummary answers a ReadShareGroupStateSummary of k (it writes
// nothing): an unknown share partition has start offset -1, delivery
// complete count -1 and epochs 0.
func (s *CoordinatorShard) ReadSummary(k Key) Result {
	if k.Partition < 0 {
		return fail(kerr.InvalidRequest.Code, MsgNegativePartition)
	}
	if !s.known(k) {
		return failDefault(kerr.UnknownTopicOrPartition)
	}
	e := s.view(k)
	if e == nil || !e.hasOffset {
		return Result{Offset: Offset{StartOffset: -1, DeliveryCompleteCount: -1}}
	}
	o := e.offset
	o.Batches = nil
	return Result{Offset: o}
}

// Delete decides a DeleteShareGroupState of k: a tombstone when k has
// state, nothing (and no error) when it has none.
func (s *CoordinatorShard) Delete(k Key) ([]coordinator.Record, Result) {
	if k.Partition < 0 {
		return nil, fail(kerr.InvalidRequest.Code, MsgNegativePartition)
	}
	if !s.known(k) {
		return nil, failDefault(kerr.UnknownTopicOrPartition)
	}
	if e := s.view(k); e == nil || !e.hasOffset {
		return nil, Result{}
	}
	return []coordinator.Record{tombstoneRecord(k)}, Result{}
}

// PartitionView is one share partition as the shard holds it, for
// inspection (the dashboard, tests).
type PartitionView struct {
	Key                  Key
	Offset               Offset
	LeaderEpoch          int32 // highest seen
	StateEpoch           int32 // highest seen
	UpdatesSinceSnapshot int
}

// Partitions lists the shard's share partitions, ordered by group, topic
// id and partition.
func (s *CoordinatorShard) Partitions() []PartitionView {
	s.mu.Lock()
	out := make([]PartitionView, 0, len(s.entries))
	for k, e := range s.entries {
		if !e.hasOffset {
			continue
		}
		o := e.offset
		o.Batches = slices.Clone(o.Batches)
		out = append(out, PartitionView{Key: k, Offset: o, LeaderEpoch: e.leaderEpoch, StateEpoch: e.stateEpoch, UpdatesSinceSnapshot: e.updates})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b PartitionView) int { return compareKeys(a.Key, b.Key) })
	return out
}

func compareKeys(a, b Key) int {
	switch {
	case a.Group != b.Group:
		if a.Group < b.Group {
			return -1
		}
		return 1
	case a.TopicID != b.TopicID:
		return slices.Compare(a.TopicID[:], b.TopicID[:])
	}
	return int(a.Partition) - int(b.Partition)
}

// TopicDeleted decides the cleanup after topic id was deleted, as Kafka's
// share coordinator does on the metadata change: the tombstones of every
// share partition of that topic, and their keys.
func (s *CoordinatorShard) TopicDeleted(id [16]byte) ([]coordinator.Record, []Key) {
	s.mu.Lock()
	var keys []Key
	for k, e := range s.entries {
		if k.TopicID == id && e.hasOffset {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(keys, compareKeys)
	recs := make([]coordinator.Record, 0, len(keys))
	for _, k := range keys {
		recs = append(recs, tombstoneRecord(k))
	}
	return recs, keys
}
