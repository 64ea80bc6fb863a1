package replication

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// batchesToRetain is Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the
// reason idempotence allows at most 5 in-flight requests per connection.
const batchesToRetain = 5

// batchMeta is what a replica remembers of one recent idempotent batch.
type batchMeta struct {
	firstSeq, lastSeq int32
	firstOffset       int64
	timestamp         int64
}

// producerEntry is one producer id's state on one replica.
type producerEntry struct {
	epoch   int16
	recent  [batchesToRetain]batchMeta // ring, oldest first at head
	head, n int
	// txnFirst is the first offset of the producer's open transaction on
	// this partition, -1 when none (Kafka's currentTxnFirstOffset).
	txnFirst int64
	// coordinatorEpoch is that of the last marker, so a marker from an
	// older coordinator is refused.
	coordinatorEpoch int32
	lastTimestamp    int64
}

func (e *producerEntry) last() (batchMeta, bool) {
	if e.n == 0 {
		return batchMeta{}, false
	}
	return e.recent[(e.head+e.n-1)%batchesToRetain], true
}

func (e *producerEntry) add(m batchMeta) {
	if e.n < batchesToRetain {
		e.recent[(e.head+e.n)%batchesToRetain] = m
		e.n++
		return
	}
	e.recent[e.head] = m
	e.head = (e.head + 1) % batchesToRetain
}

func (e *producerEntry) duplicateOf(first, last int32) (batchMeta, bool) {
	for i := 0; i < e.n; i++ {
		m := e.recent[(e.head+i)%batchesToRetain]
		if m.firstSeq == first && m.lastSeq == last {
			return m, true
		}
	}
	return batchMeta{}, false
}

// producers is a replica's producer state: idempotence per producer id,
// open transactions and the index of aborted ones. Followers build it from
// the batches they replicate, so it survives a leader change. A replica
// has none until a batch with a producer id arrives, and its transaction
// index is made when a transaction first opens: most partitions never see
// a transaction, and an idle one no producer at all. Its methods take a
// nil *producers as empty.
type producers struct {
	m    map[int64]*producerEntry
	txns *txnIndex
}

// transactions is the transaction index, nil while no transaction opened.
func (ps *producers) transactions() *txnIndex {
	if ps == nil {
		return nil
	}
	return ps.txns
}

// updateProducers records an appended batch in r's producer state, making
// that state for the first batch with a producer id.
func (r *Replica) updateProducers(b *Batch) {
	if b.ProducerID < 0 {
		return
	}
	if r.log.prod == nil {
		r.log.own().prod = &producers{}
	}
	r.log.prod.update(b)
}

