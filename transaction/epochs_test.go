package transaction

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Epoch exhaustion exactly as Kafka 4.4's TransactionMetadata and
// TransactionCoordinator: isEpochExhausted is epoch >= 32766; a fence
// (prepareFenceProducerEpoch) and a version 2 end (prepareAbortOrCommit)
// still bump 32766 to 32767; every transition records the producer id it
// left as prevProducerId (prepareTransitionTo).

// TestEndTxnV2EpochsUpToRotation: a version 2 producer at 32765 ends a
// transaction (32766, no new id yet: the epoch was not exhausted), then
// another (32767 for the markers, and the new id at epoch 0 in the answer
// and once the markers are out).
func TestEndTxnV2EpochsUpToRotation(t *testing.T) {
	g := &ids{}
	m := initFresh(t, true)
	m.ProducerEpoch = 32765
	m = mustWrite(t, AddPartitions(m, false, 1001, 32765, []Partition{tp0}, 10), 0)
	r := EndTxn(m, false, EndRequest{1001, 32765, true}, g.id, 11)
	m = mustWrite(t, r.Decision, 0)
	check(t, m, PrepareCommit, 1001, 32766, 32765)
	if m.NextProducerID != -1 || r.ProducerID != 1001 || r.ProducerEpoch != 32766 {
		t.Fatalf("first end: next %d, answer %d/%d; want no new id, 1001/32766", m.NextProducerID, r.ProducerID, r.ProducerEpoch)
	}
	m, _ = Complete(m, 12)
	check(t, m, CompleteCommit, 1001, 32766, 32765)
	m = mustWrite(t, AddPartitions(m, false, 1001, 32766, []Partition{tp0}, 13), 0)
	r = EndTxn(m, false, EndRequest{1001, 32766, false}, g.id, 14)
	m = mustWrite(t, r.Decision, 0)
	check(t, m, PrepareAbort, 1001, 32767, 32766)
	if m.NextProducerID != 2001 || r.ProducerID != 2001 || r.ProducerEpoch != 0 {
		t.Fatalf("second end: next %d, answer %d/%d; want 2001, 2001/0", m.NextProducerID, r.ProducerID, r.ProducerEpoch)
	}
	// The producer's retry at 32766 while the markers are out.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 32766, false}, g.id, 15).Decision, kerr.ConcurrentTransactions.Code)
	m, _ = Complete(m, 16)
	check(t, m, CompleteAbort, 2001, 0, 32766)
	if m.PrevProducerID != 1001 || m.NextProducerID != -1 {
		t.Fatalf("after rotation: prev %d next %d; want 1001 and -1", m.PrevProducerID, m.NextProducerID)
	}
	// The new id's first transaction: the transition records 2001 as the
	// previous id, so the old id is no longer recognised.
	m = mustWrite(t, AddPartitions(m, false, 2001, 0, []Partition{tp0}, 17), 0)
	if m.PrevProducerID != 2001 {
		t.Fatalf("prev producer id %d after a transition of 2001, want 2001", m.PrevProducerID)
	}
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32766, TV2: true}, g.id, 18), kerr.ProducerFenced.Code)
}

// TestFenceExhaustedEpoch: a second instance fences an Ongoing transaction
// at 32766: the abort goes out at 32767. Its InitProducerId retry (no id)
// then rotates to a new id at epoch 0; the fenced producer's KIP-360
// InitProducerId with its 32766 meets an exhausted epoch that is not its
// own, which Kafka answers UNKNOWN_SERVER_ERROR.
func TestFenceExhaustedEpoch(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	m.ProducerEpoch = 32766
	m = mustWrite(t, AddPartitions(m, false, 1001, 32766, []Partition{tp0}, 10), 0)
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 11), kerr.ConcurrentTransactions.Code)
	check(t, m, PrepareAbort, 1001, 32767, -1)
	m, _ = Complete(m, 12)
	check(t, m, CompleteAbort, 1001, 32767, -1)
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32766}, g.id, 13), kerr.UnknownServerError.Code)
	rot := mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32767}, g.id, 13), 0)
	check(t, rot, Empty, 2001, 0, 32767) // with its own exhausted epoch: rotated, 32767 remembered
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 13), 0)
	check(t, m, Empty, 2002, 0, -1)
	if m.PrevProducerID != 1001 {
		t.Fatalf("prev producer id %d, want 1001", m.PrevProducerID)
	}
	// At maxEpoch itself a fence does not bump.
	m.ProducerEpoch, m.State = maxEpoch, Ongoing
	next := m.fence(false, 14)
	if next.ProducerEpoch != maxEpoch || next.State != PrepareAbort {
		t.Fatalf("fence at %d: epoch %d state %v", maxEpoch, next.ProducerEpoch, next.State)
	}
}

// TestInitProducerIDExhaustedRetry: a KIP-360 bump from 32765 to 32766
// whose answer was lost: the retry with 32765 meets an exhausted epoch that
// is not the one it sent (Kafka: UNKNOWN_SERVER_ERROR); with 32766 it
// rotates to a new id, remembering 32766.
func TestInitProducerIDExhaustedRetry(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	m.ProducerEpoch = 32765
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32765}, g.id, 2), 0)
	check(t, m, Empty, 1001, 32766, 32765)
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32765}, g.id, 3), kerr.UnknownServerError.Code)
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32766}, g.id, 4), 0)
	check(t, m, Empty, 2001, 0, 32766)
}

// TestInitProducerIDFenceUnderClusterTV2: with transaction.version 2
// finalized, Kafka aborts the transaction it fences at InitProducerId on
// its version 2 path, which remembers the fenced epoch: the producer's own
// KIP-360 retry with it is answered the new epoch; a fresh InitProducerId
// still bumps and forgets it.
func TestInitProducerIDFenceUnderClusterTV2(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 10), 0)
	req := InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 0, ClusterTV2: true}
	m = mustWrite(t, InitProducerID(m, false, req, g.id, 11), kerr.ConcurrentTransactions.Code)
	check(t, m, PrepareAbort, 1001, 1, 0)
	m, _ = Complete(m, 12)
	check(t, m, CompleteAbort, 1001, 1, 0)
	m = mustWrite(t, InitProducerID(m, false, req, g.id, 13), 0)
	check(t, m, Empty, 1001, 1, 0)
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1, ClusterTV2: true}, g.id, 14), 0)
	check(t, m, Empty, 1001, 2, -1)
	mustAnswer(t, InitProducerID(m, false, req, g.id, 15), kerr.ProducerFenced.Code)
}
