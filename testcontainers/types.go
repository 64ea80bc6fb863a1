package fakekafka

// The control API's JSON answers. They mirror the server's types field for
// field; the module's tests decode live answers into them with unknown
// fields refused, so the two cannot drift apart unnoticed.

// ClusterState is GET /v1/cluster.
type ClusterState struct {
	ClusterID  string        `json:"cluster_id"`
	Controller int32         `json:"controller"`
	Brokers    []BrokerState `json:"brokers"`
	Topics     []TopicState  `json:"topics"`
}

// BrokerState is one broker; Address is its advertised address on the
// first listener (EXTERNAL).
type BrokerState struct {
	ID       int32  `json:"id"`
	Address  string `json:"address"`
	Up       bool   `json:"up"`
	Isolated bool   `json:"isolated"`
	Fenced   bool   `json:"fenced"`
}

// TopicState is one topic and its partitions in index order.
type TopicState struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Configs    map[string]string `json:"configs"`
	Partitions []PartitionState  `json:"partitions"`
}

// PartitionState is one partition: leader (-1 when leaderless), epoch,
// ISR, the leader's HW and every replica in assignment order.
type PartitionState struct {
	Partition     int32   `json:"partition"`
	Leader        int32   `json:"leader"`
	LeaderEpoch   int32   `json:"leader_epoch"`
	ISR           []int32 `json:"isr"`
	HighWatermark int64   `json:"high_watermark"`
	// LastStableOffset is the leader's LSO (open transactions hold it back).
	LastStableOffset int64          `json:"last_stable_offset"`
	Replicas         []ReplicaState `json:"replicas"`
	// AddingReplicas and RemovingReplicas: a reassignment in progress.
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
}

// ReplicaState is one broker's copy of a partition; State is "leader",
// "follower" or "offline".
type ReplicaState struct {
	Broker         int32 `json:"broker"`
	LogStartOffset int64 `json:"log_start_offset"`
	LogEndOffset   int64 `json:"log_end_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	// LogBytes is the size of the stored batches; Segments their segments.
	LogBytes int64 `json:"log_bytes"`
	Segments int   `json:"segments"`
	// LastStableOffset is the replica's own LSO.
	LastStableOffset int64  `json:"last_stable_offset"`
	State            string `json:"state"`
	InSync           bool   `json:"in_sync"`
	Paused           bool   `json:"paused,omitempty"`
	// LeaderView is what the leader knows of this replica when it is a
	// follower (nil on the leader and when leaderless).
	LeaderView *FollowerView `json:"leader_view,omitempty"`
}

// FollowerView is the leader's view of one follower, learnt from its
// fetches: the offset of its latest fetch (-1 before its first in the
// current leader epoch) and when it last fetched and was last caught up
// (Unix milliseconds, 0 for never).
type FollowerView struct {
	LogEndOffset       int64 `json:"log_end_offset"`
	LastFetchTimeMs    int64 `json:"last_fetch_time_ms"`
	LastCaughtUpTimeMs int64 `json:"last_caught_up_time_ms"`
}

// FaultState is an injected fault rule and how often it fired.
type FaultState struct {
	ID             string `json:"id"`
	API            string `json:"api"`
	Broker         int32  `json:"broker"`
	Topic          string `json:"topic"`
	Partition      *int32 `json:"partition"`
	ClientID       string `json:"client_id"`
	Error          string `json:"error"`
	ErrorCode      int16  `json:"error_code"`
	Count          int    `json:"count"`
	DelayMillis    int64  `json:"delay_ms"`
	DropConnection bool   `json:"drop_connection"`
	AfterWork      bool   `json:"after_work"`
	Hits           int    `json:"hits"`
	// Remaining is -1 for a rule that fires until removed.
	Remaining int `json:"remaining"`
}

// GroupState is one consumer group.
type GroupState struct {
	Group        string `json:"group"`
	Coordinator  int32  `json:"coordinator"`
	Type         string `json:"type"` // "classic" or "consumer" (KIP-848)
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	Generation   int32  `json:"generation"`
	// AssignmentEpoch is a KIP-848 group's target assignment epoch.
	AssignmentEpoch *int32             `json:"assignment_epoch,omitempty"`
	Leader          string             `json:"leader,omitempty"`
	Members         []GroupMemberState `json:"members"`
	Offsets         []GroupOffsetState `json:"offsets"`
}

// GroupMemberState is one group member.
type GroupMemberState struct {
	MemberID               string             `json:"member_id"`
	InstanceID             *string            `json:"instance_id,omitempty"`
	ClientID               string             `json:"client_id"`
	ClientHost             string             `json:"client_host"`
	SessionTimeoutMillis   int64              `json:"session_timeout_ms,omitempty"`
	RebalanceTimeoutMillis int64              `json:"rebalance_timeout_ms"`
	Subscription           []string           `json:"subscription,omitempty"`
	Assignment             map[string][]int32 `json:"assignment"`
	MemberEpoch            *int32             `json:"member_epoch,omitempty"`
}

// GroupOffsetState is one committed offset and the partition's lag.
type GroupOffsetState struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	LeaderEpoch     int32  `json:"leader_epoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	HighWatermark   int64  `json:"high_watermark"`
	Lag             int64  `json:"lag"`
}

// ListenerState is one listener and, per broker, its bound and advertised
// addresses; Set says every advertised address was set at runtime.
type ListenerState struct {
	Name             string                `json:"name"`
	SecurityProtocol string                `json:"security_protocol"`
	Brokers          []ListenerBrokerState `json:"brokers"`
	Set              bool                  `json:"set"`
}

// ListenerBrokerState is one broker's end of a listener.
type ListenerBrokerState struct {
	ID         int32  `json:"id"`
	Bind       string `json:"bind"`
	Advertised string `json:"advertised"`
}
