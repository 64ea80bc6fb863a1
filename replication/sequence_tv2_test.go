package replication

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestSequenceAfterTV2Bump: Kafka 4.4's ProducerAppendInfo.checkSequence
// once a transaction version 2 marker has bumped the producer's epoch: the
// producer has no batch at the new epoch, its last sequence counts as -1,
// so only sequence 0 comes next. A later batch that overtook a refused
// first one (CONCURRENT_TRANSACTIONS while the marker was going out) is
// OUT_OF_ORDER_SEQUENCE_NUMBER, and the first one's retry then goes in.
func TestSequenceAfterTV2Bump(t *testing.T) {
	tv2 := func(m *Batch) *Batch { m.TxnVersion = 2; return m }
	verified := func(b *Batch) *Batch { b.EpochBumpVerified = true; return b }
	p := newPartition(t, 1)
	mustAppend(t, p, verified(txnBatch(7, 0, 0, 2)), 1) // 0-1, seqs 0-1
	mustAppend(t, p, verified(txnBatch(7, 0, 2, 3)), 1) // 2-4, seqs 2-4
	mustAppend(t, p, tv2(marker(7, 1, true, 0)), 1)     // 5, commit bumps to 1
	for _, seq := range []int32{5, 2, 1} {
		if _, code := p.Append(verified(txnBatch(7, 1, seq, 1)), 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
			t.Fatalf("epoch 1 seq %d before seq 0: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", seq, kerr.ErrorForCode(code))
		}
	}
	if res := mustAppend(t, p, verified(txnBatch(7, 1, 0, 2)), 1); res.BaseOffset != 6 || res.Duplicate {
		t.Fatalf("epoch 1 seq 0: %+v, want fresh at 6", res)
	}
	if res := mustAppend(t, p, verified(txnBatch(7, 1, 2, 1)), 1); res.BaseOffset != 8 {
		t.Fatalf("epoch 1 seq 2: %+v, want 8", res)
	}
	// The same holds without the verification flag (transaction version
	// 1 producers after a coordinator abort bumped their epoch): an epoch
	// with no batch starts at 0.
	mustAppend(t, p, tv2(marker(7, 2, false, 0)), 1) // 9
	if _, code := p.Append(txnBatch(7, 2, 3, 1), 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("epoch 2 seq 3: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
}

// TestSequenceUnknownProducerTV2: a producer this partition has no state
// for may start at any sequence (KIP-360: its state expired or was
// truncated away), except a transaction version 2 batch the leader
// verified, which must start at 0 (Kafka's check on a verification entry
// that supports the epoch bump).
func TestSequenceUnknownProducerTV2(t *testing.T) {
	p := newPartition(t, 1)
	b := txnBatch(8, 3, 4, 1)
	b.EpochBumpVerified = true
	if _, code := p.Append(b, 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("verified TV2 seq 4 from an unknown producer: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
	if res := mustAppend(t, p, txnBatch(9, 3, 4, 1), 1); res.BaseOffset != 0 {
		t.Fatalf("TV1 seq 4 from an unknown producer: %+v, want accepted at 0", res)
	}
	if res := mustAppend(t, p, idemBatch(10, 0, 17, 1), 1); res.BaseOffset != 1 {
		t.Fatalf("idempotent seq 17 from an unknown producer: %+v, want accepted at 1", res)
	}
	b = txnBatch(8, 3, 0, 1)
	b.EpochBumpVerified = true
	if res := mustAppend(t, p, b, 1); res.BaseOffset != 2 {
		t.Fatalf("verified TV2 seq 0: %+v, want 2", res)
	}
}

// TestHasOngoingTransaction: open from a producer's first transactional
// batch at that epoch until its marker; another epoch or producer is not.
func TestHasOngoingTransaction(t *testing.T) {
	p := newPartition(t, 1)
	l := p.LeaderReplica()
	if l.HasOngoingTransaction(7, 0) {
		t.Fatal("ongoing before any batch")
	}
	mustAppend(t, p, txnBatch(7, 0, 0, 1), 1)
	if !l.HasOngoingTransaction(7, 0) || l.HasOngoingTransaction(7, 1) || l.HasOngoingTransaction(8, 0) {
		t.Fatalf("after the first batch: %v %v %v, want true false false", l.HasOngoingTransaction(7, 0), l.HasOngoingTransaction(7, 1), l.HasOngoingTransaction(8, 0))
	}
	mustAppend(t, p, idemBatch(9, 0, 0, 1), 1)
	if l.HasOngoingTransaction(9, 0) {
		t.Fatal("an idempotent producer has no transaction")
	}
	mustAppend(t, p, marker(7, 0, true, 0), 1)
	if l.HasOngoingTransaction(7, 0) {
		t.Fatal("ongoing after the commit marker")
	}
}
