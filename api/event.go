package api

import (
	"encoding/json"
	"time"
)

// EventType names what happened. The names are part of the HTTP contract
// (GET /v1/events?type=...).
type EventType string

// The cluster's events.
const (
	EventBrokerStarted  EventType = "broker_started"
	EventBrokerStopped  EventType = "broker_stopped" // Mode: clean, crash or powerloss
	EventBrokerFenced   EventType = "broker_fenced"  // the controller noticed it is gone
	EventBrokerIsolated EventType = "broker_isolated"
	EventBrokerHealed   EventType = "broker_healed"

	EventLeaderElected       EventType = "leader_elected" // Leader, OldLeader, Epoch, Unclean, Reason
	EventPartitionLeaderless EventType = "partition_leaderless"
	EventISRShrunk           EventType = "isr_shrunk"   // Broker left; Reason: lag, fenced, manual, ...
	EventISRExpanded         EventType = "isr_expanded" // Broker joined
	EventHWAdvanced          EventType = "hw_advanced"  // From, To; coalesced per partition
	EventLogTruncated        EventType = "log_truncated"
	EventRecordsLost         EventType = "records_lost"     // acknowledged offsets [From, To) are gone
	EventLogCleaned          EventType = "log_cleaned"      // the cleaner compacted [.., To) on leader Broker; From: first dirty offset
	EventProducerExpired     EventType = "producer_expired" // ProducerID idle past producer.id.expiration.ms on leader Broker

	EventFaultAdded   EventType = "fault_added"
	EventFaultHit     EventType = "fault_hit"
	EventFaultExpired EventType = "fault_expired" // its count is used up
	EventFaultRemoved EventType = "fault_removed"

	EventTopicCreated       EventType = "topic_created"
	EventTopicDeleted       EventType = "topic_deleted"
	EventTopicConfigChanged EventType = "topic_config_changed"
	// EventGroupConfigChanged: a group's group configs (Configs: all of its
	// explicit ones after the change).
	EventGroupConfigChanged EventType = "group_config_changed"

	EventACLCreated   EventType = "acl_created" // Detail: the binding
	EventACLDeleted   EventType = "acl_deleted"
	EventQuotaChanged EventType = "quota_changed" // Detail: the entity
	// EventClientThrottled: a connection is muted for a quota; Broker, and
	// Detail with the principal, client id and throttle time.
	EventClientThrottled EventType = "client_throttled"

	EventGroupRebalanceStarted   EventType = "group_rebalance_started"
	EventGroupRebalanceCompleted EventType = "group_rebalance_completed"
	EventGroupMemberJoined       EventType = "group_member_joined"
	EventGroupMemberLeft         EventType = "group_member_left"
	EventGroupMemberExpired      EventType = "group_member_expired"
	// A consumer group's coordinator removed a member (KIP-848): it missed
	// its rebalance deadline or, as a classic member, its rejoin or sync.
	EventGroupMemberFenced EventType = "group_member_fenced"
	// Group changed protocol (group.consumer.migration.policy): upgraded
	// from classic to consumer when a KIP-848 member joined, downgraded
	// back when the last one left. Generation: the epoch it starts from;
	// Detail: how many members carried over.
	EventGroupUpgraded   EventType = "group_upgraded"
	EventGroupDowngraded EventType = "group_downgraded"
	// Committed offsets of Group expired (offsets.retention.minutes):
	// Detail lists them (topic-partition, comma-separated); Reason
	// group_deleted when the Empty group went with them.
	EventOffsetsExpired EventType = "offsets_expired"
	// Share groups (KIP-932): membership changes are the group events
	// above (Detail "share"); these report records a share partition's
	// leader took back.
	// EventShareRecordsReleased: acquired records of Group on Topic,
	// Partition [From, To] went back to Available; Reason says why
	// (acquisition lock expired, member left); Member held them; Detail
	// the delivery counts.
	EventShareRecordsReleased EventType = "share_records_released"
	// EventShareRecordsArchived: records [From, To] reached
	// share.delivery.count.limit and will never be delivered again.
	EventShareRecordsArchived EventType = "share_records_archived"

	// The LSO moved after a transaction held it below the HW (a marker
	// let it go): From, To, coalesced with hw_advanced. Partitions without
	// transactions, whose LSO is their HW, report hw_advanced only.
	EventLSOAdvanced EventType = "lso_advanced"
	// A replica's log start offset moved up: Broker, From, To; Reason
	// delete_records, follower_reset (its log ended below the leader's log
	// start) or retention.
	EventLogStartMoved EventType = "log_start_moved"
	// A follower (Broker) stopped or restarted fetching (PauseReplica,
	// ResumeReplica).
	EventReplicaPaused  EventType = "replica_paused"
	EventReplicaResumed EventType = "replica_resumed"
	EventChaosStarted   EventType = "chaos_started" // Detail: seed and spec
	EventChaosAction    EventType = "chaos_action"  // Reason: the action's kind; Detail: what it did
	EventChaosAnomaly   EventType = "chaos_anomaly" // the run's first loss, with the seed to replay it
	EventChaosStopped   EventType = "chaos_stopped"
)

