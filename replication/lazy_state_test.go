package replication

import (
	"testing"
	"time"
)

// An idle partition keeps no producer state, transaction index or rewrite
// state until something needs it; reads of the missing parts answer as
// empty ones would.
func TestStateMadeOnFirstUse(t *testing.T) {
	p := newPartition(t, 2)
	for _, r := range p.Replicas() {
		if r.log.prod != nil || r.log.rw != nil {
			t.Fatalf("replica %d of a new partition has producer state %v, rewrite state %v", r.Broker, r.log.prod, r.log.rw)
		}
		if got := r.Producers(); got == nil || len(got) != 0 {
			t.Fatalf("replica %d producers %v, want an empty list", r.Broker, got)
		}
		if got := r.OpenTransactions(); got == nil || len(got) != 0 {
			t.Fatalf("replica %d open transactions %v, want an empty list", r.Broker, got)
		}
		if got := r.AbortedTransactions(); got != nil {
			t.Fatalf("replica %d aborted transactions %v, want none", r.Broker, got)
		}
		if r.LSO() != 0 || r.log.Rewrites() != 0 || r.log.cleanedTo() != 0 || r.log.horizon() != 0 {
			t.Fatalf("replica %d: LSO %d, rewrites %d, cleaned to %d, horizon %d", r.Broker, r.LSO(), r.log.Rewrites(), r.log.cleanedTo(), r.log.horizon())
		}
	}

	// Plain batches make no producer state, on the leader or the followers.
	mustAppend(t, p, batch(3), -1)
	replicate(t, p)
	for _, r := range p.Replicas() {
		if r.log.prod != nil || r.LSO() != 3 || r.log.Size() != 61 {
			t.Fatalf("replica %d after a plain batch: producer state %v, LSO %d, size %d", r.Broker, r.log.prod, r.LSO(), r.log.Size())
		}
	}

	// An idempotent batch makes it everywhere, without a transaction index.
	mustAppend(t, p, idemBatch(7, 0, 0, 2), -1)
	replicate(t, p)
	for _, r := range p.Replicas() {
		ps := r.Producers()
		if r.log.prod == nil || r.log.prod.txns != nil || len(ps) != 1 || ps[0].ProducerID != 7 || ps[0].LastSequence != 1 {
			t.Fatalf("replica %d after an idempotent batch: %+v (index %v)", r.Broker, ps, r.log.prod.transactions())
		}
	}
	// A transaction makes the index; its abort is remembered by every replica.
	mustAppend(t, p, txnBatch(8, 0, 0, 1), -1)
	mustAppend(t, p, marker(8, 0, false, 0), -1)
	replicate(t, p)
	for _, r := range p.Replicas() {
		if got := r.AbortedTransactions(); len(got) != 1 || got[0] != (AbortedTxn{ProducerID: 8, FirstOffset: 5, LastOffset: 6}) {
			t.Fatalf("replica %d aborted transactions %v", r.Broker, got)
		}
		if r.LSO() != 7 {
			t.Fatalf("replica %d LSO %d, want 7", r.Broker, r.LSO())
		}
	}

	// Truncation rebuilds the state from the log and counts a rewrite: a
	// follower cut below the idempotent batch forgets its producer.
	f := p.Replica(3)
	f.truncateTo(3)
	if f.log.Rewrites() != 1 || f.log.prod != nil || f.log.Size() != 61 || f.LEO() != 3 {
		t.Fatalf("after truncating to 3: rewrites %d, producer state %v, size %d, LEO %d", f.log.Rewrites(), f.log.prod, f.log.Size(), f.LEO())
	}
}

// The leader's view of a follower keeps times to the nanosecond, and "never"
// as the zero time.
func TestFollowerTimesRoundTrip(t *testing.T) {
	p := newPartition(t, 2)
	at := t0.Add(1500*time.Millisecond + 7)
	fetch(t, p, 2, at)
	v, ok := p.FollowerView(2)
	if !ok || !v.LastFetch.Equal(at) || !v.LastCaughtUp.Equal(at) {
		t.Fatalf("view after a fetch at %v: %+v", at, v)
	}
	p.markOutOfSync(2)
	if v, _ := p.FollowerView(2); !v.LastCaughtUp.IsZero() || !v.LastFetch.Equal(at) {
		t.Fatalf("view after falling out of sync: %+v", v)
	}
}

// Partitions created with one shared Config hold that one value, and a
// SetConfig on one of them leaves the others' settings alone.
func TestSharedConfig(t *testing.T) {
	cfg := &Config{MinInsyncReplicas: 2}
	a := NewPartitionShared([]int32{1, 2, 3}, cfg, t0)
	b := NewPartitionShared([]int32{2, 3, 1}, cfg, t0)
	if a.cfg != cfg || b.cfg != cfg {
		t.Fatal("partitions made from one Config hold copies of it")
	}
	c := a.Config()
	c.MinInsyncReplicas = 3
	a.SetConfig(c, t0)
	if a.EffectiveMinISR() != 3 || b.EffectiveMinISR() != 2 || cfg.MinInsyncReplicas != 2 {
		t.Fatalf("after SetConfig on one: min ISR %d and %d, shared value %d", a.EffectiveMinISR(), b.EffectiveMinISR(), cfg.MinInsyncReplicas)
	}
}
