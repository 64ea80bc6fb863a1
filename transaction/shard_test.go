package transaction

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kerr"
)

func replayed(recs ...coordinator.Record) coordinator.Batch {
	return coordinator.Batch{Offset: -1, ProducerID: -1, Records: recs}
}

// Replay keeps the last record per id; a tombstone (or an unreadable
// value) removes the id; markers and foreign keys are ignored.
func TestShardReplay(t *testing.T) {
	s := NewShard(2, coordinator.Epoch{Leader: 1, Epoch: 4})
	if s.Index() != 2 || s.At() != (coordinator.Epoch{Leader: 1, Epoch: 4}) {
		t.Fatal("shard identity")
	}
	a := New("a", 1000, 60000, 10)
	b := New("b", 1001, 60000, 10)
	s.Replay(replayed(Record("a", &a), Record("b", &b)))
	a.State, a.TxnStartMs = Ongoing, 20
	s.Replay(replayed(Record("a", &a)))
	s.Replay(coordinator.Batch{Control: true, Commit: true, ProducerID: 1000})
	s.Replay(replayed(coordinator.Record{Key: []byte(`{"group":"x"}`), Value: []byte(`{}`)}, coordinator.Record{Key: []byte("{")}))
	if s.Len() != 2 {
		t.Fatalf("%d ids", s.Len())
	}
	md, exists, pending := s.Entry("a", false).View()
	if !exists || pending || md.State != Ongoing || md.TxnStartMs != 20 {
		t.Fatalf("a: %+v %v %v", md, exists, pending)
	}
	s.Replay(replayed(Record("b", nil)))
	s.Replay(replayed(coordinator.Record{Key: Record("a", nil).Key, Value: []byte("{broken")}))
	if s.Len() != 0 || s.Entry("b", false) != nil {
		t.Fatalf("after tombstones: %d ids", s.Len())
	}
	raw := Record("a", &a)
	var back Metadata
	if json.Unmarshal(raw.Value, &back) != nil || back.ProducerID != 1000 || string(raw.Key) != `{"transactional_id":"a"}` {
		t.Fatalf("record %s %s", raw.Key, raw.Value)
	}
}

// A transition: Begin makes the entry pending (other rules see it), the
// write's replay makes it take effect, End reports it and wakes waiters;
// a failed write leaves the previous metadata in force.
func TestEntryTransitions(t *testing.T) {
	s := NewShard(0, coordinator.Epoch{Leader: 1, Epoch: 1})
	e := s.Entry("t", true)
	if e.ID() != "t" || e.Shard() != s || !s.Holds(e) || len(s.Snapshot()) != 0 {
		t.Fatal("a placeholder")
	}
	changed := e.Changes()
	init := func(cur *Metadata, pending bool) Decision {
		if cur != nil || pending {
			return Decision{Code: kerr.ConcurrentTransactions.Code}
		}
		md := New("t", 7, 1000, 5)
		return Decision{Next: &md}
	}
	d, prev, existed, ok := e.Begin(init)
	if !ok || existed || prev.ProducerID != 0 || d.Next.ProducerID != 7 {
		t.Fatalf("Begin: %+v %v %v", d, existed, ok)
	}
	if d2, _, _, ok := e.Begin(init); ok || d2.Code != kerr.ConcurrentTransactions.Code {
		t.Fatal("a second transition while one is pending")
	}
	// The write fails: nothing replayed, the placeholder stays unwritten.
	if md := e.End(kerr.NotCoordinator.Code, func(Metadata) { t.Fatal("reported a failed write") }); md.ProducerID != 0 {
		t.Fatalf("after a failed write: %+v", md)
	}
	select {
	case <-changed:
	default:
		t.Fatal("End did not wake the waiter")
	}
	// Again, and the write succeeds: its replay makes it take effect.
	d, _, _, _ = e.Begin(init)
	live := replayed(Record("t", d.Next))
	live.Live = Transition{ID: "t", Metadata: d.Next} // as the runtime replays a live write
	s.Replay(live)
	var reported []int64
	md := e.End(0, func(md Metadata) { reported = append(reported, md.ProducerID) })
	if md.ProducerID != 7 || !slices.Equal(reported, []int64{7}) {
		t.Fatalf("after the write: %+v, reported %v", md, reported)
	}
	if ms := s.Snapshot(); len(ms) != 1 || ms[0].TransactionalID != "t" {
		t.Fatalf("snapshot %+v", ms)
	}

	// Prepared lists what a new coordinator must finish.
	p := New("p", 8, 1000, 5)
	p.State = PrepareCommit
	s.Replay(replayed(Record("p", &p)))
	es, mds := s.Prepared()
	if len(es) != 1 || es[0].ID() != "p" || mds[0].State != PrepareCommit {
		t.Fatalf("prepared %v", mds)
	}
	if got := s.Entries(); len(got) != 2 || got[0].ID() != "p" || got[1].ID() != "t" {
		t.Fatal("entries by id")
	}

	// Expiry: only an idle, written, not pending id.
	if _, ok := e.BeginExpiry(10, 1000); ok {
		t.Fatal("expired before its time")
	}
	if md, ok := e.BeginExpiry(2000, 1000); !ok || md.ProducerID != 7 {
		t.Fatal("not expired after its time")
	}
	if _, ok := e.BeginExpiry(2000, 1000); ok {
		t.Fatal("expired twice while pending")
	}
	s.Replay(replayed(Record("t", nil)))
	e.End(0, nil)
	if s.Holds(e) || s.Entry("t", false) != nil {
		t.Fatal("the expired id is still held")
	}
}
