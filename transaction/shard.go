package transaction

// The transaction coordinator's state of one __transaction_state
// partition, on package coordinator's runtime: the metadata of every
// transactional id, rebuilt by replaying the partition's records (the last
// record per id wins, a null value removes it), the way Kafka's
// loadTransactionsForTxnTopicPartition does, and kept current by replaying
// each committed write the same way.
//
// A transition is begun (Begin: the rule decides, the entry is pending and
// every other request gets CONCURRENT_TRANSACTIONS, as Kafka's pendingState
// does), written through the runtime, which replays it into the entry once
// committed, and ended (End). A failed write is never replayed, so the
// metadata in force stays the previous one.

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/fakekafka/fakekafka/coordinator"
)

// RecordKey is the key of a __transaction_state record; its value is the
// JSON of Metadata, or null once the id expired.
type RecordKey struct {
	TransactionalID string `json:"transactional_id"`
}

// Record is the record of id's transition to md; a nil md is the tombstone
// of an expired id.
func Record(id string, md *Metadata) coordinator.Record {
	key, _ := json.Marshal(RecordKey{id})
	r := coordinator.Record{Key: key}
	if md != nil {
		r.Value, _ = json.Marshal(md)
	}
	return r
}

// Transition is a write of id's metadata as the coordinator hands it to
// the runtime with its record (coordinator.Batch.Live), so that its replay
// need not decode the record.
type Transition struct {
	ID       string
	Metadata *Metadata // nil: the id's tombstone
}

// Shard is the transactional ids of one __transaction_state partition as
// one load of it holds them.
type Shard struct {
	index int32
	at    coordinator.Epoch

	mu   sync.Mutex // guards txns; never held while an entry's lock is taken
	txns map[string]*Entry
}

// NewShard is the empty state of partition index loaded at at.
func NewShard(index int32, at coordinator.Epoch) *Shard {
	return &Shard{index: index, at: at, txns: map[string]*Entry{}}
}

// Index is the shard's partition.
func (s *Shard) Index() int32 { return s.index }

// At is the load the shard belongs to; its epoch is the coordinator epoch
// its markers carry.
func (s *Shard) At() coordinator.Epoch { return s.at }

// Len is the number of transactional ids.
func (s *Shard) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.txns)
}

// Replay applies one committed batch of the partition. Markers carry no
// transaction state.
func (s *Shard) Replay(b coordinator.Batch) {
	if b.Control {
		return
	}
	if t, ok := b.Live.(Transition); ok && t.Metadata != nil {
		s.set(t.ID, *t.Metadata) // a live write: no need to decode it
		return
	}
	for _, r := range b.Records {
		var k RecordKey
		if json.Unmarshal(r.Key, &k) != nil || k.TransactionalID == "" {
			continue
		}
		var md Metadata
		if r.Value == nil || json.Unmarshal(r.Value, &md) != nil {
			s.mu.Lock()
			delete(s.txns, k.TransactionalID)
			s.mu.Unlock()
			continue
		}
		s.set(k.TransactionalID, md)
	}
}

// set makes md id's metadata in force.
func (s *Shard) set(id string, md Metadata) {
	s.mu.Lock()
	e := s.txns[id]
	if e == nil {
		e = &Entry{id: id, shard: s}
		s.txns[id] = e
	}
	s.mu.Unlock()
	e.mu.Lock()
	e.md, e.exists = md, true
	e.mu.Unlock()
}

// Entry returns id's entry; with create an unknown id gets a placeholder
// (not yet written), without it is nil.
func (s *Shard) Entry(id string, create bool) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.txns[id]
	if e == nil && create {
		e = &Entry{id: id, shard: s}
		s.txns[id] = e
	}
	return e
}

// Holds says whether e is still the shard's entry of its id.
func (s *Shard) Holds(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txns[e.id] == e
}

// Entries lists the shard's entries by id.
func (s *Shard) Entries() []*Entry {
	s.mu.Lock()
	out := slices.Collect(maps.Values(s.txns))
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *Entry) int { return strings.Compare(a.id, b.id) })
	return out
}

// Snapshot copies the metadata of every written id, by id.
func (s *Shard) Snapshot() []Metadata {
	var out []Metadata
	for _, e := range s.Entries() {
		if md, ok, _ := e.View(); ok {
			out = append(out, md)
		}
	}
	return out
}

// Prepared lists the entries a previous coordinator left in
// PrepareCommit or PrepareAbort, with their metadata: the markers a new
// coordinator must write again.
func (s *Shard) Prepared() ([]*Entry, []Metadata) {
	var es []*Entry
	var mds []Metadata
	for _, e := range s.Entries() {
		md, ok, _ := e.View()
		if _, prepared := md.State.Completed(); ok && prepared {
			es, mds = append(es, e), append(mds, md)
		}
	}
	return es, mds
}

// Entry is one transactional id. mu guards md, exists and pending.
type Entry struct {
	id    string
	shard *Shard

	mu      sync.Mutex
	exists  bool // md has been written (false for a placeholder)
	md      Metadata
	pending bool          // a transition is being written
	changed chan struct{} // closed when a transition finishes; nil until asked for
}

// ID is the transactional id.
func (e *Entry) ID() string { return e.id }

// Shard is the shard (and so the load) the entry belongs to.
func (e *Entry) Shard() *Shard { return e.shard }

// View is the metadata in force, whether it was ever written, and whether
// a transition is being written.
func (e *Entry) View() (md Metadata, exists, pending bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.md, e.exists, e.pending
}

// Changes returns a channel closed when the entry's next transition
// finishes (or fails), for callers that retry on CONCURRENT_TRANSACTIONS.
func (e *Entry) Changes() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.changed
}

// Begin runs rule on the entry's metadata (nil when never written). When
// the rule decides a transition, the entry is pending until End and ok is
// true; prev and existed are what was in force before it.
func (e *Entry) Begin(rule func(cur *Metadata, pending bool) Decision) (d Decision, prev Metadata, existed, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var cur *Metadata
	if e.exists {
		cur = &e.md
	}
	prev, existed = e.md, e.exists
	d = rule(cur, e.pending)
	if d.Next == nil {
		return d, e.md, existed, false
	}
	e.pending = true
	return d, prev, existed, true
}

// BeginExpiry begins the removal of an id idle past expirationMs: written
// once, not pending, and Expired. ok false: nothing to remove.
func (e *Entry) BeginExpiry(nowMs, expirationMs int64) (md Metadata, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.exists || e.pending || !Expired(e.md, nowMs, expirationMs) {
		return e.md, false
	}
	e.pending = true
	return e.md, true
}

// End ends a transition begun by Begin or BeginExpiry whose write answered
// code: the write's replay already made it take effect when code is 0.
// done, if set, runs first under the entry's lock when the write
// succeeded, so that what it reports keeps the transitions' order. End
// returns the metadata in force and wakes Changes' waiters.
func (e *Entry) End(code int16, done func(md Metadata)) Metadata {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending = false
	if code == 0 && done != nil {
		done(e.md)
	}
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
	return e.md
}
