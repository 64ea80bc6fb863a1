package group

// The group coordinator's state of one __consumer_offsets partition on
// package coordinator's runtime, as in Kafka's GroupCoordinatorShard: the
// groups, rebuilt by replaying the partition's records on a load and kept
// current by replaying each committed write the same way (Replay). The
// broker hosting the shard gives it a Host: its clock, events, logging,
// tracked goroutines, the chaos checker's hook and the topic metadata.

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fakekafka/fakekafka/coordinator"
)

// Host is what a group shard needs of the broker hosting it.
type Host interface {
	// Shard is the runtime's shard index (nil when it is not open).
	Shard(index int32) *coordinator.Shard[*Shard]
	// Emit reports a change of g's classic membership.
	Emit(g *Group, ev Event)
	// EmitConsumer reports what a KIP-848 step of g changed.
	EmitConsumer(g *Group, evs []Event)
	// EmitShare reports what a share-group step of g changed, member the
	// one whose heartbeat (or session expiry) it was.
	EmitShare(g *Group, member string, evs []Event)
	Now() time.Time
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay() time.Duration
	// GroupConfig is group id's effective configuration (its overrides
	// over the broker's defaults).
	GroupConfig(id string) Config
	// MigrationPolicy is group.consumer.migration.policy.
	MigrationPolicy() MigrationPolicy
	Log() *slog.Logger
	// Go runs f on a goroutine the host's close waits for; false when it
	// is closing.
	Go(f func()) bool
	// Closing is closed when the host closes.
	Closing() <-chan struct{}
	// Recording says whether the chaos checker wants committed offsets;
	// Committed hands it those of one group.
	Recording() bool
	Committed(group string, recs []CoordinatorRecord)
	// Topics is the live topic table the assignors read.
	Topics() Topics
}

// CoordinatorRecord is one record to write to __consumer_offsets.
type CoordinatorRecord struct {
	Key   RecordKey
	Value any // marshalled to JSON; nil writes a tombstone
}

// Shard is one load of a __consumer_offsets partition.
type Shard struct {
	host  Host
	index int32
	at    coordinator.Epoch // the load: coordinator broker and leader epoch

	// loading is true while the load replays the log: the groups are not
	// shared yet and need no locks. Set before the state is published.
	loading bool

	mu     sync.Mutex // guards groups; never held while a group's lock is taken
	groups map[string]*Group
}

// NewShard is the empty state of partition index for a load at at.
func NewShard(host Host, index int32, at coordinator.Epoch) *Shard {
	return &Shard{host: host, index: index, at: at, loading: true, groups: map[string]*Group{}}
}

// Index is the shard's partition.
func (s *Shard) Index() int32 { return s.index }

// runtime is the runtime's shard this state was loaded into.
func (s *Shard) runtime() *coordinator.Shard[*Shard] { return s.host.Shard(s.index) }

// Group returns the shard's group id; with create an unknown one is made.
func (s *Shard) Group(id string, create bool) *Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil && create {
		g = newGroup(s, id)
		s.groups[id] = g
	}
	return g
}

// List returns the shard's groups.
func (s *Shard) List() []*Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.groups))
}

// Forget drops g from the shard, unless it was replaced meanwhile.
func (s *Shard) Forget(g *Group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[g.ID] == g {
		delete(s.groups, g.ID)
	}
}

// holds says whether g is the shard's group of its id.
func (s *Shard) holds(g *Group) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[g.ID] == g
}

