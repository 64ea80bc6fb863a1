package share

// The records of __share_group_state, as Kafka 4.4's share coordinator
// writes them: a ShareSnapshot is the whole state of one share partition,
// a ShareUpdate the batches one write changed (merged into the state on
// replay), and a null ShareSnapshot value the tombstone of a deleted
// share partition. Keys and values are JSON here (as the other internal
// topics of fakekafka), with Kafka's field names.

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/fakekafka/fakekafka/coordinator"
)

// Record types of __share_group_state (Kafka's CoordinatorRecordType).
const (
	RecordShareSnapshot = "ShareSnapshot"
	RecordShareUpdate   = "ShareUpdate"
)

// RecordKey is the key of a __share_group_state record.
type RecordKey struct {
	Type      string `json:"type"`
	GroupID   string `json:"group_id"`
	TopicID   string `json:"topic_id"` // Kafka's base64 form of the uuid
	Partition int32  `json:"partition"`
}

// SnapshotValue is a ShareSnapshot record's value.
type SnapshotValue struct {
	SnapshotEpoch         int32        `json:"snapshot_epoch"`
	StateEpoch            int32        `json:"state_epoch"`
	LeaderEpoch           int32        `json:"leader_epoch"`
	StartOffset           int64        `json:"start_offset"`
	DeliveryCompleteCount int32        `json:"delivery_complete_count"`
	CreateTimestamp       int64        `json:"create_timestamp"`
	WriteTimestamp        int64        `json:"write_timestamp"`
	StateBatches          []StateBatch `json:"state_batches"`
}

// UpdateValue is a ShareUpdate record's value.
type UpdateValue struct {
	SnapshotEpoch         int32        `json:"snapshot_epoch"`
	LeaderEpoch           int32        `json:"leader_epoch"`
	StartOffset           int64        `json:"start_offset"` // -1: unchanged
	DeliveryCompleteCount int32        `json:"delivery_complete_count"`
	StateBatches          []StateBatch `json:"state_batches"`
}

// TopicIDString is a topic id as Kafka prints a Uuid (URL-safe base64
// without padding).
func TopicIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseTopicID is the inverse of TopicIDString.
func ParseTopicID(s string) ([16]byte, bool) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, false
	}
	copy(id[:], b)
	return id, true
}

// CoordinatorKey is the key a share partition's coordinator is found by
// (FindCoordinator key type SHARE): "group:topicId:partition".
func (k Key) CoordinatorKey() string {
	return k.Group + ":" + TopicIDString(k.TopicID) + ":" + itoa(k.Partition)
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func recordKey(typ string, k Key) []byte {
	b, _ := json.Marshal(RecordKey{Type: typ, GroupID: k.Group, TopicID: TopicIDString(k.TopicID), Partition: k.Partition})
	return b
}

func snapshotRecord(k Key, o Offset) coordinator.Record {
	v, _ := json.Marshal(SnapshotValue{SnapshotEpoch: o.SnapshotEpoch, StateEpoch: o.StateEpoch, LeaderEpoch: o.LeaderEpoch,
		StartOffset: o.StartOffset, DeliveryCompleteCount: o.DeliveryCompleteCount, CreateTimestamp: o.CreateTimestamp,
		WriteTimestamp: o.WriteTimestamp, StateBatches: nonNil(o.Batches)})
	return coordinator.Record{Key: recordKey(RecordShareSnapshot, k), Value: v}
}

func updateRecord(k Key, u UpdateValue) coordinator.Record {
	u.StateBatches = nonNil(u.StateBatches)
	v, _ := json.Marshal(u)
	return coordinator.Record{Key: recordKey(RecordShareUpdate, k), Value: v}
}

func tombstoneRecord(k Key) coordinator.Record {
	return coordinator.Record{Key: recordKey(RecordShareSnapshot, k)}
}

func nonNil(bs []StateBatch) []StateBatch {
	if bs == nil {
		return []StateBatch{}
	}
	return bs
}

// decodeKey reads a record key; ok is false for a record that is not a
// share-state record.
func decodeKey(b []byte) (string, Key, bool) {
	var rk RecordKey
	if json.Unmarshal(b, &rk) != nil || rk.Type != RecordShareSnapshot && rk.Type != RecordShareUpdate {
		return "", Key{}, false
	}
	id, ok := ParseTopicID(rk.TopicID)
	if !ok {
		return "", Key{}, false
	}
	return rk.Type, Key{Group: rk.GroupID, TopicID: id, Partition: rk.Partition}, true
}
