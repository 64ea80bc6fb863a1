package server

// Transaction markers: once a PrepareCommit or PrepareAbort is durable, the
// coordinator writes a control batch to every partition of the transaction
// (as Kafka's TransactionMarkerChannelManager sends WriteTxnMarkers to
// their leaders: one request per leader, txn_marker_requests.go), each
// acknowledged once the ISR has it (the HW passed it), retrying the
// partitions that fail, and then writes CompleteCommit or CompleteAbort
// with acks=all; the transaction is complete once that is committed. Markers to __consumer_offsets
// partitions make the transaction's pending offsets visible (or drop them).
//
// A held partition (HoldTransactionMarkers) gets no marker until released,
// so its LSO stays at the transaction's first offset.

import (
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
)

// markerRetryBackoff is how long a failed marker waits before it is sent
// again (the leader may be moving).
const markerRetryBackoff = 50 * time.Millisecond

// startMarkers sends md's markers in the background as coordinator broker
// and completes the transaction once all are written.
func (c *Cluster) startMarkers(broker int32, e *txnEntry, md transaction.Metadata) {
	select {
	case <-c.closing:
		return
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.sendMarkers(broker, e, md)
	}()
}

func (c *Cluster) sendMarkers(broker int32, e *txnEntry, md transaction.Metadata) {
	commit := md.State == transaction.PrepareCommit
	m := txnMarker{md.ProducerID, md.ProducerEpoch, commit, e.Shard().At().Epoch, markerTxnVersion(md)}
	alive := func() bool {
		b := c.broker(broker)
		return b != nil && b.up.Load() && c.txnCurrent(e)
	}
	pending := md.Partitions
	for len(pending) > 0 {
		var ready, held []transaction.Partition
		c.txn.mu.Lock()
		for _, tp := range pending {
			if c.txn.held[topicPartition{tp.Topic, tp.Partition}] {
				held = append(held, tp)
			} else {
				ready = append(ready, tp)
			}
		}
		c.txn.mu.Unlock()
		if len(ready) == 0 {
			if !c.waitMarkerRelease(topicPartition{held[0].Topic, held[0].Partition}) {
				return
			}
			continue
		}
		if !alive() {
			return // the next coordinator finishes the transaction
		}
		// One request per leader, in parallel, as Kafka's marker channel
		// sends them; each partition's answer decides its retry.
		codes := c.markerRound(broker, ready, m)
		var retry []transaction.Partition
		for i, tp := range ready {
			code := codes[i]
			if code == 0 {
				c.emitTxnMarker(e.ID(), tp, md.ProducerID, md.ProducerEpoch, commit)
			}
			switch code {
			case 0, kerr.UnknownTopicOrPartition.Code, kerr.InvalidProducerEpoch.Code:
				// Written, or the partition is gone, or a newer epoch of
				// the producer already ended it: nothing more to do.
			case kerr.TransactionCoordinatorFenced.Code:
				return // a newer coordinator owns the transaction
			default:
				c.log.Debug("marker failed, retrying", "topic", tp.Topic, "partition", tp.Partition, "error", kerr.ErrorForCode(code))
				retry = append(retry, tp)
			}
		}
		pending = append(retry, held...)
		if len(retry) > 0 {
			t := time.NewTimer(markerRetryBackoff)
			select {
			case <-t.C:
			case <-c.closing:
				t.Stop()
				return
			}
		}
	}
	if !alive() {
		return
	}
	c.txnApply(e, TxnCauseMarkers, func(cur *transaction.Metadata, pending bool) transaction.Decision {
		if cur == nil || pending || cur.State != md.State || cur.ProducerEpoch != md.ProducerEpoch {
			return transaction.Decision{}
		}
		next, ok := transaction.Complete(*cur, c.now().UnixMilli())
		if !ok {
			return transaction.Decision{}
		}
		return transaction.Decision{Next: &next}
	})
}

