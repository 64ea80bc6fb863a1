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
