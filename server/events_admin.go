package server

// Events of the admin APIs: partitions added, reassignments.
const (
	EventPartitionsCreated     EventType = "partitions_created"     // Topic; Detail: old → new count
	EventReassignmentStarted   EventType = "reassignment_started"   // Topic, Partition; Detail: replicas → target
	EventReassignmentCompleted EventType = "reassignment_completed" // Topic, Partition; Detail: the new replicas
	EventReassignmentCancelled EventType = "reassignment_cancelled" // Topic, Partition; Detail: reverted replicas
)