// Event is one state change the cluster made. Seq numbers events from 1
// without gaps; Time is the cluster's clock (Config.Now). Fields that do
// not apply to a type hold -1 (numbers) or are empty, and are left out of
// the JSON form.
type Event struct {
	Seq        uint64
	Time       time.Time
	Type       EventType
	Broker     int32 // the broker or replica concerned
	Topic      string
	Partition  int32
	Leader     int32 // leader_elected: the new leader
	OldLeader  int32
	Epoch      int32 // the leader epoch after the change
	ISR        []int32
	From, To   int64 // offsets: HW, truncation (old and new LEO), lost range [From, To)
	Unclean    bool
	Reason     string
	Mode       StopMode // broker_stopped
	Group      string
	Member     string
	Generation int32
	Fault      string // the fault rule id
	Detail     string // a short human-readable summary of anything else
	Configs    map[string]string

	// Transaction events: the transactional id, its
	// producer id and epoch after the change, its state and the one before
	// (State also names a marker: COMMIT or ABORT), and the partitions
	// concerned.
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	State           string
	PreviousState   string
	Partitions      []TopicPartition

	// authorization_denied: who was denied what, as Kafka's authorizer
	// logs it (principal, host, operation, resource type, pattern type and
	// name) and the request's API.
	Principal    string
	Host         string
	API          string
	Operation    string
	ResourceType string
	PatternType  string
	ResourceName string

	// Schema registry events: the subject, the version (-1: none, or the
	// whole subject), the global schema id (-1: none) and its type, a hard
	// delete, and why a schema was incompatible.
	Subject    string
	Version    int32
	SchemaID   int32
	SchemaType string
	Permanent  bool
	Messages   []string
}

// Events of the admin APIs: partitions added, reassignments.
const (
	EventPartitionsCreated     EventType = "partitions_created"     // Topic; Detail: old → new count
	EventReassignmentStarted   EventType = "reassignment_started"   // Topic, Partition; Detail: replicas → target
	EventReassignmentCompleted EventType = "reassignment_completed" // Topic, Partition; Detail: the new replicas
	EventReassignmentCancelled EventType = "reassignment_cancelled" // Topic, Partition; Detail: reverted replicas
)

// The transaction events.
const (
	// A transactional id's state changed: PreviousState -> State ("" ->
	// Empty for a new id), for Reason (TxnCause...).
	EventTxnStateChanged EventType = "txn_state_changed"
	// Partitions joined the open transaction (only the new ones listed).
	EventTxnPartitionsAdded EventType = "txn_partitions_added"
	// The producer id or epoch changed (Detail says from what): an
	// InitProducerId or a timeout fences the producer that had the old
	// epoch; a transaction version 2 EndTxn bumps it routinely.
	EventTxnEpochBumped EventType = "txn_epoch_bumped"
	// The coordinator aborts a transaction open past its timeout.
	EventTxnTimedOut EventType = "txn_timed_out"
	// A marker (State COMMIT or ABORT) is in the log of Topic/Partition.
	EventTxnMarkerWritten EventType = "txn_marker_written"
	// An idle transactional id passed transactional.id.expiration.ms and
	// was removed (State Dead).
	EventTxnExpired EventType = "txn_expired"
)

// What caused a transaction transition: an event's Reason.
const (
	TxnCauseInitProducerID = "InitProducerId"
	TxnCauseAddPartitions  = "AddPartitionsToTxn"
	TxnCauseAddOffsets     = "AddOffsetsToTxn"
	// A transaction version 2 partition leader (Produce) or group
	// coordinator (TxnOffsetCommit) added the partition for the producer.
	TxnCauseImplicitAdd = "implicit add"
	TxnCauseEndTxn      = "EndTxn"
	TxnCauseTimeout     = "timeout"
	TxnCauseMarkers     = "markers written"
)

// The share coordinator's events (KIP-932 share-group state).
const (
	// A share partition's state was initialized (InitializeShareGroupState,
	// or AlterShareGroupOffsets): Group, Topic, Partition; Detail: the
	// state epoch and start offset.
	EventShareStateInitialized EventType = "share_state_initialized"
	// A share partition's state was deleted: Group, Topic, Partition.
	EventShareStateDeleted EventType = "share_state_deleted"
	// A share coordinator loaded a __share_group_state partition:
	// Broker, Partition, Epoch; Detail: how many share partitions it holds.
	EventShareCoordinatorLoaded EventType = "share_coordinator_loaded"
)

