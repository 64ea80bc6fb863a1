package api

// Matchers select events for server.Cluster.WaitFor, as in
//
//	ev, err := c.WaitFor(ctx, api.ISRShrunk("orders", 0))

// EventMatcher selects events for WaitFor.
type EventMatcher func(Event) bool

// OfType matches every event of type t.
func OfType(t EventType) EventMatcher { return func(e Event) bool { return e.Type == t } }

func partitionEvent(t EventType, topic string, partition int32) EventMatcher {
	return func(e Event) bool { return e.Type == t && e.Topic == topic && e.Partition == partition }
}

// ISRShrunk matches a replica leaving the ISR of topic/partition.
func ISRShrunk(topic string, partition int32) EventMatcher {
	return partitionEvent(EventISRShrunk, topic, partition)
}

// ISRExpanded matches a replica joining the ISR of topic/partition.
func ISRExpanded(topic string, partition int32) EventMatcher {
	return partitionEvent(EventISRExpanded, topic, partition)
}

// LeaderElected matches any new leader of topic/partition.
func LeaderElected(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLeaderElected, topic, partition)
}

// LeaderElectedOn matches broker becoming leader of topic/partition.
func LeaderElectedOn(topic string, partition, broker int32) EventMatcher {
	m := LeaderElected(topic, partition)
	return func(e Event) bool { return m(e) && e.Leader == broker }
}

// LogTruncated matches a truncation of any replica of topic/partition.
func LogTruncated(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLogTruncated, topic, partition)
}

// RecordsLost matches acknowledged records of topic/partition vanishing.
func RecordsLost(topic string, partition int32) EventMatcher {
	return partitionEvent(EventRecordsLost, topic, partition)
}

// LogStartMoved matches the log start offset of any replica of
// topic/partition moving up (retention, DeleteRecords, ...).
func LogStartMoved(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLogStartMoved, topic, partition)
}

// HWReached matches the HW of topic/partition advancing to at least hw.
func HWReached(topic string, partition int32, hw int64) EventMatcher {
	m := partitionEvent(EventHWAdvanced, topic, partition)
	return func(e Event) bool { return m(e) && e.To >= hw }
}

// LSOAdvanced matches the LSO of topic/partition moving on its own (a
// transaction decided) to at least lso.
func LSOAdvanced(topic string, partition int32, lso int64) EventMatcher {
	m := partitionEvent(EventLSOAdvanced, topic, partition)
	return func(e Event) bool { return m(e) && e.To >= lso }
}

func brokerEvent(t EventType, id int32) EventMatcher {
	return func(e Event) bool { return e.Type == t && e.Broker == id }
}

// BrokerStopped matches broker id stopping in any mode.
func BrokerStopped(id int32) EventMatcher { return brokerEvent(EventBrokerStopped, id) }

// BrokerStarted matches broker id starting again.
func BrokerStarted(id int32) EventMatcher { return brokerEvent(EventBrokerStarted, id) }

// BrokerFenced matches the controller fencing broker id.
func BrokerFenced(id int32) EventMatcher { return brokerEvent(EventBrokerFenced, id) }

// TopicCreated matches the creation of topic name.
func TopicCreated(name string) EventMatcher {
	return func(e Event) bool { return e.Type == EventTopicCreated && e.Topic == name }
}

// GroupRebalanced matches a completed rebalance of group.
func GroupRebalanced(group string) EventMatcher {
	return func(e Event) bool { return e.Type == EventGroupRebalanceCompleted && e.Group == group }
}

// FaultHit matches the fault rule with id firing.
func FaultHit(id string) EventMatcher {
	return func(e Event) bool { return e.Type == EventFaultHit && e.Fault == id }
}

// ClientThrottled matches a connection muted for a quota on broker (0 for
// any).
func ClientThrottled(broker int32) EventMatcher {
	return func(e Event) bool { return e.Type == EventClientThrottled && (broker == 0 || e.Broker == broker) }
}

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

// ProducerExpired matches topic/partition's leader forgetting producerID
// after producer.id.expiration.ms.
func ProducerExpired(topic string, partition int32, producerID int64) EventMatcher {
	m := partitionEvent(EventProducerExpired, topic, partition)
	return func(e Event) bool { return m(e) && e.ProducerID == producerID }
}

