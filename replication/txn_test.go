package replication

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func txnBatch(pid int64, epoch int16, seq, n int32) *Batch {
	b := idemBatch(pid, epoch, seq, n)
	b.Transactional = true
	return b
}

func marker(pid int64, epoch int16, commit bool, coordinatorEpoch int32) *Batch {
	b := batch(1)
	b.ProducerID, b.ProducerEpoch, b.Transactional, b.Control = pid, epoch, true, true
	b.Commit, b.CoordinatorEpoch = commit, coordinatorEpoch
	return b
}

// replicate lets both followers fetch until nothing moves.
func replicate(t *testing.T, p *Partition) {
	t.Helper()
	for range 3 {
		for _, id := range []int32{2, 3} {
			if p.Replica(id).Online() && id != p.Leader() {
				fetch(t, p, id, t0)
			}
		}
	}
}

func readOffsets(t *testing.T, p *Partition, id int32, offset int64, committed bool) (ReadResult, []int64) {
	t.Helper()
	var res ReadResult
	var code int16
	if committed {
		res, code = p.ReadCommitted(id, offset, 1<<20)
	} else {
		res, code = p.Read(id, offset, 1<<20)
	}
	if code != 0 {
		t.Fatalf("read: %v", kerr.ErrorForCode(code))
	}
	var bases []int64
	for _, b := range res.Batches {
		bases = append(bases, b.BaseOffset)
	}
	return res, bases
}

func TestLastStableOffsetAndAbortedIndex(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)             // 0-1
	mustAppend(t, p, txnBatch(7, 0, 0, 3), 1) // 2-4, producer 7 opens
	mustAppend(t, p, txnBatch(8, 0, 0, 2), 1) // 5-6, producer 8 opens
	mustAppend(t, p, batch(1), 1)             // 7
	replicate(t, p)
	l := p.LeaderReplica()
	if l.HW() != 8 || l.LSO() != 2 {
		t.Fatalf("HW %d LSO %d, want 8 and 2", l.HW(), l.LSO())
	}
	res, bases := readOffsets(t, p, 1, 0, true)
	if !slices.Equal(bases, []int64{0}) || res.LastStableOffset != 2 || res.Aborted != nil {
		t.Fatalf("read_committed: %v LSO %d aborted %v", bases, res.LastStableOffset, res.Aborted)
	}
	if _, bases := readOffsets(t, p, 1, 0, false); !slices.Equal(bases, []int64{0, 2, 5, 7}) {
		t.Fatalf("read_uncommitted: %v", bases)
	}

	// Abort 7 at offset 8: until the marker is below the HW the LSO stays.
	mustAppend(t, p, marker(7, 0, false, 0), 1)
	if l.LSO() != 2 {
		t.Fatalf("LSO %d before the marker replicated", l.LSO())
	}
	replicate(t, p)
	if l.HW() != 9 || l.LSO() != 5 {
		t.Fatalf("HW %d LSO %d, want 9 and 5", l.HW(), l.LSO())
	}
	res, bases = readOffsets(t, p, 1, 0, true)
	want := []AbortedTxn{{7, 2, 8}}
	if !slices.Equal(bases, []int64{0, 2}) || !slices.Equal(res.Aborted, want) {
		t.Fatalf("read_committed: %v aborted %v", bases, res.Aborted)
	}

	// Commit 8 at offset 9: everything is stable.
	mustAppend(t, p, marker(8, 0, true, 0), 1)
	replicate(t, p)
	if l.HW() != 10 || l.LSO() != 10 {
		t.Fatalf("HW %d LSO %d, want 10 and 10", l.HW(), l.LSO())
	}
	res, bases = readOffsets(t, p, 1, 5, true)
	if !slices.Equal(bases, []int64{5, 7, 8, 9}) || !slices.Equal(res.Aborted, want) {
		t.Fatalf("read_committed from 5: %v aborted %v", bases, res.Aborted)
	}
	// Past the aborted range nothing is listed.
	if res, _ := readOffsets(t, p, 1, 9, true); res.Aborted != nil {
		t.Fatalf("aborted from 9: %v", res.Aborted)
	}
	// Followers built the same index from the log.
	for _, id := range []int32{2, 3} {
		r := p.Replica(id)
		if r.LSO() != 10 || !slices.Equal(r.AbortedTransactions(), want) || len(r.OpenTransactions()) != 0 {
			t.Fatalf("replica %d: LSO %d aborted %v open %v", id, r.LSO(), r.AbortedTransactions(), r.OpenTransactions())
		}
	}
}

