package server

// The public state and event types live in package api, shared with the
// control API, fakekafka ctl and the testcontainers module. These aliases
// keep the names server.X that the Go API has always used.

import "github.com/fakekafka/fakekafka/api"

type (
	StopMode            = api.StopMode
	FaultState          = api.FaultState
	ACLBinding          = api.ACLBinding
	ACLState            = api.ACLState
	SecurityState       = api.SecurityState
	ConnectedPrincipal  = api.ConnectedPrincipal
	QuotaEntry          = api.QuotaEntry
	QuotaState          = api.QuotaState
	ListenerState       = api.ListenerState
	ListenerBrokerState = api.ListenerBrokerState
	SASLUser            = api.SASLUser
	ScramMechanism      = api.ScramMechanism
	EventType           = api.EventType
	Event               = api.Event
	EventMatcher        = api.EventMatcher
	ClusterState        = api.ClusterState
	BrokerState         = api.BrokerState
	TopicState          = api.TopicState
	TopicConfigState    = api.TopicConfigState
	ConfigEntry         = api.ConfigEntry
	PartitionState      = api.PartitionState
	ReplicaState        = api.ReplicaState
	FollowerView        = api.FollowerView
	GroupState          = api.GroupState
	GroupMemberState    = api.GroupMemberState
	GroupOffsetState    = api.GroupOffsetState
	TransactionState    = api.TransactionState
	ClockState          = api.ClockState
	ReassignmentState   = api.ReassignmentState
	CleanResult         = api.CleanResult
)

