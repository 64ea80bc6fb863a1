package transaction

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// InitRequest is an InitProducerId with a transactional id.
type InitRequest struct {
	TimeoutMs int32
	// ProducerID and ProducerEpoch are the producer's current ones (v3+,
	// KIP-360), or -1, -1.
	ProducerID    int64
	ProducerEpoch int16
	// TV2 is whether the client will run transaction version 2.
	TV2 bool
	// ClusterTV2 is whether the cluster's finalized transaction.version is
	// 2: Kafka aborts an Ongoing transaction it fences at InitProducerId
	// under that version (whatever the client's), which remembers the
	// fenced epoch, so the producer's own KIP-360 retry with it gets the
	// new epoch instead of PRODUCER_FENCED.
	ClusterTV2 bool
}

// InitProducerID is Kafka's TransactionCoordinator.handleInitProducerId for
// an id that has metadata (use New for one that does not): cur is the
// current state, pending whether a transition is still being written. It
// may need a new producer id (epoch exhausted); newID supplies one.
//
// An Ongoing transaction is fenced and aborted: Next is PrepareAbort with
// the epoch bumped, and the answer is CONCURRENT_TRANSACTIONS so the client
// retries once the abort completes. Otherwise Next is Empty with the bumped
// epoch (or a new producer id at epoch 0), and the answer is Next's
// producer id and epoch; a retry of a bump whose answer was lost gets the
// same epoch again. PRODUCER_FENCED is for v4+; callers map it to
// INVALID_PRODUCER_EPOCH below.
func InitProducerID(cur Metadata, pending bool, req InitRequest, newID func() int64, nowMs int64) Decision {
	expected := req.ProducerID >= 0
	if pending {
		return answer(kerr.ConcurrentTransactions.Code)
	}
	if expected && !cur.validProducerID(req.ProducerID, req.ProducerEpoch) {
		return answer(kerr.ProducerFenced.Code)
	}
	switch cur.State {
	case PrepareCommit, PrepareAbort, PrepareEpochFence, Dead:
		return answer(kerr.ConcurrentTransactions.Code)
	case Ongoing:
		return write(cur.fence(req.ClusterTV2, nowMs), kerr.ConcurrentTransactions.Code)
	}
	next := cur.transition()
	next.TimeoutMs, next.TV2 = req.TimeoutMs, req.TV2
	next.State, next.Partitions, next.TxnStartMs, next.LastUpdateMs = Empty, nil, -1, nowMs
	if EpochExhausted(cur.ProducerEpoch) {
		if expected && req.ProducerEpoch != cur.ProducerEpoch {
			// Kafka's prepareIncrementProducerEpoch refuses an exhausted
			// epoch with an IllegalStateException, which the request
			// answers as UNKNOWN_SERVER_ERROR (even for a retry).
			return answer(kerr.UnknownServerError.Code)
		}
		// Rotate to a new producer id (Kafka's prepareProducerIdRotation).
		next.ProducerID, next.ProducerEpoch = newID(), 0
		next.LastProducerEpoch = noEpoch
		if expected {
			next.LastProducerEpoch = cur.ProducerEpoch
		}
		return write(next, 0)
	}
	switch {
	case !expected:
		next.ProducerEpoch, next.LastProducerEpoch = cur.ProducerEpoch+1, noEpoch
	case cur.ProducerEpoch == noEpoch || req.ProducerEpoch == cur.ProducerEpoch:
		next.ProducerEpoch, next.LastProducerEpoch = cur.ProducerEpoch+1, cur.ProducerEpoch
	case req.ProducerEpoch == cur.LastProducerEpoch:
		// A retry of the bump that already happened: same answer again.
	default:
		return answer(kerr.ProducerFenced.Code)
	}
	return write(next, 0)
}

// validProducerID is Kafka's isValidProducerId: a sent producer id must be
// the current one, unless the metadata was just created, or it is the
// previous id and its epoch was exhausted (a retry of the rotation).
func (m *Metadata) validProducerID(id int64, epoch int16) bool {
	return m.ProducerEpoch == noEpoch || id == m.ProducerID ||
		(id == m.PrevProducerID && EpochExhausted(epoch))
}

// fence bumps the epoch of an Ongoing transaction and starts its abort
// (prepareFenceProducerEpoch followed by the abort): the producer's next
// request with the old epoch is fenced. Only maxEpoch is not bumped (an
// exhausted 32766 goes to 32767, as in Kafka). Under a finalized
// transaction.version 2 (clusterTV2) Kafka aborts on its version 2 path,
// whatever the client's version, which remembers the old epoch: the
// producer's own abort or KIP-360 InitProducerId at it is then answered as
// a retry instead of fenced.
func (m Metadata) fence(clusterTV2 bool, nowMs int64) Metadata {
	next := m.transition()
	if m.ProducerEpoch != maxEpoch {
		next.ProducerEpoch = m.ProducerEpoch + 1
	}
	next.LastProducerEpoch = noEpoch
	if clusterTV2 {
		next.LastProducerEpoch = m.ProducerEpoch
	}
	next.State, next.LastUpdateMs = PrepareAbort, nowMs
	return next
}

