// Package group is the group coordinator's state machines, on package
// coordinator's runtime:
//
//   - Offsets: a group's committed offsets and the transactions' pending
//     ones, changed only by replaying records and markers;
//   - Classic: the classic protocol's membership and rebalance (JoinGroup,
//     SyncGroup, Heartbeat, LeaveGroup, static members, the session,
//     rebalance and sync timeouts, the metadata record it is restored
//     from);
//   - ConsumerGroup: KIP-848 groups (member epochs, target assignment,
//     reconciliation and revocation, the uniform and range assignors, the
//     heartbeat step, static members), classic members inside them
//     (mixed.go) and the online migration between the two protocols
//     (migrate.go, group_migrate.go);
//   - StreamsGroup: KIP-1071 streams groups (the topology and its
//     validation against the topics, the sticky task assignor, task
//     reconciliation with revocation, the heartbeat step, its record);
//   - Expiry: which committed offsets offsets.retention.minutes expires
//     (KIP-211);
//   - Shard and Group: one __consumer_offsets partition's groups as a
//     load holds them (the runtime's state: Replay of records and markers,
//     the same path for a load and for every committed write), and one
//     group with its lock, its write order and its timers.
//
// Steps take a request and answer a result and the events they made;
// none does I/O or imports the server. What the coordinator needs of the
// broker comes through small interfaces: Host (the runtime shard, events,
// clock, config, logging, tracked goroutines, the chaos hook, topic
// metadata), ClassicHost and Topics. Writes go through the runtime
// (append acks=all, wait for the HW, then Replay), so a failed write
// leaves nothing applied. The tests drive every step on a manual clock
// with exact outcomes.
package group

import "encoding/json"

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Offset is one committed offset as OffsetFetch returns it, and the value
// of an offset commit record (JSON).
type Offset struct {
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata"`
	Timestamp   int64  `json:"timestamp"`
	// ExpireTimestamp is when the offset expires regardless of the
	// group (OffsetCommit v2-v4 with a retention time), 0 when not set.
	ExpireTimestamp int64 `json:"expire_timestamp,omitempty"`
}

// ConsumerKind marks __consumer_offsets records holding KIP-848 state.
const ConsumerKind = "consumer"

// RecordKey is the key of a __consumer_offsets record (JSON): an offset
// commit (Topic set), the classic group's metadata, or a KIP-848 group's
// state (Kind ConsumerKind). A record with no value deletes.
type RecordKey struct {
	Kind      string `json:"kind,omitempty"`
	Group     string `json:"group"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition,omitempty"`
}

// Offsets are a group's committed offsets and the offsets transactions
// committed for it that wait for their markers.
type Offsets struct {
	Committed map[TopicPartition]Offset
	// Pending are TxnOffsetCommit offsets per producer id, until that
	// producer's marker commits (or aborts) them.
	Pending map[int64]map[TopicPartition]Offset
}

// NewOffsets is a group without offsets.
func NewOffsets() Offsets {
	return Offsets{Committed: map[TopicPartition]Offset{}}
}

// ReplayCommit replays an offset commit record of tp: value nil deletes
// the offset. It answers the offset committed, if any.
func (o *Offsets) ReplayCommit(tp TopicPartition, value []byte) (Offset, bool) {
	if value == nil {
		delete(o.Committed, tp)
		return Offset{}, false
	}
	var off Offset
	if json.Unmarshal(value, &off) != nil {
		return Offset{}, false
	}
	o.Commit(tp, off)
	return off, true
}

// Commit makes off tp's committed offset (a replayed commit, decoded).
func (o *Offsets) Commit(tp TopicPartition, off Offset) { o.Committed[tp] = off }

// ReplayPending replays a transactional offset commit record of producer
// pid: the offset waits for the producer's marker.
func (o *Offsets) ReplayPending(pid int64, tp TopicPartition, value []byte) {
	if value == nil {
		return
	}
	var off Offset
	if json.Unmarshal(value, &off) == nil {
		o.AddPending(pid, tp, off)
	}
}

// AddPending records off as producer pid's pending offset of tp (a
// replayed transactional commit, decoded).
func (o *Offsets) AddPending(pid int64, tp TopicPartition, off Offset) {
	if o.Pending == nil {
		o.Pending = map[int64]map[TopicPartition]Offset{}
	}
	m := o.Pending[pid]
	if m == nil {
		m = map[TopicPartition]Offset{}
		o.Pending[pid] = m
	}
	m[tp] = off
}

// CompleteTxn replays a marker of producer pid: a commit makes its
// pending offsets committed, an abort drops them. applied, if set, is
// called for each offset a commit made committed.
func (o *Offsets) CompleteTxn(pid int64, commit bool, applied func(TopicPartition, Offset)) {
	pending, ok := o.Pending[pid]
	if !ok {
		return
	}
	if commit {
		for tp, off := range pending {
			o.Committed[tp] = off
			if applied != nil {
				applied(tp, off)
			}
		}
	}
	delete(o.Pending, pid)
}

// Unstable reports whether a transaction still holds a pending offset of
// tp (OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT).
func (o *Offsets) Unstable(tp TopicPartition) bool {
	for _, m := range o.Pending {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

// Empty says whether there is neither a committed nor a pending offset.
func (o *Offsets) Empty() bool {
	return len(o.Committed) == 0 && len(o.Pending) == 0
}