const (
	StopClean                    = api.StopClean
	StopCrash                    = api.StopCrash
	StopPowerLoss                = api.StopPowerLoss
	EventBrokerStarted           = api.EventBrokerStarted
	EventBrokerStopped           = api.EventBrokerStopped
	EventBrokerFenced            = api.EventBrokerFenced
	EventBrokerIsolated          = api.EventBrokerIsolated
	EventBrokerHealed            = api.EventBrokerHealed
	EventLeaderElected           = api.EventLeaderElected
	EventPartitionLeaderless     = api.EventPartitionLeaderless
	EventISRShrunk               = api.EventISRShrunk
	EventISRExpanded             = api.EventISRExpanded
	EventHWAdvanced              = api.EventHWAdvanced
	EventLogTruncated            = api.EventLogTruncated
	EventRecordsLost             = api.EventRecordsLost
	EventLogCleaned              = api.EventLogCleaned
	EventProducerExpired         = api.EventProducerExpired
	EventFaultAdded              = api.EventFaultAdded
	EventFaultHit                = api.EventFaultHit
	EventFaultExpired            = api.EventFaultExpired
	EventFaultRemoved            = api.EventFaultRemoved
	EventTopicCreated            = api.EventTopicCreated
	EventTopicDeleted            = api.EventTopicDeleted
	EventTopicConfigChanged      = api.EventTopicConfigChanged
	EventGroupConfigChanged      = api.EventGroupConfigChanged
	EventACLCreated              = api.EventACLCreated
	EventACLDeleted              = api.EventACLDeleted
	EventQuotaChanged            = api.EventQuotaChanged
	EventClientThrottled         = api.EventClientThrottled
	EventGroupRebalanceStarted   = api.EventGroupRebalanceStarted
	EventGroupRebalanceCompleted = api.EventGroupRebalanceCompleted
	EventGroupMemberJoined       = api.EventGroupMemberJoined
	EventGroupMemberLeft         = api.EventGroupMemberLeft
	EventGroupMemberExpired      = api.EventGroupMemberExpired
	EventGroupMemberFenced       = api.EventGroupMemberFenced
	EventGroupUpgraded           = api.EventGroupUpgraded
	EventGroupDowngraded         = api.EventGroupDowngraded
	EventOffsetsExpired          = api.EventOffsetsExpired
	EventShareRecordsReleased    = api.EventShareRecordsReleased
	EventShareRecordsArchived    = api.EventShareRecordsArchived
	EventLSOAdvanced             = api.EventLSOAdvanced
	EventLogStartMoved           = api.EventLogStartMoved
	EventReplicaPaused           = api.EventReplicaPaused
	EventReplicaResumed          = api.EventReplicaResumed
	EventChaosStarted            = api.EventChaosStarted
	EventChaosAction             = api.EventChaosAction
	EventChaosAnomaly            = api.EventChaosAnomaly
	EventChaosStopped            = api.EventChaosStopped
	EventPartitionsCreated       = api.EventPartitionsCreated
	EventReassignmentStarted     = api.EventReassignmentStarted
	EventReassignmentCompleted   = api.EventReassignmentCompleted
	EventReassignmentCancelled   = api.EventReassignmentCancelled
	EventTxnStateChanged         = api.EventTxnStateChanged
	EventTxnPartitionsAdded      = api.EventTxnPartitionsAdded
	EventTxnEpochBumped          = api.EventTxnEpochBumped
	EventTxnTimedOut             = api.EventTxnTimedOut
	EventTxnMarkerWritten        = api.EventTxnMarkerWritten
	EventTxnExpired              = api.EventTxnExpired
	EventShareStateInitialized   = api.EventShareStateInitialized
	EventShareStateDeleted       = api.EventShareStateDeleted
	EventShareCoordinatorLoaded  = api.EventShareCoordinatorLoaded
	TxnCauseInitProducerID       = api.TxnCauseInitProducerID
	TxnCauseAddPartitions        = api.TxnCauseAddPartitions
	TxnCauseAddOffsets           = api.TxnCauseAddOffsets
	TxnCauseImplicitAdd          = api.TxnCauseImplicitAdd
	TxnCauseEndTxn               = api.TxnCauseEndTxn
	TxnCauseTimeout              = api.TxnCauseTimeout
	TxnCauseMarkers              = api.TxnCauseMarkers
	EventClientAuthenticated     = api.EventClientAuthenticated
	EventClientReauthenticated   = api.EventClientReauthenticated
	EventAuthenticationFailed    = api.EventAuthenticationFailed
	EventSASLUserChanged         = api.EventSASLUserChanged
	EventDelegationTokenChanged  = api.EventDelegationTokenChanged
	EventJWKSRefreshed           = api.EventJWKSRefreshed
	EventAuthorizationDenied     = api.EventAuthorizationDenied
	EventSchemaRegistered        = api.EventSchemaRegistered
	EventSchemaDeleted           = api.EventSchemaDeleted
	EventSchemaIncompatible      = api.EventSchemaIncompatible
	EventSchemaConfigChanged     = api.EventSchemaConfigChanged
)

// EventTypes: see api.EventTypes.
var EventTypes = api.EventTypes

// OfType: see api.OfType.
func OfType(t EventType) EventMatcher { return api.OfType(t) }

// ISRShrunk: see api.ISRShrunk.
func ISRShrunk(topic string, partition int32) EventMatcher { return api.ISRShrunk(topic, partition) }

// ISRExpanded: see api.ISRExpanded.
func ISRExpanded(topic string, partition int32) EventMatcher {
	return api.ISRExpanded(topic, partition)
}

// LeaderElected: see api.LeaderElected.
func LeaderElected(topic string, partition int32) EventMatcher {
	return api.LeaderElected(topic, partition)
}

// LeaderElectedOn: see api.LeaderElectedOn.
func LeaderElectedOn(topic string, partition, broker int32) EventMatcher {
	return api.LeaderElectedOn(topic, partition, broker)
}

// LogTruncated: see api.LogTruncated.
func LogTruncated(topic string, partition int32) EventMatcher {
	return api.LogTruncated(topic, partition)
}

// RecordsLost: see api.RecordsLost.
func RecordsLost(topic string, partition int32) EventMatcher {
	return api.RecordsLost(topic, partition)
}

// LogStartMoved: see api.LogStartMoved.
func LogStartMoved(topic string, partition int32) EventMatcher {
	return api.LogStartMoved(topic, partition)
}