// Replay applies one committed batch of the shard's partition: offset
// commits, group metadata and KIP-848 records (tombstones delete), a
// transaction's pending offsets, or its marker, which commits or drops
// them. A load replays the whole log this way (Kafka's
// loadGroupsAndOffsets); every committed write and marker is replayed
// the same way as it happens.
func (s *Shard) Replay(b coordinator.Batch) {
	if b.Control {
		s.replayMarker(b.ProducerID, b.Commit)
		return
	}
	var commits map[string][]CoordinatorRecord // for the chaos checker
	live, _ := b.Live.([]CoordinatorRecord)    // a live write's records, not to be decoded again
	if len(live) != len(b.Records) {
		live = nil
	}
	for i, r := range b.Records {
		var k RecordKey
		var o Offset
		decoded := false
		if live != nil {
			k = live[i].Key
			// Taken as is only when the JSON round trip would not change
			// it (invalid UTF-8 would): the log's copy is what counts.
			o, decoded = live[i].Value.(Offset)
			decoded = decoded && utf8.ValidString(o.Metadata)
		} else if json.Unmarshal(r.Key, &k) != nil {
			continue
		}
		if k.Group == "" {
			continue
		}
		g := s.Group(k.Group, s.loading || r.Value != nil)
		if g == nil {
			continue // a tombstone of a group already gone
		}
		if !s.loading {
			g.Mu.Lock()
		}
		tp := TopicPartition{Topic: k.Topic, Partition: k.Partition}
		switch {
		case b.Transactional && k.Topic == "":
		case b.Transactional && decoded:
			g.AddPending(b.ProducerID, tp, o)
		case b.Transactional:
			g.ReplayPending(b.ProducerID, tp, r.Value)
		case decoded && k.Kind == "":
			g.Commit(tp, o)
			commits = s.recordCommit(commits, k, o)
		default:
			if o, ok := g.apply(k, r.Value); ok {
				commits = s.recordCommit(commits, k, o)
			}
		}
		if !s.loading {
			g.Mu.Unlock()
		}
	}
	// The chaos checker learns every offset an OffsetCommit committed.
	// (Guarded: sorting even no keys allocates, on every batch a load
	// replays.)
	if len(commits) > 0 {
		for _, group := range slices.Sorted(maps.Keys(commits)) {
			s.host.Committed(group, commits[group])
		}
	}
}

// recordCommit notes a committed offset for the chaos checker, if it runs
// and this is a live write.
func (s *Shard) recordCommit(commits map[string][]CoordinatorRecord, k RecordKey, o Offset) map[string][]CoordinatorRecord {
	if s.loading || !s.host.Recording() {
		return commits
	}
	if commits == nil {
		commits = map[string][]CoordinatorRecord{}
	}
	commits[k.Group] = append(commits[k.Group], CoordinatorRecord{Key: k, Value: o})
	return commits
}

// replayMarker applies a transaction marker to every group of the shard.
//
// Each group is locked alone, after the list is taken: no lock is held
// while a group's is taken, so a marker cannot close a lock-order cycle
// with a group's timers (the deadlock TestCoordinatorStress guards).
func (s *Shard) replayMarker(pid int64, commit bool) {
	if s.loading {
		for _, g := range s.groups { // not yet shared: no g.Mu needed
			g.CompleteTxn(pid, commit, nil)
		}
		return
	}
	// The chaos checker learns a transaction's offsets when its commit
	// marker makes them committed, as it learns OffsetCommit's.
	record := commit && s.host.Recording()
	var byGroup map[string][]CoordinatorRecord
	if record {
		byGroup = map[string][]CoordinatorRecord{}
	}
	for _, g := range s.List() {
		var applied func(TopicPartition, Offset)
		if record {
			applied = func(tp TopicPartition, o Offset) {
				byGroup[g.ID] = append(byGroup[g.ID], CoordinatorRecord{Key: RecordKey{Group: g.ID, Topic: tp.Topic, Partition: tp.Partition}, Value: o})
			}
		}
		g.Mu.Lock()
		g.CompleteTxn(pid, commit, applied)
		g.Mu.Unlock()
	}
	if len(byGroup) > 0 {
		for _, group := range slices.Sorted(maps.Keys(byGroup)) {
			s.host.Committed(group, byGroup[group])
		}
	}
}

// Loaded ends a load (the runtime's AfterReplay): groups the log left
// without offsets, metadata or pending offsets are forgotten.
func (s *Shard) Loaded() {
	for id, g := range s.groups {
		if g.Offsets.Empty() && g.MetaRecord == nil && g.ConsumerMeta == nil && g.StreamsMeta == nil && g.ShareMeta == nil {
			delete(s.groups, id)
		}
	}
	s.loading = false
	s.host.Log().Info("coordinator loaded", "partition", s.index, "groups", len(s.groups))
}
