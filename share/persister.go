// Package share holds the share-group (KIP-932) rules that are not a
// group's membership: the state of one share partition (its in-flight
// records, their acquisition locks and delivery counts) and the Persister
// through which the partition's leader keeps that state in the share
// coordinator (__share_group_state), as Kafka's Persister does.
package share

// RecordState is a record's state in a share partition (Kafka's
// RecordState; the numbers are the wire's DeliveryState).
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

// StateBatch is a run of offsets that share one state and delivery count,
// as WriteShareGroupState carries them.
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryState RecordState
	DeliveryCount int16
}

// Key names one share partition of one share group.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// PartitionState is what the share coordinator keeps of a share partition.
type PartitionState struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64 // -1: not initialized
	// DeliveryCompleteCount is how many offsets at or past StartOffset are
	// acknowledged or archived (WriteShareGroupState v1, KIP-1226): with
	// it, DescribeShareGroupOffsets' lag is exact. -1: unknown.
	DeliveryCompleteCount int32
	Batches               []StateBatch
}

// Persister is the share coordinator as the partition leader sees it.
// Each call may block until the share coordinator's write is committed;
// the answers are Kafka error codes (0: none), as the share-state APIs
// (Initialize/Read/Write/Delete/ReadSummary ShareGroupState) return them.
type Persister interface {
	Initialize(k Key, stateEpoch int32, startOffset int64) int16
	Read(k Key, leaderEpoch int32) (PartitionState, int16)
	Write(k Key, st PartitionState) int16
	Delete(k Key) int16
	// ReadSummary is Read without the batches.
	ReadSummary(k Key, leaderEpoch int32) (PartitionState, int16)
}