// HWReached: see api.HWReached.
func HWReached(topic string, partition int32, hw int64) EventMatcher {
	return api.HWReached(topic, partition, hw)
}

// LSOAdvanced: see api.LSOAdvanced.
func LSOAdvanced(topic string, partition int32, lso int64) EventMatcher {
	return api.LSOAdvanced(topic, partition, lso)
}

// BrokerStopped: see api.BrokerStopped.
func BrokerStopped(id int32) EventMatcher { return api.BrokerStopped(id) }

// BrokerStarted: see api.BrokerStarted.
func BrokerStarted(id int32) EventMatcher { return api.BrokerStarted(id) }

// BrokerFenced: see api.BrokerFenced.
func BrokerFenced(id int32) EventMatcher { return api.BrokerFenced(id) }

// TopicCreated: see api.TopicCreated.
func TopicCreated(name string) EventMatcher { return api.TopicCreated(name) }

// GroupRebalanced: see api.GroupRebalanced.
func GroupRebalanced(group string) EventMatcher { return api.GroupRebalanced(group) }

// FaultHit: see api.FaultHit.
func FaultHit(id string) EventMatcher { return api.FaultHit(id) }

// ClientThrottled: see api.ClientThrottled.
func ClientThrottled(broker int32) EventMatcher { return api.ClientThrottled(broker) }

// ReassignmentCompleted: see api.ReassignmentCompleted.
func ReassignmentCompleted(topic string, partition int32) EventMatcher {
	return api.ReassignmentCompleted(topic, partition)
}

// ReassignmentCancelled: see api.ReassignmentCancelled.
func ReassignmentCancelled(topic string, partition int32) EventMatcher {
	return api.ReassignmentCancelled(topic, partition)
}

// PartitionsCreated: see api.PartitionsCreated.
func PartitionsCreated(topic string) EventMatcher { return api.PartitionsCreated(topic) }

// ProducerExpired: see api.ProducerExpired.
func ProducerExpired(topic string, partition int32, producerID int64) EventMatcher {
	return api.ProducerExpired(topic, partition, producerID)
}

// TxnStateChanged: see api.TxnStateChanged.
func TxnStateChanged(id, state string) EventMatcher { return api.TxnStateChanged(id, state) }

// TxnCompleted: see api.TxnCompleted.
func TxnCompleted(id string) EventMatcher { return api.TxnCompleted(id) }

// TxnCommitted: see api.TxnCommitted.
func TxnCommitted(id string) EventMatcher { return api.TxnCommitted(id) }

// TxnAborted: see api.TxnAborted.
func TxnAborted(id string) EventMatcher { return api.TxnAborted(id) }

// TxnTimedOut: see api.TxnTimedOut.
func TxnTimedOut(id string) EventMatcher { return api.TxnTimedOut(id) }

// TxnEpochBumped: see api.TxnEpochBumped.
func TxnEpochBumped(id string) EventMatcher { return api.TxnEpochBumped(id) }

// ProducerFenced: see api.ProducerFenced.
func ProducerFenced(id string) EventMatcher { return api.ProducerFenced(id) }

// TxnExpired: see api.TxnExpired.
func TxnExpired(id string) EventMatcher { return api.TxnExpired(id) }

// TxnPartitionsAdded: see api.TxnPartitionsAdded.
func TxnPartitionsAdded(id string) EventMatcher { return api.TxnPartitionsAdded(id) }

// TxnMarkerWritten: see api.TxnMarkerWritten.
func TxnMarkerWritten(id, topic string, partition int32) EventMatcher {
	return api.TxnMarkerWritten(id, topic, partition)
}

// Int32: see api.Int32. Fault{Partition: server.Int32(0)}.
func Int32(v int32) *int32 { return api.Int32(v) }

// AuthorizationDenied: see api.AuthorizationDenied.
func AuthorizationDenied(principal, resourceName string) EventMatcher {
	return api.AuthorizationDenied(principal, resourceName)
}