// txnMarker is one transaction marker to write, as a WriteTxnMarkers
// request names it.
type txnMarker struct {
	producerID int64
	epoch      int16
	commit     bool
	coordEpoch int32
	txnVersion int8 // 2: KIP-890's epoch bump per transaction
}

// markerTxnVersion is the transaction version md's markers are written
// under, as Kafka's coordinator names it in WriteTxnMarkers v2.
func markerTxnVersion(md transaction.Metadata) int8 {
	if md.TV2 {
		return 2
	}
	return 0
}

// appendMarker appends a marker to p as broker, which must lead it.
func (c *Cluster) appendMarker(p *partition, broker int32, m txnMarker) int16 {
	now := c.now().UnixMilli()
	raw := protocol.BuildControlBatch(m.producerID, m.epoch, m.commit, m.coordEpoch, now)
	b := &replication.Batch{Raw: raw, LastOffset: 0, MaxTimestamp: now, ProducerID: m.producerID, ProducerEpoch: m.epoch,
		BaseSequence: -1, NumRecords: 1, Transactional: true, Control: true, Commit: m.commit,
		TxnVersion: m.txnVersion, CoordinatorEpoch: m.coordEpoch}
	_, code := c.appendInternal(p, broker, b, txnWriteTimeout)
	if code == 0 && p.t.name == offsetsTopic {
		// The group coordinator's shard replays the marker: the
		// transaction's pending offsets become committed or go.
		if sh := c.coord.Shard(p.index); sh != nil {
			sh.Marker(m.producerID, m.epoch, m.commit)
		}
	}
	return code
}

// waitMarkerRelease blocks while markers to tp are held; false when the
// cluster closes.
func (c *Cluster) waitMarkerRelease(tp topicPartition) bool {
	for {
		c.txn.mu.Lock()
		held := c.txn.held[tp]
		ch := c.txn.releaseChan()
		c.txn.mu.Unlock()
		if !held {
			return true
		}
		select {
		case <-ch:
		case <-c.closing:
			return false
		}
	}
}

// releaseChan returns the channel closed at the next hold change. Callers
// hold co.mu.
func (co *txnCoordinators) releaseChan() chan struct{} {
	if co.release == nil {
		co.release = make(chan struct{})
	}
	return co.release
}

// HoldTransactionMarkers stops coordinators from writing transaction
// markers to one partition until ReleaseTransactionMarkers: the
// transactions ending there stay PrepareCommit/PrepareAbort and the
// partition's LSO stays at their first offset, as when its leader cannot
// be reached.
func (c *Cluster) HoldTransactionMarkers(topic string, partition int32) error {
	if c.partition(topic, partition) == nil {
		return fmt.Errorf("%w: %s/%d", errUnknownPartition, topic, partition)
	}
	c.txn.mu.Lock()
	defer c.txn.mu.Unlock()
	if c.txn.held == nil {
		c.txn.held = map[topicPartition]bool{}
	}
	c.txn.held[topicPartition{topic, partition}] = true
	return nil
}

// ReleaseTransactionMarkers lets held markers to the partition go out.
func (c *Cluster) ReleaseTransactionMarkers(topic string, partition int32) {
	c.txn.mu.Lock()
	defer c.txn.mu.Unlock()
	delete(c.txn.held, topicPartition{topic, partition})
	if c.txn.release != nil {
		close(c.txn.release)
		c.txn.release = nil
	}
}

// CrashTransactionCoordinatorBeforeMarkers arms a one-shot fault: the next
// transaction coordinator that makes a PrepareCommit or PrepareAbort
// durable crashes (as StopBroker with StopCrash) before sending any marker
// and without answering the EndTxn. The coordinator that takes over loads
// the prepared state and finishes the transaction.
func (c *Cluster) CrashTransactionCoordinatorBeforeMarkers() {
	c.txn.mu.Lock()
	c.txn.crashBeforeMarkers = true
	c.txn.mu.Unlock()
}
