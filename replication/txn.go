package replication

import (
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AbortedTxn is one aborted transaction in a partition: its producer and
// the offsets of its first record and of its abort marker (Kafka's
// AbortedTxn in the transaction index).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// txnRange is an open or recently ended transaction of one producer.
type txnRange struct {
	producerID int64
	first      int64
	last       int64 // the marker's offset; -1 while open
}

// txnIndex is a replica's view of transactions in its log: the open ones,
// the ended ones whose marker may still be above the HW (they keep the LSO
// back until it is replicated, as Kafka's unreplicatedTxns do), and every
// aborted one. It is derived from the log alone, so a rebuild after
// truncation rolls it back.
type txnIndex struct {
	open         []txnRange   // by first offset
	unreplicated []txnRange   // by marker offset
	aborted      []AbortedTxn // by marker offset
}

func (x *txnIndex) begin(pid, first int64) {
	x.open = append(x.open, txnRange{producerID: pid, first: first, last: -1})
}

// end applies a marker to the producer's open transaction, if any (a
// marker for a partition the producer never wrote to ends nothing). x is
// nil only while no transaction was ever opened, so nothing is open.
func (x *txnIndex) end(b *Batch, e *producerEntry) {
	e.coordinatorEpoch = max(e.coordinatorEpoch, b.CoordinatorEpoch)
	if e.txnFirst < 0 {
		return
	}
	i := slices.IndexFunc(x.open, func(t txnRange) bool { return t.producerID == b.ProducerID })
	if i >= 0 {
		x.open = slices.Delete(x.open, i, i+1)
	}
	x.unreplicated = append(x.unreplicated, txnRange{producerID: b.ProducerID, first: e.txnFirst, last: b.BaseOffset})
	if !b.Commit {
		x.aborted = append(x.aborted, AbortedTxn{ProducerID: b.ProducerID, FirstOffset: e.txnFirst, LastOffset: b.BaseOffset})
	}
	e.txnFirst = -1
}

// lso is the last stable offset: the first offset of the earliest
// transaction not yet decided below hw, capped at hw.
func (x *txnIndex) lso(hw int64) int64 {
	if x == nil {
		return hw
	}
	x.unreplicated = slices.DeleteFunc(x.unreplicated, func(t txnRange) bool { return t.last < hw })
	out := hw
	if len(x.open) > 0 {
		out = min(out, x.open[0].first)
	}
	for _, t := range x.unreplicated {
		out = min(out, t.first)
	}
	return out
}

// abortedIn returns the aborted transactions overlapping [from, to),
// sorted by first offset as consumers expect.
func (x *txnIndex) abortedIn(from, to int64) []AbortedTxn {
	if x == nil {
		return nil
	}
	var out []AbortedTxn
	for _, a := range x.aborted {
		if a.LastOffset >= from && a.FirstOffset < to {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b AbortedTxn) int {
		switch {
		case a.FirstOffset < b.FirstOffset:
			return -1
		case a.FirstOffset > b.FirstOffset:
			return 1
		}
		return 0
	})
	return out
}

// checkMarker validates a coordinator's marker against the producer's
// state: an older producer epoch is fenced, and so is an older
// coordinator (one that lost its __transaction_state leadership).
//
// Under transaction version 2 (KIP-890) every transaction ends with a
// bumped epoch, so a marker at the producer's current epoch is a retry of
// the one that bumped it: harmless once that transaction has ended (it is
// written again, as Kafka 4.x does), stale when the producer has since
// opened another transaction at that epoch — which it must not end.
func checkMarker(e *producerEntry, b *Batch) int16 {
	switch {
	case e == nil:
		return 0
	case b.ProducerEpoch < e.epoch:
		return kerr.InvalidProducerEpoch.Code
	case b.TxnVersion >= 2 && b.ProducerEpoch == e.epoch && e.txnFirst >= 0 && b.ProducerEpoch != math.MaxInt16:
		return kerr.InvalidProducerEpoch.Code
	case b.CoordinatorEpoch < e.coordinatorEpoch:
		return kerr.TransactionCoordinatorFenced.Code
	}
	return 0
}

// LSO is the replica's last stable offset: min(first unstable offset, HW).
func (r *Replica) LSO() int64 { return r.log.prod.transactions().lso(r.log.hw) }

// OpenTransaction is one producer's transaction that is open on a replica.
type OpenTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// ProducerState is what DescribeProducers reports of one producer.
type ProducerState struct {
	ProducerID       int64
	ProducerEpoch    int16
	LastSequence     int32
	LastTimestamp    int64
	CoordinatorEpoch int32
	TxnStartOffset   int64 // -1 when no transaction is open
}

// Producers returns the replica's producer state, by producer id.
func (r *Replica) Producers() []ProducerState {
	var m map[int64]*producerEntry
	if r.log.prod != nil {
		m = r.log.prod.m
	}
	out := make([]ProducerState, 0, len(m))
	for id, e := range m {
		s := ProducerState{ProducerID: id, ProducerEpoch: e.epoch, LastSequence: -1, LastTimestamp: e.lastTimestamp,
			CoordinatorEpoch: e.coordinatorEpoch, TxnStartOffset: e.txnFirst}
		if m, ok := e.last(); ok {
			s.LastSequence = m.lastSeq
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ProducerState) int {
		switch {
		case a.ProducerID < b.ProducerID:
			return -1
		case a.ProducerID > b.ProducerID:
			return 1
		}
		return 0
	})
	return out
}

// OpenTransactions returns the transactions open on the replica, by first
// offset.
func (r *Replica) OpenTransactions() []OpenTransaction {
	x := r.log.prod.transactions()
	if x == nil {
		return []OpenTransaction{}
	}
	out := make([]OpenTransaction, len(x.open))
	for i, t := range x.open {
		out[i] = OpenTransaction{t.producerID, t.first}
	}
	return out
}

// AbortedTransactions returns every aborted transaction in the replica's
// log, by marker offset.
func (r *Replica) AbortedTransactions() []AbortedTxn {
	x := r.log.prod.transactions()
	if x == nil {
		return nil
	}
	return slices.Clone(x.aborted)
}
