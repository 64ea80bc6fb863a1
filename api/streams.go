package api

// StreamsTasks are a streams group member's tasks (KIP-1071): partitions
// by subtopology id, of each kind.
type StreamsTasks struct {
	Active  map[string][]int32 `json:"active"`
	Standby map[string][]int32 `json:"standby"`
	Warmup  map[string][]int32 `json:"warmup"`
}

// StreamsMemberState is what a streams group's member adds to
// GroupMemberState.
type StreamsMemberState struct {
	// ProcessID is the Kafka Streams client (process) the member belongs
	// to; its members never share a task.
	ProcessID string `json:"process_id"`
	// UserEndpoint is application.server ("host:port"), empty when unset.
	UserEndpoint  string `json:"user_endpoint,omitempty"`
	TopologyEpoch int32  `json:"topology_epoch"`
	// State is the member's reconciliation state: STABLE,
	// UNREVOKED_TASKS or UNRELEASED_TASKS.
	State string `json:"state"`
	// Tasks are the tasks the member owns now, Target the ones the
	// assignor gave it.
	Tasks  StreamsTasks `json:"tasks"`
	Target StreamsTasks `json:"target"`
}