// The authentication events (SASL and client certificates).
const (
	EventClientAuthenticated   EventType = "client_authenticated"   // Broker; Reason: SASL mechanism or SSL; Detail: principal
	EventClientReauthenticated EventType = "client_reauthenticated" // KIP-368, on a connection already authenticated
	EventAuthenticationFailed  EventType = "authentication_failed"  // Broker; Reason: mechanism (oauth-token-endpoint: the built-in issuer refused a client); Detail: the message sent (a refused token: and why)
	EventSASLUserChanged       EventType = "sasl_user_changed"      // Reason: added, removed, scram_upserted, scram_deleted; Detail: principal and mechanism
	// A delegation token (KIP-48) was created, renewed or expired by a
	// request, or removed by the expiry check once past its expiry. Reason:
	// created, renewed, expired, removed; Detail: the token id, its owner
	// and its expiry (Unix ms).
	EventDelegationTokenChanged EventType = "delegation_token_changed"
	// The brokers' JWKS for OAUTHBEARER tokens was read: Reason the URL,
	// Detail the key ids.
	EventJWKSRefreshed EventType = "jwks_refreshed"
	// EventAuthorizationDenied: the authorizer denied Principal from Host
	// Operation on a resource in a request of API, on Broker; once per
	// request, resource and operation.
	EventAuthorizationDenied EventType = "authorization_denied"
)

// The schema registry's events (Subject, and what each names).
const (
	// A schema was registered under Subject: Version, SchemaID and
	// SchemaType (AVRO, PROTOBUF, JSON). Registering a schema the subject
	// already has is no event: nothing changed.
	EventSchemaRegistered EventType = "schema_registered"
	// Version of Subject (every version when Version is -1: the subject)
	// was deleted; Permanent for a hard delete, else a soft one.
	EventSchemaDeleted EventType = "schema_deleted"
	// A schema was refused as incompatible with Subject's versions:
	// Messages says why, as the registry's 409 answer does.
	EventSchemaIncompatible EventType = "schema_incompatible"
	// The compatibility level or the mode of Subject ("" for the global
	// one) changed: Configs holds "compatibility" or "mode" and its new
	// value ("" when a subject's own setting was deleted).
	EventSchemaConfigChanged EventType = "schema_config_changed"
)

// EventTypes lists every event type, in the order of their declaration.
var EventTypes = []EventType{
	EventBrokerStarted, EventBrokerStopped, EventBrokerFenced, EventBrokerIsolated, EventBrokerHealed,
	EventLeaderElected, EventPartitionLeaderless, EventISRShrunk, EventISRExpanded, EventHWAdvanced,
	EventLogTruncated, EventRecordsLost, EventLogStartMoved, EventLogCleaned, EventProducerExpired,
	EventFaultAdded, EventFaultHit, EventFaultExpired, EventFaultRemoved,
	EventTopicCreated, EventTopicDeleted, EventTopicConfigChanged, EventGroupConfigChanged,
	EventPartitionsCreated, EventReassignmentStarted, EventReassignmentCompleted, EventReassignmentCancelled,
	EventACLCreated, EventACLDeleted, EventQuotaChanged, EventClientThrottled,
	EventGroupRebalanceStarted, EventGroupRebalanceCompleted, EventGroupMemberJoined, EventGroupMemberLeft, EventGroupMemberExpired,
	EventGroupMemberFenced, EventGroupUpgraded, EventGroupDowngraded, EventOffsetsExpired, EventShareRecordsReleased, EventShareRecordsArchived,
	EventLSOAdvanced, EventReplicaPaused, EventReplicaResumed,
	EventTxnStateChanged, EventTxnPartitionsAdded, EventTxnEpochBumped, EventTxnTimedOut, EventTxnMarkerWritten, EventTxnExpired,
	EventShareStateInitialized, EventShareStateDeleted, EventShareCoordinatorLoaded,
	EventClientAuthenticated, EventClientReauthenticated, EventAuthenticationFailed, EventSASLUserChanged, EventDelegationTokenChanged, EventJWKSRefreshed, EventAuthorizationDenied,
	EventChaosStarted, EventChaosAction, EventChaosAnomaly, EventChaosStopped,
	EventSchemaRegistered, EventSchemaDeleted, EventSchemaIncompatible, EventSchemaConfigChanged,
}

