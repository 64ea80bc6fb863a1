package server

// Transaction events: every transition a transaction coordinator makes
// durable is reported once it took effect, labelled with what caused it
// (the request, the timeout, the markers), plus one event per marker
// written. A commit reads, in order:
//
//	txn_state_changed   Empty -> Ongoing (AddPartitionsToTxn)   txn_partitions_added
//	txn_state_changed   Ongoing -> PrepareCommit (EndTxn)
//	txn_marker_written  per partition, State COMMIT
//	txn_state_changed   PrepareCommit -> CompleteCommit (markers written)

import (
	"fmt"
	"slices"

	"github.com/fakekafka/fakekafka/transaction"
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

// emitTxnTransition reports what a durable transition from prev (exists:
// whether the id had metadata) to next changed, caused by cause.
func (c *Cluster) emitTxnTransition(prev transaction.Metadata, exists bool, next transaction.Metadata, cause string) {
	fill := func(e *Event) {
		e.TransactionalID, e.ProducerID, e.ProducerEpoch, e.Reason = next.TransactionalID, next.ProducerID, next.ProducerEpoch, cause
	}
	if cause == TxnCauseTimeout && prev.State == transaction.Ongoing {
		c.emit(EventTxnTimedOut, func(e *Event) {
			fill(e)
			e.Partitions = slices.Clone(prev.Partitions)
			e.Detail = fmt.Sprintf("open since %d ms, timeout %d ms", prev.TxnStartMs, prev.TimeoutMs)
		})
	}
	if exists && (prev.ProducerID != next.ProducerID || prev.ProducerEpoch != next.ProducerEpoch) {
		c.emit(EventTxnEpochBumped, func(e *Event) {
			fill(e)
			e.Detail = fmt.Sprintf("producer id %d epoch %d -> producer id %d epoch %d", prev.ProducerID, prev.ProducerEpoch, next.ProducerID, next.ProducerEpoch)
		})
	}
	if !exists || prev.State != next.State {
		c.emit(EventTxnStateChanged, func(e *Event) {
			fill(e)
			e.State, e.Partitions = next.State.String(), slices.Clone(next.Partitions)
			if exists {
				e.PreviousState = prev.State.String()
			}
			if len(e.Partitions) == 0 && next.State != transaction.Empty {
				e.Partitions = slices.Clone(prev.Partitions) // Complete*: the partitions it ended
			}
		})
	}
	var added []transaction.Partition
	for _, tp := range next.Partitions {
		if !prev.HasPartition(tp) || prev.State != transaction.Ongoing {
			added = append(added, tp)
		}
	}
	if len(added) > 0 {
		c.emit(EventTxnPartitionsAdded, func(e *Event) {
			fill(e)
			e.State, e.Partitions = next.State.String(), added
		})
	}
}

// emitTxnMarker reports a marker written for transactional id (empty when
// the marker came from a WriteTxnMarkers request).
func (c *Cluster) emitTxnMarker(id string, tp transaction.Partition, producerID int64, epoch int16, commit bool) {
	c.emit(EventTxnMarkerWritten, func(e *Event) {
		e.TransactionalID, e.ProducerID, e.ProducerEpoch = id, producerID, epoch
		e.Topic, e.Partition, e.State = tp.Topic, tp.Partition, markerName(commit)
	})
}

func markerName(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// emitTxnExpired reports an idle transactional id removed.
func (c *Cluster) emitTxnExpired(md transaction.Metadata) {
	c.emit(EventTxnExpired, func(e *Event) {
		e.TransactionalID, e.ProducerID, e.ProducerEpoch = md.TransactionalID, md.ProducerID, md.ProducerEpoch
		e.PreviousState, e.State, e.Reason = md.State.String(), transaction.Dead.String(), "transactional.id.expiration.ms"
	})
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
		return m(e) && (e.State == transaction.CompleteCommit.String() || e.State == transaction.CompleteAbort.String())
	}
}

// TxnCommitted matches a transaction of id reaching CompleteCommit.
func TxnCommitted(id string) EventMatcher {
	return TxnStateChanged(id, transaction.CompleteCommit.String())
}

// TxnAborted matches a transaction of id reaching CompleteAbort.
func TxnAborted(id string) EventMatcher {
	return TxnStateChanged(id, transaction.CompleteAbort.String())
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
