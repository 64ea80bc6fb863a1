package schemaregistry

import (
	"context"
	"sync"
)

// MemStore is a Store kept in memory: for tests and for embedding the
// registry without a _schemas topic. Records are replayed into State in
// write order; Records gives them back as a topic would.
type MemStore struct {
	mu    sync.Mutex
	state *State
	log   []Record
	// Fail, when set, is asked before each write; its error fails the
	// write and nothing of it is applied.
	Fail func(recs []Record) error
}

// NewMemStore is an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{state: NewState()} }

// State is the content replayed so far.
func (m *MemStore) State() *State { return m.state }

// Write appends recs and replays them.
func (m *MemStore) Write(ctx context.Context, recs []Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Fail != nil {
		if err := m.Fail(recs); err != nil {
			return err
		}
	}
	for _, r := range recs {
		m.log = append(m.log, r)
		_ = m.state.Replay(r) // a record the state refuses is skipped, as on a real topic
	}
	return nil
}

// Records is every record written, in order.
func (m *MemStore) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.log...)
}