func txnEvent(t EventType, id string) EventMatcher {
	return func(e Event) bool { return e.Type == t && e.TransactionalID == id }
}

// TxnStateChanged matches transactional id entering state (Kafka's name:
// Ongoing, PrepareCommit, CompleteAbort...).
func TxnStateChanged(id, state string) EventMatcher {
	m := txnEvent(EventTxnStateChanged, id)
	return func(e Event) bool { return m(e) && e.State == state }
}

// TxnCompleted matches a transaction of id ending: CompleteCommit or
// CompleteAbort, once every marker is written.
func TxnCompleted(id string) EventMatcher {
	m := txnEvent(EventTxnStateChanged, id)
	return func(e Event) bool {
		return m(e) && (e.State == "CompleteCommit" || e.State == "CompleteAbort")
	}
}

// TxnCommitted matches a transaction of id reaching CompleteCommit.
func TxnCommitted(id string) EventMatcher {
	return TxnStateChanged(id, "CompleteCommit")
}

// TxnAborted matches a transaction of id reaching CompleteAbort.
func TxnAborted(id string) EventMatcher {
	return TxnStateChanged(id, "CompleteAbort")
}

// TxnTimedOut matches the coordinator aborting id's transaction on
// timeout.
func TxnTimedOut(id string) EventMatcher { return txnEvent(EventTxnTimedOut, id) }

// TxnEpochBumped matches any change of id's producer id or epoch.
func TxnEpochBumped(id string) EventMatcher { return txnEvent(EventTxnEpochBumped, id) }

// ProducerFenced matches id's producer epoch bumped by an InitProducerId
// or a timeout: the producer that had the old epoch is fenced.
func ProducerFenced(id string) EventMatcher {
	m := txnEvent(EventTxnEpochBumped, id)
	return func(e Event) bool { return m(e) && (e.Reason == TxnCauseInitProducerID || e.Reason == TxnCauseTimeout) }
}

// TxnExpired matches id being removed after transactional.id.expiration.ms.
func TxnExpired(id string) EventMatcher { return txnEvent(EventTxnExpired, id) }

// TxnPartitionsAdded matches partitions joining id's transaction.
func TxnPartitionsAdded(id string) EventMatcher { return txnEvent(EventTxnPartitionsAdded, id) }

// TxnMarkerWritten matches a marker of id's transaction written to
// topic/partition.
func TxnMarkerWritten(id, topic string, partition int32) EventMatcher {
	m := txnEvent(EventTxnMarkerWritten, id)
	return func(e Event) bool { return m(e) && e.Topic == topic && e.Partition == partition }
}

// AuthorizationDenied matches a denial of the principal ("User:alice"; ""
// for anyone) on the named resource ("" for any).
func AuthorizationDenied(principal, resourceName string) EventMatcher {
	return func(e Event) bool {
		return e.Type == EventAuthorizationDenied && (principal == "" || e.Principal == principal) &&
			(resourceName == "" || e.ResourceName == resourceName)
	}
}

// SchemaRegistered matches a registration under subject ("" for any).
func SchemaRegistered(subject string) EventMatcher {
	return subjectEvent(EventSchemaRegistered, subject)
}

// SchemaRegisteredVersion matches version of subject being registered.
func SchemaRegisteredVersion(subject string, version int32) EventMatcher {
	m := subjectEvent(EventSchemaRegistered, subject)
	return func(e Event) bool { return m(e) && e.Version == version }
}

// SchemaDeleted matches a soft or permanent delete in subject ("" for
// any): of one version, or of the subject (Version -1).
func SchemaDeleted(subject string) EventMatcher { return subjectEvent(EventSchemaDeleted, subject) }

// SchemaIncompatible matches a schema refused as incompatible with
// subject ("" for any).
func SchemaIncompatible(subject string) EventMatcher {
	return subjectEvent(EventSchemaIncompatible, subject)
}

// SchemaConfigChanged matches a change of subject's compatibility level
// or mode; "" matches the global ones only.
func SchemaConfigChanged(subject string) EventMatcher {
	return func(e Event) bool { return e.Type == EventSchemaConfigChanged && e.Subject == subject }
}

func subjectEvent(t EventType, subject string) EventMatcher {
	return func(e Event) bool { return e.Type == t && (subject == "" || e.Subject == subject) }
}