func TestTransactionalAppendRules(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, txnBatch(7, 1, 0, 2), 1) // 0-1
	// An idempotent batch while the transaction is open.
	if _, code := p.Append(idemBatch(7, 1, 2, 1), 1, t0); code != kerr.InvalidTxnState.Code {
		t.Fatalf("non-transactional batch in a transaction: %v", kerr.ErrorForCode(code))
	}
	// A marker from an older producer epoch.
	if _, code := p.Append(marker(7, 0, true, 3), 1, t0); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale marker: %v", kerr.ErrorForCode(code))
	}
	mustAppend(t, p, marker(7, 1, true, 3), 1) // 2
	// An older coordinator epoch is fenced, even with the right producer.
	mustAppend(t, p, txnBatch(7, 1, 2, 1), 1) // 3
	if _, code := p.Append(marker(7, 1, false, 2), 1, t0); code != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("old coordinator: %v", kerr.ErrorForCode(code))
	}
	// A fencing marker at a bumped epoch aborts, and the old epoch is then
	// refused for data.
	mustAppend(t, p, marker(7, 2, false, 3), 1) // 4
	if _, code := p.Append(txnBatch(7, 1, 3, 1), 1, t0); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("zombie batch: %v", kerr.ErrorForCode(code))
	}
	l := p.LeaderReplica()
	st := l.Producers()
	if len(st) != 1 || st[0].ProducerEpoch != 2 || st[0].CoordinatorEpoch != 3 || st[0].TxnStartOffset != -1 {
		t.Fatalf("producer state %+v", st)
	}
	if got := l.AbortedTransactions(); !slices.Equal(got, []AbortedTxn{{7, 3, 4}}) {
		t.Fatalf("aborted %v", got)
	}
}

func TestTruncationRollsBackTransactions(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, txnBatch(7, 0, 0, 2), 1) // 0-1
	replicate(t, p)
	mustAppend(t, p, marker(7, 0, false, 0), 1) // 2, only on the leader
	if got := p.LeaderReplica().AbortedTransactions(); len(got) != 1 {
		t.Fatalf("leader aborted %v", got)
	}
	crash(p, 1)
	if code := p.Elect(2, false, t0); code != 0 {
		t.Fatalf("elect: %v", kerr.ErrorForCode(code))
	}
	r2 := p.Replica(2)
	if r2.LEO() != 2 || r2.LSO() != 0 || len(r2.AbortedTransactions()) != 0 ||
		!slices.Equal(r2.OpenTransactions(), []OpenTransaction{{7, 0}}) {
		t.Fatalf("new leader: LEO %d LSO %d aborted %v open %v", r2.LEO(), r2.LSO(), r2.AbortedTransactions(), r2.OpenTransactions())
	}
	// The coordinator re-sends the marker to the new leader; the old
	// leader comes back, truncates its marker away and takes the new one.
	mustAppend(t, p, marker(7, 0, true, 1), 1) // 2 again, now a commit
	p.Restart(1)
	p.SetOnline(1, true, t0)
	for range 3 {
		fetch(t, p, 1, t0)
		fetch(t, p, 3, t0)
	}
	r1 := p.Replica(1)
	if r1.LEO() != 3 || r1.LSO() != 3 || len(r1.AbortedTransactions()) != 0 || r1.Producers()[0].CoordinatorEpoch != 1 {
		t.Fatalf("old leader: LEO %d LSO %d aborted %v producers %+v", r1.LEO(), r1.LSO(), r1.AbortedTransactions(), r1.Producers())
	}
}

// TestTV2MarkerAtCurrentEpoch: under transaction version 2 the marker
// carries the bumped epoch. Written again at that epoch (the coordinator
// retrying after a lost answer) it is appended once more while no
// transaction is open, and refused while the producer has opened its next
// transaction at that epoch, which the stale marker must not end.
func TestTV2MarkerAtCurrentEpoch(t *testing.T) {
	tv2 := func(m *Batch) *Batch { m.TxnVersion = 2; return m }
	p := newPartition(t, 1)
	l := p.LeaderReplica()
	mustAppend(t, p, txnBatch(7, 0, 0, 2), 1)                // 0-1, epoch 0 opens
	mustAppend(t, p, tv2(marker(7, 1, true, 0)), 1)          // 2, commit bumps to 1
	mustAppend(t, p, tv2(marker(7, 1, true, 0)), 1)          // 3, the retry: written again
	mustAppend(t, p, txnBatch(7, 1, 0, 1), 1)                // 4, epoch 1 opens the next
	res, code := p.Append(tv2(marker(7, 1, true, 0)), 1, t0) // a stale retry
	if code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale marker: %+v, %v; want INVALID_PRODUCER_EPOCH", res, kerr.ErrorForCode(code))
	}
	replicate(t, p)
	if l.LEO() != 5 || l.HW() != 5 || l.LSO() != 4 {
		t.Fatalf("LEO %d HW %d LSO %d, want 5, 5 and 4 (the transaction at 4 still open)", l.LEO(), l.HW(), l.LSO())
	}
	mustAppend(t, p, tv2(marker(7, 2, false, 0)), 1) // 5, abort bumps to 2
	replicate(t, p)
	if l.LSO() != 6 {
		t.Fatalf("LSO %d after the abort, want 6", l.LSO())
	}
	if _, code := p.Append(tv2(marker(7, 2, false, 0)), 1, t0); code != 0 {
		t.Fatalf("retry of the abort: %v", kerr.ErrorForCode(code))
	}

	// Transaction version 0/1: the epoch is not bumped, so a marker at the
	// current epoch ends the open transaction.
	mustAppend(t, p, txnBatch(8, 0, 0, 1), 1)  // 7
	mustAppend(t, p, marker(8, 0, true, 0), 1) // 8
	replicate(t, p)
	if l.LSO() != 9 {
		t.Fatalf("LSO %d after producer 8's commit, want 9", l.LSO())
	}
}