// incrementSequence adds n to a sequence number with Kafka's wrap at MaxInt32.
func incrementSequence(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// check validates an idempotent batch on the leader before it is appended
// (Kafka's ProducerAppendInfo). It returns the original batch when b is a
// retry of one of the last five batches, or an error code.
func (ps *producers) check(b *Batch) (dup batchMeta, isDup bool, code int16) {
	if b.ProducerID < 0 {
		return batchMeta{}, false, 0
	}
	var e *producerEntry
	if ps != nil {
		e = ps.m[b.ProducerID]
	}
	if b.Control {
		return batchMeta{}, false, checkMarker(e, b)
	}
	if e != nil && !b.Transactional && e.txnFirst >= 0 {
		// KIP-98: an idempotent batch from a producer whose transaction
		// is open here.
		return batchMeta{}, false, kerr.InvalidTxnState.Code
	}
	if b.BaseSequence < 0 && e != nil {
		// Written by a coordinator for the producer (transactional
		// offsets): no sequence, only the epoch is checked.
		if b.ProducerEpoch < e.epoch {
			return batchMeta{}, false, kerr.InvalidProducerEpoch.Code
		}
		return batchMeta{}, false, 0
	}
	if e == nil {
		// KIP-360: no state for this producer (new, expired or truncated
		// away): any sequence is accepted, except from a transaction
		// version 2 producer, whose first batch here is sequence 0 (a later
		// one arriving first had an earlier one refused, as
		// CONCURRENT_TRANSACTIONS, ahead of it).
		if b.EpochBumpVerified && b.BaseSequence != 0 {
			return batchMeta{}, false, kerr.OutOfOrderSequenceNumber.Code
		}
		return batchMeta{}, false, 0
	}
	first, last := b.BaseSequence, b.lastSequence()
	if b.ProducerEpoch == e.epoch {
		if m, ok := e.duplicateOf(first, last); ok {
			return m, true, 0
		}
	}
	switch {
	case b.ProducerEpoch < e.epoch:
		return batchMeta{}, false, kerr.InvalidProducerEpoch.Code
	case b.ProducerEpoch > e.epoch:
		if first != 0 {
			return batchMeta{}, false, kerr.OutOfOrderSequenceNumber.Code
		}
	default:
		// No batch at this epoch yet (a transaction version 2 marker
		// bumped it): Kafka's last sequence is then -1, so the next is 0.
		lastSeq := int32(-1)
		if m, ok := e.last(); ok {
			lastSeq = m.lastSeq
		}
		if !inSequence(lastSeq, first) {
			return batchMeta{}, false, kerr.OutOfOrderSequenceNumber.Code
		}
	}
	return batchMeta{}, false, 0
}

func inSequence(lastSeq, next int32) bool {
	return next == lastSeq+1 || (next == 0 && lastSeq == math.MaxInt32)
}

// update records an appended batch; leaders and followers both call it.
func (ps *producers) update(b *Batch) {
	if b.ProducerID < 0 {
		return
	}
	e := ps.m[b.ProducerID]
	if e == nil {
		e = &producerEntry{epoch: b.ProducerEpoch, txnFirst: -1, coordinatorEpoch: -1}
		if ps.m == nil {
			ps.m = map[int64]*producerEntry{}
		}
		ps.m[b.ProducerID] = e
	}
	if b.ProducerEpoch > e.epoch {
		// A new epoch forgets the sequences; an open transaction stays
		// open until its marker (which may itself carry the new epoch).
		*e = producerEntry{epoch: b.ProducerEpoch, txnFirst: e.txnFirst, coordinatorEpoch: e.coordinatorEpoch}
	}
	e.lastTimestamp = b.MaxTimestamp
	if b.Control {
		ps.txns.end(b, e)
		return
	}
	// An empty batch (the cleaner keeps a producer's last one, emptied)
	// opens nothing: its transaction's marker may be gone.
	if b.Transactional && e.txnFirst < 0 && b.NumRecords > 0 {
		e.txnFirst = b.BaseOffset
		if ps.txns == nil {
			ps.txns = &txnIndex{}
		}
		ps.txns.begin(b.ProducerID, b.BaseOffset)
	}
	if b.BaseSequence < 0 {
		return
	}
	e.add(batchMeta{firstSeq: b.BaseSequence, lastSeq: b.lastSequence(), firstOffset: b.BaseOffset, timestamp: b.MaxTimestamp})
}

// rebuildProducers replays r's log, the way Kafka reloads producer state
// and the transaction index after truncation or restart.
func (r *Replica) rebuildProducers() {
	if r.log.prod != nil {
		r.log.own().prod = nil
	}
	for _, s := range r.log.segs {
		for _, b := range s.batches {
			r.updateProducers(b)
		}
	}
}

// HasOngoingTransaction is the check a Kafka leader makes before it asks a
// transactional batch's coordinator (Partition.maybeStartTransactionVerification):
// the producer already has a transaction open here at this epoch, so the
// batch needs no verification.
func (r *Replica) HasOngoingTransaction(pid int64, epoch int16) bool {
	if r.log.prod == nil {
		return false
	}
	e := r.log.prod.m[pid]
	return e != nil && e.txnFirst >= 0 && e.epoch == epoch
}
