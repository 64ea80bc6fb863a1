package share

import (
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// MemPersister keeps share-partition state in memory: for tests of the
// partition state machine, and as the stand-in until a share coordinator
// answers. It applies the share coordinator's epoch rules: a write with an
// older leader epoch than the last one is FENCED_LEADER_EPOCH, one with an
// older state epoch FENCED_STATE_EPOCH.
type MemPersister struct {
	mu     sync.Mutex
	states map[Key]PartitionState
}

// NewMemPersister is an empty MemPersister.
func NewMemPersister() *MemPersister { return &MemPersister{states: map[Key]PartitionState{}} }

func (m *MemPersister) Initialize(k Key, stateEpoch int32, startOffset int64) int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.states[k]; ok && stateEpoch < st.StateEpoch {
		return kerr.FencedStateEpoch.Code
	}
	dcc := int32(0) // nothing past the start is done yet
	if startOffset < 0 {
		dcc = -1
	}
	m.states[k] = PartitionState{StateEpoch: stateEpoch, LeaderEpoch: -1, StartOffset: startOffset, DeliveryCompleteCount: dcc}
	return 0
}

func (m *MemPersister) Read(k Key, leaderEpoch int32) (PartitionState, int16) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[k]
	if !ok {
		return PartitionState{StateEpoch: -1, LeaderEpoch: -1, StartOffset: -1, DeliveryCompleteCount: -1}, 0
	}
	if leaderEpoch < st.LeaderEpoch {
		return PartitionState{}, kerr.FencedLeaderEpoch.Code
	}
	st.LeaderEpoch = leaderEpoch
	m.states[k] = st
	st.Batches = slices.Clone(st.Batches)
	return st, 0
}

func (m *MemPersister) Write(k Key, w PartitionState) int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[k]
	if ok && w.LeaderEpoch < st.LeaderEpoch {
		return kerr.FencedLeaderEpoch.Code
	}
	if ok && w.StateEpoch < st.StateEpoch {
		return kerr.FencedStateEpoch.Code
	}
	w.Batches = slices.Clone(w.Batches)
	m.states[k] = w
	return 0
}

func (m *MemPersister) Delete(k Key) int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.states, k)
	return 0
}

func (m *MemPersister) ReadSummary(k Key, leaderEpoch int32) (PartitionState, int16) {
	st, code := m.Read(k, leaderEpoch)
	st.Batches = nil
	return st, code
}
