package api

import "time"

// ClusterState is a read-only snapshot of the cluster, as served by
// GET /v1/cluster. Each partition is captured atomically, but different
// partitions may be captured at slightly different moments.
type ClusterState struct {
	ClusterID  string        `json:"cluster_id"`
	Controller int32         `json:"controller"`
	Brokers    []BrokerState `json:"brokers"`
	Topics     []TopicState  `json:"topics"`
}

// BrokerState is one broker. Isolated: cut off from the other brokers
// (IsolateBroker). Fenced: stopped, and the controller has noticed (a
// crashed broker is not fenced until Config.BrokerSessionTimeout passes).
type BrokerState struct {
	ID       int32  `json:"id"`
	Address  string `json:"address"`
	Up       bool   `json:"up"`
	Isolated bool   `json:"isolated"`
	Fenced   bool   `json:"fenced"`
}

// TopicState is one topic and its partitions in index order.
type TopicState struct {
	Name string `json:"name"`
	// ID is the topic ID in Kafka's text form (Uuid.toString: URL-safe
	// base64 without padding), as kafka-topics.sh prints it.
	ID string `json:"id"`
	// Configs are the explicitly set topic configs.
	Configs    map[string]string `json:"configs"`
	Partitions []PartitionState  `json:"partitions"`
}

// PartitionState is one partition: the leader (-1 when leaderless), its
// epoch, the ISR, the leader's HW and last stable offset (both -1 when
// leaderless) and every replica in assignment order, which is also the
// election order.
type PartitionState struct {
	Partition        int32          `json:"partition"`
	Leader           int32          `json:"leader"`
	LeaderEpoch      int32          `json:"leader_epoch"`
	ISR              []int32        `json:"isr"`
	HighWatermark    int64          `json:"high_watermark"`
	LastStableOffset int64          `json:"last_stable_offset"`
	Replicas         []ReplicaState `json:"replicas"`
	// AddingReplicas and RemovingReplicas are set while a reassignment
	// is in progress (ReassignPartition).
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
}

// ReplicaState is one broker's copy of a partition. State is "leader",
// "follower" or "offline" (its broker is down). HighWatermark is the
// replica's own HW, which on a follower trails the leader's by a fetch.
type ReplicaState struct {
	Broker         int32 `json:"broker"`
	LogStartOffset int64 `json:"log_start_offset"`
	LogEndOffset   int64 `json:"log_end_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	// LogBytes is the replica's size as Kafka counts it (DescribeLogDirs):
	// its segments' bytes, with those DeleteRecords left below the log
	// start until the next retention check; Segments its segments.
	LogBytes int64 `json:"log_bytes"`
	Segments int   `json:"segments"`
	// LastStableOffset is the replica's own LSO: min(first offset of an
	// open transaction in its log, its HW).
	LastStableOffset int64  `json:"last_stable_offset"`
	State            string `json:"state"`
	InSync           bool   `json:"in_sync"`
	Paused           bool   `json:"paused,omitempty"`
	// LeaderView is what the leader knows of this replica when it is a
	// follower (absent on the leader and when leaderless).
	LeaderView *FollowerView `json:"leader_view,omitempty"`
}

// FollowerView is the leader's view of one follower, learnt from its
// fetches: the fetch offset of its latest fetch (-1 before its first in the
// current leader epoch) and when it last fetched and was last caught up
// (Unix milliseconds, 0 for never). A follower whose last caught-up time is
// older than replica.lag.time.max.ms leaves the ISR at the next check; an
// idle but caught-up follower keeps fetching, so its times stay within
// replica.fetch.wait.max.ms of now.
type FollowerView struct {
	LogEndOffset       int64 `json:"log_end_offset"`
	LastFetchTimeMs    int64 `json:"last_fetch_time_ms"`
	LastCaughtUpTimeMs int64 `json:"last_caught_up_time_ms"`
}

// GroupState is one consumer group on its coordinator.
type GroupState struct {
	Group string `json:"group"`
	// Coordinator is the broker leading the group's __consumer_offsets
	// partition.
	Coordinator int32 `json:"coordinator"`
	// Type is "classic" (JoinGroup/SyncGroup), "consumer" (KIP-848),
	// "streams" (KIP-1071) or "share" (KIP-932).
	Type string `json:"type"`
	// State is Kafka's name: Empty, PreparingRebalance,
	// CompletingRebalance, Stable or Dead for classic groups; Empty,
	// Assigning, Reconciling or Stable for KIP-848 groups.
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	// Protocol is the chosen protocol (the assignor, e.g. "range" or
	// "cooperative-sticky"); for KIP-848 groups the server-side assignor.
	Protocol string `json:"protocol"`
	// Generation is the generation id; for KIP-848 groups the group epoch.
	Generation int32 `json:"generation"`
	// AssignmentEpoch is a KIP-848 group's target assignment epoch: members
	// whose epoch is below it are still reconciling.
	AssignmentEpoch *int32             `json:"assignment_epoch,omitempty"`
	Leader          string             `json:"leader,omitempty"`
	Members         []GroupMemberState `json:"members"`
	// Offsets are the committed offsets, sorted by topic and partition.
	Offsets []GroupOffsetState `json:"offsets"`
	// SharePartitions are a share group's partitions with records in
	// flight, as their leaders keep them, sorted by topic and partition.
	SharePartitions []SharePartitionState `json:"share_partitions,omitempty"`
}

// GroupMemberState is one member.
type GroupMemberState struct {
	MemberID               string  `json:"member_id"`
	InstanceID             *string `json:"instance_id,omitempty"`
	ClientID               string  `json:"client_id"`
	ClientHost             string  `json:"client_host"`
	SessionTimeoutMillis   int64   `json:"session_timeout_ms,omitempty"`
	RebalanceTimeoutMillis int64   `json:"rebalance_timeout_ms"`
	// Subscription is the topics the member subscribes to, when its
	// metadata is the consumer protocol's.
	Subscription []string `json:"subscription,omitempty"`
	// Assignment is the member's partitions by topic as of the last
	// completed rebalance (decoded from the consumer protocol's assignment),
	// nil when the protocol type is not "consumer".
	Assignment map[string][]int32 `json:"assignment"`
	// Streams is a streams group member's process, endpoint and tasks
	// (nil for other groups).
	Streams *StreamsMemberState `json:"streams,omitempty"`
	// KIP-848, streams and share-group members only: the member epoch.
	MemberEpoch *int32 `json:"member_epoch,omitempty"`
}

// GroupOffsetState is one committed offset and how far behind the
// partition's high watermark it is.
type GroupOffsetState struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	LeaderEpoch     int32  `json:"leader_epoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	HighWatermark   int64  `json:"high_watermark"` // -1 for a partition that is gone
	Lag             int64  `json:"lag"`
}

