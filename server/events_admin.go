package server

// Events of the admin APIs: partitions added, reassignments.
const (
	EventPartitionsCreated     EventType = "partitions_created"     // Topic; Detail: old → new count
	EventReassignmentStarted   EventType = "reassignment_started"   // Topic, Partition; Detail: replicas → target
	EventReassignmentCompleted EventType = "reassignment_completed" // Topic, Partition; Detail: the new replicas
	EventReassignmentCancelled EventType = "reassignment_cancelled" // Topic, Partition; Detail: reverted replicas
)

// ReassignmentCompleted matches the end of a reassignment of
// topic/partition.
func ReassignmentCompleted(topic string, partition int32) EventMatcher {
	return partitionEvent(EventReassignmentCompleted, topic, partition)
}

// ReassignmentCancelled matches the cancellation of a reassignment of
// topic/partition.
func ReassignmentCancelled(topic string, partition int32) EventMatcher {
	return partitionEvent(EventReassignmentCancelled, topic, partition)
}

// PartitionsCreated matches partitions being added to topic.
func PartitionsCreated(topic string) EventMatcher {
	return func(e Event) bool { return e.Type == EventPartitionsCreated && e.Topic == topic }
}
