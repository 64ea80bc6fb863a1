package api

import "time"

// SharePartitionState is one share partition of a share group (KIP-932)
// as its partition's leader keeps it: the share-partition start offset
// (every offset below it is acknowledged or archived), the end of the
// in-flight window, and each in-flight record.
type SharePartitionState struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Leader      int32  `json:"leader"`       // the broker it was loaded on
	LeaderEpoch int32  `json:"leader_epoch"` // and at which epoch
	StartOffset int64  `json:"start_offset"`
	EndOffset   int64  `json:"end_offset"`
	// WaitingFetches counts the ShareFetch long polls parked on it.
	WaitingFetches int `json:"waiting_fetches"`
	// InFlight lists the offsets in [StartOffset, EndOffset), in order.
	InFlight []ShareRecordState `json:"in_flight"`
}

// ShareRecordState is one in-flight record of a share partition.
type ShareRecordState struct {
	Offset int64 `json:"offset"`
	// State is AVAILABLE, ACQUIRED, ACKNOWLEDGED or ARCHIVED.
	State         string `json:"state"`
	DeliveryCount int16  `json:"delivery_count"`
	// Member holds an ACQUIRED record until LockDeadline.
	Member       string     `json:"member,omitempty"`
	LockDeadline *time.Time `json:"lock_deadline,omitempty"`
}