// TransactionState is one transactional id as its coordinator holds it.
type TransactionState struct {
	TransactionalID string `json:"transactional_id"`
	// Coordinator is the broker leading the id's __transaction_state
	// partition.
	Coordinator int32 `json:"coordinator"`
	// State is Kafka's name: Empty, Ongoing, PrepareCommit, PrepareAbort,
	// CompleteCommit, CompleteAbort.
	State         string `json:"state"`
	ProducerID    int64  `json:"producer_id"`
	ProducerEpoch int16  `json:"producer_epoch"`
	TimeoutMs     int32  `json:"timeout_ms"`
	// StartTimestamp is when the open transaction began (ms), -1 if none.
	StartTimestamp int64            `json:"start_timestamp"`
	Partitions     []TopicPartition `json:"partitions"`
	// TransactionVersion is 2 when the producer runs KIP-890's rules.
	TransactionVersion int `json:"transaction_version"`
}

// TopicPartition is one partition of a topic, as transactions and their
// events list them.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// ClockState is the clock as GET /v1/clock shows it.
type ClockState struct {
	// Mode is "real" or "manual".
	Mode string `json:"mode"`
	// Now is the cluster's current time, also in Unix milliseconds.
	Now       time.Time `json:"now"`
	NowMillis int64     `json:"now_ms"`
	// AdvancedMillis is how far the clock has been advanced in total; on a
	// real clock, how far it runs ahead of the wall clock.
	AdvancedMillis int64 `json:"advanced_ms"`
	// Timers is the number of timers waiting on the clock.
	Timers int `json:"timers"`
}

// ReassignmentState is one ongoing reassignment: the current (widened)
// replica set and the replicas being added and removed, as
// ListPartitionReassignments reports them.
type ReassignmentState struct {
	Topic            string  `json:"topic"`
	Partition        int32   `json:"partition"`
	Replicas         []int32 `json:"replicas"`
	AddingReplicas   []int32 `json:"adding_replicas"`
	RemovingReplicas []int32 `json:"removing_replicas"`
}

// CleanResult is what cleaning one partition did.
type CleanResult struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// SegmentsDeleted is how many segments retention deleted.
	SegmentsDeleted int `json:"segments_deleted"`
	// LogStartOffset is the leader's log start offset afterwards.
	LogStartOffset int64 `json:"log_start_offset"`
	// Compacted says whether the log cleaner ran (cleanup.policy
	// includes compact and the leader had closed segments).
	Compacted      bool  `json:"compacted"`
	CleanedTo      int64 `json:"cleaned_to"` // the end of the compacted range
	RecordsRemoved int   `json:"records_removed"`
	// BytesBefore and BytesAfter are the leader's log size.
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
}

// TopicConfigState is GET /v1/topics/{topic}/configs: every topic config
// in force, as DescribeConfigs lists them, sorted by name.
type TopicConfigState struct {
	Topic   string        `json:"topic"`
	Configs []ConfigEntry `json:"configs"`
}

// ConfigEntry is one config's value and where it comes from: Kafka's
// source names (DYNAMIC_TOPIC_CONFIG when the topic sets it,
// DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG).
type ConfigEntry struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}
