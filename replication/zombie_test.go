package replication

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// An isolated leader is deposed by the controller but keeps acting as
// leader: its acks=1 writes succeed and are lost when it rejoins; its
// acks=all writes never complete.
func TestZombieLeader(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	replicateAll(t, p)
	checkReplicas(t, p, map[int32]offsets{1: {2, 2}, 2: {2, 2}, 3: {2, 2}})

	p.Isolate(1)
	p.RemoveFromISR(1, t0) // the controller fences it...
	if id, _ := p.ChooseLeader(1); id != 2 {
		t.Fatalf("controller chose %d, want 2", id)
	}
	if code := p.Elect(2, false, t0); code != 0 { // ...and elects 2 at epoch 1
		t.Fatal(code)
	}
	if l, e, _ := p.View(1); l != 1 || e != 0 {
		t.Fatalf("zombie's view: leader %d epoch %d, want itself at 0", l, e)
	}
	if l, e, _ := p.View(3); l != 2 || e != 1 {
		t.Fatalf("broker 3's view: leader %d epoch %d, want 2 at 1", l, e)
	}

	res, code := p.AppendAs(1, batch(1), 1, t0)
	if code != 0 || res.BaseOffset != 2 {
		t.Fatalf("zombie acks=1: offset %d code %d, want 2 and NONE", res.BaseOffset, code)
	}
	res, code = p.AppendAs(1, batch(1), -1, t0)
	if code != 0 {
		t.Fatal(code)
	}
	if done, _ := p.AppendStatus(1, 0, res.Required); done {
		t.Fatal("a zombie's acks=all write completed")
	}
	if _, code := p.ReplicaFetch(3, 1<<20, t0); code != 0 {
		t.Fatal(code) // 3 follows the real leader
	}
	if _, code := p.ReplicaFetch(1, 1<<20, t0); code != kerr.ReplicaNotAvailable.Code {
		t.Fatalf("isolated replica fetched: code %d", code)
	}

	// The real leader takes a write at offset 2 too.
	if res := mustAppend(t, p, batch(1), 1); res.BaseOffset != 2 {
		t.Fatalf("real leader wrote at %d, want 2", res.BaseOffset)
	}
	p.Heal(1)
	fetched := fetch(t, p, 1, t0)
	if fetched.Truncated != 2 {
		t.Fatalf("healed zombie truncated %d records, want its 2", fetched.Truncated)
	}
	replicateAll(t, p)
	a, b := p.Replica(1).Log().Batches(), p.Replica(2).Log().Batches()
	if len(a) != len(b) || a[len(a)-1] != b[len(b)-1] {
		t.Fatal("the healed zombie did not converge on the new leader's log")
	}
	if !p.InISR(1) {
		t.Fatalf("ISR %v, want the healed broker back", p.ISR())
	}
}