// checkProducer is the check every client request of an open transaction
// starts with: the producer id, then the exact epoch, then a transition
// still being written.
func (m *Metadata) checkProducer(pending bool, id int64, epoch int16) int16 {
	switch {
	case m.ProducerID != id:
		return kerr.InvalidProducerIDMapping.Code
	case m.ProducerEpoch != epoch:
		return kerr.ProducerFenced.Code
	case pending:
		return kerr.ConcurrentTransactions.Code
	}
	return 0
}

// AddPartitions is AddPartitionsToTxn (and AddOffsetsToTxn, whose partition
// is the group's __consumer_offsets partition): the partitions join the
// transaction, which becomes Ongoing. Partitions already in an Ongoing
// transaction need no write (Kafka's optimisation), so the answer is NONE
// with Next nil.
func AddPartitions(cur Metadata, pending bool, producerID int64, epoch int16, parts []Partition, nowMs int64) Decision {
	if code := cur.checkProducer(pending, producerID, epoch); code != 0 {
		return answer(code)
	}
	switch cur.State {
	case PrepareCommit, PrepareAbort, PrepareEpochFence:
		return answer(kerr.ConcurrentTransactions.Code)
	case Dead:
		return answer(kerr.InvalidProducerIDMapping.Code)
	}
	if cur.State == Ongoing && !slices.ContainsFunc(parts, func(tp Partition) bool { return !cur.HasPartition(tp) }) {
		return answer(0)
	}
	next := cur.transition()
	for _, tp := range parts {
		if i, ok := slices.BinarySearchFunc(next.Partitions, tp, comparePartitions); !ok {
			next.Partitions = slices.Insert(next.Partitions, i, tp)
		}
	}
	if cur.State != Ongoing {
		next.TxnStartMs = nowMs
	}
	next.State, next.LastUpdateMs = Ongoing, nowMs
	return write(next, 0)
}

// VerifyPartitions answers the broker-side verification of KIP-890 part 1
// (AddPartitionsToTxn v4+ with verify_only): per partition, NONE when it
// is in the open transaction of that producer, else INVALID_TXN_STATE. A
// producer mismatch fails every partition the same way.
func VerifyPartitions(cur Metadata, pending bool, producerID int64, epoch int16, parts []Partition) []int16 {
	codes := make([]int16, len(parts))
	code := cur.checkProducer(false, producerID, epoch)
	for i, tp := range parts {
		switch {
		case code != 0:
			codes[i] = code
		case cur.State != Ongoing || !cur.HasPartition(tp):
			codes[i] = kerr.InvalidTxnState.Code
		}
	}
	return codes
}

// EndRequest is an EndTxn.
type EndRequest struct {
	ProducerID    int64
	ProducerEpoch int16
	Commit        bool
}

// EndResult is the Decision of an EndTxn plus the producer id and epoch a
// version 5 response carries (version 2: the bumped epoch).
type EndResult struct {
	Decision
	ProducerID    int64
	ProducerEpoch int16
}