type eventJSON struct {
	Seq        uint64            `json:"seq"`
	Time       time.Time         `json:"time"`
	Type       EventType         `json:"type"`
	Broker     *int32            `json:"broker,omitempty"`
	Topic      string            `json:"topic,omitempty"`
	Partition  *int32            `json:"partition,omitempty"`
	Leader     *int32            `json:"leader,omitempty"`
	OldLeader  *int32            `json:"old_leader,omitempty"`
	Epoch      *int32            `json:"epoch,omitempty"`
	ISR        []int32           `json:"isr,omitempty"`
	From       *int64            `json:"from,omitempty"`
	To         *int64            `json:"to,omitempty"`
	Unclean    bool              `json:"unclean,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Mode       StopMode          `json:"mode,omitempty"`
	Group      string            `json:"group,omitempty"`
	Member     string            `json:"member,omitempty"`
	Generation *int32            `json:"generation,omitempty"`
	Fault      string            `json:"fault,omitempty"`
	Detail     string            `json:"detail,omitempty"`
	Configs    map[string]string `json:"configs,omitempty"`

	TransactionalID string           `json:"transactional_id,omitempty"`
	ProducerID      *int64           `json:"producer_id,omitempty"`
	ProducerEpoch   *int16           `json:"producer_epoch,omitempty"`
	State           string           `json:"state,omitempty"`
	PreviousState   string           `json:"previous_state,omitempty"`
	Partitions      []TopicPartition `json:"partitions,omitempty"`

	Principal    string `json:"principal,omitempty"`
	Host         string `json:"host,omitempty"`
	API          string `json:"api,omitempty"`
	Operation    string `json:"operation,omitempty"`
	ResourceType string `json:"resource_type,omitempty"`
	PatternType  string `json:"pattern_type,omitempty"`
	ResourceName string `json:"resource_name,omitempty"`

	Subject    string   `json:"subject,omitempty"`
	Version    *int32   `json:"version,omitempty"`
	SchemaID   *int32   `json:"schema_id,omitempty"`
	SchemaType string   `json:"schema_type,omitempty"`
	Permanent  bool     `json:"permanent,omitempty"`
	Messages   []string `json:"messages,omitempty"`
}

func opt[T int16 | int32 | int64](v T) *T {
	if v == -1 {
		return nil
	}
	return &v
}

func unopt[T int16 | int32 | int64](v *T) T {
	if v == nil {
		return -1
	}
	return *v
}

// MarshalJSON leaves out the fields that do not apply.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{
		Seq: e.Seq, Time: e.Time, Type: e.Type, Broker: opt(e.Broker), Topic: e.Topic, Partition: opt(e.Partition),
		Leader: opt(e.Leader), OldLeader: opt(e.OldLeader), Epoch: opt(e.Epoch), ISR: e.ISR, From: opt(e.From), To: opt(e.To),
		Unclean: e.Unclean, Reason: e.Reason, Mode: e.Mode, Group: e.Group, Member: e.Member, Generation: opt(e.Generation),
		Fault: e.Fault, Detail: e.Detail, Configs: e.Configs,
		TransactionalID: e.TransactionalID, ProducerID: opt(e.ProducerID), ProducerEpoch: opt(e.ProducerEpoch),
		State: e.State, PreviousState: e.PreviousState, Partitions: e.Partitions,
		Principal: e.Principal, Host: e.Host, API: e.API, Operation: e.Operation, ResourceType: e.ResourceType,
		PatternType: e.PatternType, ResourceName: e.ResourceName,
		Subject: e.Subject, Version: opt(e.Version), SchemaID: opt(e.SchemaID), SchemaType: e.SchemaType,
		Permanent: e.Permanent, Messages: e.Messages,
	})
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Event{
		Seq: j.Seq, Time: j.Time, Type: j.Type, Broker: unopt(j.Broker), Topic: j.Topic, Partition: unopt(j.Partition),
		Leader: unopt(j.Leader), OldLeader: unopt(j.OldLeader), Epoch: unopt(j.Epoch), ISR: j.ISR, From: unopt(j.From), To: unopt(j.To),
		Unclean: j.Unclean, Reason: j.Reason, Mode: j.Mode, Group: j.Group, Member: j.Member, Generation: unopt(j.Generation),
		Fault: j.Fault, Detail: j.Detail, Configs: j.Configs,
		TransactionalID: j.TransactionalID, ProducerID: unopt(j.ProducerID), ProducerEpoch: unopt(j.ProducerEpoch),
		State: j.State, PreviousState: j.PreviousState, Partitions: j.Partitions,
		Principal: j.Principal, Host: j.Host, API: j.API, Operation: j.Operation, ResourceType: j.ResourceType,
		PatternType: j.PatternType, ResourceName: j.ResourceName,
		Subject: j.Subject, Version: unopt(j.Version), SchemaID: unopt(j.SchemaID), SchemaType: j.SchemaType,
		Permanent: j.Permanent, Messages: j.Messages,
	}
	return nil
}
