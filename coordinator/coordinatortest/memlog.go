// Package coordinatortest has a coordinator.PartitionLog in memory for the
// tests of the runtime and of the coordinators on it: a partition with a
// leader, an epoch and a log, whose appends commit at once.
package coordinatortest

import (
	"slices"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// MemLog is one internal-topic partition in memory. Tests set its fields
// before the runtime runs, or through its methods while it does.
type MemLog struct {
	mu      sync.Mutex
	Part    int32
	Lead    int32
	Epoch   int32
	Batches []*replication.Batch
	// Fail is the next appends' error (0: they succeed).
	Fail int16
	// MoveTo, when set, is the leader and epoch the partition moves to
	// while an append waits for replication.
	MoveTo  *[2]int32
	Appends int // appends tried
}

// Index is the partition's number.
func (l *MemLog) Index() int32 { return l.Part }

// Leader is the leader and its epoch.
func (l *MemLog) Leader(int32) (int32, int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Lead, l.Epoch
}

// Load is Leader plus a copy of the log when broker leads.
func (l *MemLog) Load(broker int32) (int32, int32, []*replication.Batch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if broker != l.Lead {
		return l.Lead, l.Epoch, nil
	}
	return l.Lead, l.Epoch, slices.Clone(l.Batches)
}

// Append commits b at once as broker, or fails with Fail, or with
// NOT_LEADER_OR_FOLLOWER when broker does not lead.
func (l *MemLog) Append(broker int32, b *replication.Batch, _ time.Duration) (int32, int16) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Appends++
	if l.Fail != 0 {
		return l.Epoch, l.Fail
	}
	if broker != l.Lead {
		return l.Epoch, kerr.NotLeaderForPartition.Code
	}
	b.BaseOffset = int64(len(l.Batches))
	l.Batches = append(l.Batches, b)
	if l.MoveTo != nil {
		l.Lead, l.Epoch = l.MoveTo[0], l.MoveTo[1]
	}
	return l.Epoch, 0
}

// Elect makes leader the leader at the next epoch.
func (l *MemLog) Elect(leader int32) {
	l.mu.Lock()
	l.Lead, l.Epoch = leader, l.Epoch+1
	l.mu.Unlock()
}

// Marker appends a transaction marker of producer pid.
func (l *MemLog) Marker(pid int64, commit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Batches = append(l.Batches, &replication.Batch{BaseOffset: int64(len(l.Batches)), ProducerID: pid,
		Transactional: true, Control: true, Commit: commit, Raw: protocol.BuildControlBatch(pid, 0, commit, 0, 0)})
}