// EndTxn is Kafka's TransactionCoordinator.endTransaction from a client.
//
// Version 1: the epoch must match exactly; Ongoing goes to PrepareCommit or
// PrepareAbort (markers follow with the same epoch); repeating the outcome
// that already completed answers NONE, anything else INVALID_TXN_STATE.
//
// Version 2 (KIP-890): the Prepare state bumps the epoch (markers carry the
// new one, fencing the producer's in-flight batches at the old epoch); an
// abort with nothing added is allowed from Empty and Complete* and bumps
// too; a retry that arrives at the previous epoch after the transaction
// ended is answered as a retry with the current epoch.
func EndTxn(cur Metadata, pending bool, req EndRequest, newID func() int64, nowMs int64) EndResult {
	res := func(d Decision) EndResult {
		r := EndResult{Decision: d, ProducerID: cur.ProducerID, ProducerEpoch: cur.ProducerEpoch}
		if d.Next != nil {
			r.ProducerID, r.ProducerEpoch = d.Next.ProducerID, d.Next.ProducerEpoch
			if d.Next.NextProducerID >= 0 {
				r.ProducerID, r.ProducerEpoch = d.Next.NextProducerID, 0
			}
		}
		if d.Code != 0 {
			r.ProducerID, r.ProducerEpoch = -1, -1
		}
		return r
	}
	tv2 := cur.TV2
	// While a Prepare* state's markers are out Kafka has the Complete*
	// transition pending, so every EndTxn that passes the producer checks
	// is CONCURRENT_TRANSACTIONS, whatever its outcome.
	pending = pending || cur.State == PrepareCommit || cur.State == PrepareAbort
	// A version 2 retry: the answer to the EndTxn that bumped the epoch
	// was lost, so the same request comes again at the old epoch.
	retry := tv2 && cur.LastProducerEpoch != noEpoch && req.ProducerEpoch == cur.LastProducerEpoch &&
		req.ProducerID == cur.ProducerID
	rotatedRetry := tv2 && req.ProducerID == cur.PrevProducerID && cur.ProducerEpoch == 0 && EpochExhausted(req.ProducerEpoch)
	retry = retry || rotatedRetry
	switch {
	case cur.ProducerID != req.ProducerID && !rotatedRetry:
		return res(answer(kerr.InvalidProducerIDMapping.Code))
	case cur.ProducerEpoch != req.ProducerEpoch && !retry:
		return res(answer(kerr.ProducerFenced.Code))
	case pending:
		return res(answer(kerr.ConcurrentTransactions.Code))
	}
	if retry && (cur.State == Ongoing || cur.State == Empty) {
		// The old epoch is not a retry of anything still open.
		return res(answer(kerr.ProducerFenced.Code))
	}
	prepare := PrepareAbort
	done := CompleteAbort
	if req.Commit {
		prepare, done = PrepareCommit, CompleteCommit
	}
	switch cur.State {
	case Ongoing:
		return res(write(cur.prepareEnd(prepare, newID, nowMs), 0))
	case CompleteCommit, CompleteAbort:
		if cur.State == done && (retry || !tv2) {
			return res(answer(0))
		}
		if tv2 && !req.Commit && !retry {
			return res(write(cur.prepareEnd(PrepareAbort, newID, nowMs), 0))
		}
		return res(answer(kerr.InvalidTxnState.Code))
	case Empty:
		if tv2 && !req.Commit {
			return res(write(cur.prepareEnd(PrepareAbort, newID, nowMs), 0))
		}
		return res(answer(kerr.InvalidTxnState.Code))
	}
	return res(answer(kerr.InvalidTxnState.Code))
}

// prepareEnd moves to PrepareCommit or PrepareAbort. Version 2 bumps the
// epoch (Kafka's prepareAbortOrCommit: from an exhausted 32766 to 32767,
// the markers' epoch, never past maxEpoch) and, when the epoch was
// exhausted, picks the new producer id the transaction rotates to when it
// completes.
func (m Metadata) prepareEnd(to State, newID func() int64, nowMs int64) Metadata {
	next := m.transition()
	next.State, next.LastUpdateMs = to, nowMs
	if m.TV2 {
		if EpochExhausted(m.ProducerEpoch) {
			next.NextProducerID = newID()
		}
		if m.ProducerEpoch != maxEpoch {
			next.ProducerEpoch = m.ProducerEpoch + 1
		}
		next.LastProducerEpoch = m.ProducerEpoch
	}
	return next
}

// Complete is the transition once every marker of a Prepare* state is
// written: CompleteCommit or CompleteAbort, no partitions, and a pending
// producer id rotation takes effect. ok is false if m is not Prepare*.
func Complete(m Metadata, nowMs int64) (Metadata, bool) {
	done, ok := m.State.Completed()
	if !ok {
		return m, false
	}
	next := m.transition()
	// The start time stays: Kafka 4.4 keeps it through Complete*, and
	// ListTransactions' duration filter (v1+) measures a completed
	// transaction from it (compat/reference's ListTransactions/duration-*).
	next.State, next.Partitions, next.LastUpdateMs = done, nil, nowMs
	if m.NextProducerID >= 0 {
		// Kafka's prepareComplete: the new id at epoch 0; the last epoch
		// stays the one before the Prepare state's bump.
		next.ProducerID, next.NextProducerID, next.ProducerEpoch = m.NextProducerID, -1, 0
	}
	return next, true
}

// TimedOut reports whether an Ongoing transaction has run past its
// transaction.timeout.ms.
func TimedOut(m Metadata, nowMs int64) bool {
	return m.State == Ongoing && m.TxnStartMs >= 0 && nowMs > m.TxnStartMs+int64(m.TimeoutMs)
}

// Abort is the coordinator's own abort of a timed-out transaction (Kafka's
// abortTimedOutTransactions): the epoch is bumped so the producer's batches
// are fenced, then PrepareAbort, on the path of the cluster's finalized
// transaction version (clusterTV2), as Kafka's. A version 1 producer's
// EndTxn is fenced for good; a version 2 one may still end the transaction
// with an abort (a retry). Next is nil if m is not Ongoing.
func Abort(m Metadata, nowMs int64, clusterTV2 bool) Decision {
	if m.State != Ongoing {
		return answer(kerr.InvalidTxnState.Code)
	}
	return write(m.fence(clusterTV2, nowMs), 0)
}

// Expired reports whether an idle transactional id has gone unused for
// transactional.id.expiration.ms and may be removed (its state becomes
// Dead, written as a tombstone).
func Expired(m Metadata, nowMs int64, expirationMs int64) bool {
	switch m.State {
	case Empty, CompleteCommit, CompleteAbort:
		return nowMs-m.LastUpdateMs >= expirationMs
	}
	return false
}
