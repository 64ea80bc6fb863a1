package replication

import (
	"slices"
	"testing"
	"time"
)

// TestExpireProducers: a producer idle for producer.id.expiration.ms is
// forgotten on every replica, so the retry of its old batch is appended
// again (the duplicate Kafka writes too); a producer with a transaction
// open is kept until its marker, and a newer batch restarts the wait.
func TestExpireProducers(t *testing.T) {
	const day = 24 * time.Hour
	stamp := func(b *Batch, at time.Time) *Batch { b.MaxTimestamp = at.UnixMilli(); return b }
	p := newPartition(t, 1)
	mustAppend(t, p, stamp(idemBatch(7, 0, 0, 2), t0), 1)                // 0-1
	mustAppend(t, p, stamp(txnBatch(8, 0, 0, 1), t0), 1)                 // 2, producer 8 opens
	mustAppend(t, p, stamp(idemBatch(9, 0, 0, 1), t0.Add(time.Hour)), 1) // 3
	replicate(t, p)
	if res := mustAppend(t, p, stamp(idemBatch(7, 0, 0, 2), t0), 1); !res.Duplicate || res.BaseOffset != 0 {
		t.Fatalf("retry before expiry: %+v, want the duplicate of offset 0", res)
	}

	if got := p.ExpireProducers(t0.Add(day-time.Millisecond), day); got != nil {
		t.Fatalf("a millisecond early: forgot %v", got)
	}
	if got := p.ExpireProducers(t0.Add(day), day); !slices.Equal(got, []int64{7}) {
		t.Fatalf("after a day: forgot %v, want [7] (8 has a transaction open, 9 wrote an hour later)", got)
	}
	for _, id := range []int32{1, 2, 3} {
		var ids []int64
		for _, s := range p.Replica(id).Producers() {
			ids = append(ids, s.ProducerID)
		}
		if !slices.Equal(ids, []int64{8, 9}) {
			t.Fatalf("replica %d keeps producers %v, want [8 9]", id, ids)
		}
	}
	if res := mustAppend(t, p, stamp(idemBatch(7, 0, 0, 2), t0), 1); res.Duplicate || res.BaseOffset != 4 {
		t.Fatalf("retry after expiry: %+v, want appended at 4", res)
	}

	// Expiry goes by the batches' timestamps, not by when they arrived:
	// 7's retry carried t0, so 7 goes again with 9; 8 goes a day after its
	// abort marker at 6 ended the transaction.
	mustAppend(t, p, stamp(marker(8, 0, false, 0), t0.Add(2*time.Hour)), 1) // 6
	replicate(t, p)
	if got := p.ExpireProducers(t0.Add(day+time.Hour), day); !slices.Equal(got, []int64{7, 9}) {
		t.Fatalf("forgot %v, want [7 9]", got)
	}
	if got := p.ExpireProducers(t0.Add(day+2*time.Hour), day); !slices.Equal(got, []int64{8}) {
		t.Fatalf("forgot %v, want [8]", got)
	}
	if ps := p.Replica(2).Producers(); len(ps) != 0 {
		t.Fatalf("follower 2 keeps %+v", ps)
	}
}
