package server

// The group coordinator on package coordinator's runtime, as in Kafka:
// every group belongs to one partition of the internal, replicated
// __consumer_offsets topic (by the Java hash of its id), that partition's
// leader is the group's coordinator, and committed offsets and group
// metadata are records in that partition's log. A write is acknowledged
// only once the partition's HW covers it (acks=all) and takes effect only
// then, by the same replay that rebuilds every group of the partition on
// the next leader when it first serves one, so it survives a coordinator
// crash exactly as Kafka's does. The protocols themselves are package
// group's.

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/fakekafka/fakekafka/coordinator"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupShard is the group coordinator's state of one __consumer_offsets
// partition as one load of it holds it: the groups, rebuilt by replaying
// the partition's records and kept current by replaying each committed
// write the same way (Replay).
type groupShard struct {
	c     *Cluster
	index int32
	at    coordinator.Epoch // the load: coordinator broker and leader epoch

	// loading is true while the load replays the log: the groups are not
	// shared yet and need no locks. Set before the state is published.
	loading bool

	mu     sync.Mutex // guards groups; never held while a group's lock is taken
	groups map[string]*group
}

func (c *Cluster) newGroupShard(index int32, at coordinator.Epoch) *groupShard {
	return &groupShard{c: c, index: index, at: at, loading: true, groups: map[string]*group{}}
}

// shard is the runtime's shard this state was loaded into.
func (s *groupShard) shard() *coordinator.Shard[*groupShard] { return s.c.coord.Shard(s.index) }

// group is one consumer group's coordinator state. g.mu guards everything
// below it; the membership fields belong to the classic and consumer
// protocols (group_*.go).
type group struct {
	id string
	s  *groupShard

	mu sync.Mutex
	// Offsets are the committed offsets and the transactions' pending
	// ones (package group replays them).
	grp.Offsets
	// meta is the last group metadata record replayed (JSON of grp.Meta),
	// nil when none; the classic membership is restored from it once.
	meta []byte
	// Classic is the classic protocol's membership (package group).
	grp.Classic
	// consumer is the KIP-848 state when members use that protocol;
	// consumerMeta its last record, restored into consumer after a load.
	consumer     *consumerGroup
	consumerMeta []byte
	// writeMu orders the group's state writes: taken before g.mu, held
	// across the snapshot and its replication.
	writeMu    sync.Mutex
	writtenSeq uint64        // last metadata snapshot written (writeMu)
	expiryMu   sync.RWMutex  // OffsetCommit's writes read-lock it, the offset expiry locks it (offset_expiry.go)
	done       chan struct{} // closed on shutdown, ending the watcher
}

// The records' and offsets' types are package group's.
type (
	committedOffset = grp.Offset
	recordKey       = grp.RecordKey
)

// topicPartition names one partition.
type topicPartition struct {
	Topic     string
	Partition int32
}

const consumerKind = grp.ConsumerKind

// coordinatorOf returns the broker coordinating groupID, or -1 with the
// error a FindCoordinator answer carries.
func (c *Cluster) coordinatorOf(groupID string) (int32, int16) {
	return c.coord.Coordinator(groupID)
}

// group returns groupID's state as coordinated by broker, loading the shard
// from the log if leadership moved since it was last loaded. It fails with
// NOT_COORDINATOR when broker does not lead the group's partition and
// COORDINATOR_NOT_AVAILABLE when nobody does. With create false an unknown
// group is nil (and no error).
func (c *Cluster) group(broker int32, groupID string, create bool) (*group, int16) {
	sh, err := c.coord.ShardFor(groupID)
	if err != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	s, _, code := sh.Acquire(broker)
	if code != 0 {
		return nil, code
	}
	return s.group(groupID, create), 0
}

// existingGroup looks up groupID for a request on broker that needs the
// group to exist: INVALID_GROUP_ID for an empty id, the coordinator errors,
// and missing when the group is unknown.
func (c *Cluster) existingGroup(broker int32, groupID string, missing *kerr.Error) (*group, int16) {
	if groupID == "" {
		return nil, kerr.InvalidGroupID.Code
	}
	g, code := c.group(broker, groupID, false)
	if code == 0 && g == nil {
		code = missing.Code
	}
	return g, code
}

// group returns the shard's group id; with create an unknown one is made.
func (s *groupShard) group(id string, create bool) *group {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[id]
	if g == nil && create {
		g = newGroup(s, id)
		s.groups[id] = g
	}
	return g
}

// list returns the shard's groups.
func (s *groupShard) list() []*group {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.groups))
}

// forget drops g from the shard, unless it was replaced meanwhile.
func (s *groupShard) forget(g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[g.id] == g {
		delete(s.groups, g.id)
	}
}

// holds says whether g is the shard's group of its id.
func (s *groupShard) holds(g *group) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[g.id] == g
}

func newGroup(s *groupShard, id string) *group {
	g := &group{id: id, s: s, Offsets: grp.NewOffsets()}
	g.Classic = grp.NewClassic(id, classicHost{g})
	return g
}

// Replay applies one committed batch of the shard's partition: offset
// commits, group metadata and KIP-848 records (tombstones delete), a
// transaction's pending offsets, or its marker, which commits or drops
// them. A load replays the whole log this way (Kafka's
// loadGroupsAndOffsets); every committed write and marker is replayed
// the same way as it happens.
func (s *groupShard) Replay(b coordinator.Batch) {
	if b.Control {
		s.replayMarker(b.ProducerID, b.Commit)
		return
	}
	var commits map[string][]coordinatorRecord // for the chaos checker
	live, _ := b.Live.([]coordinatorRecord)    // a live write's records, not to be decoded again
	if len(live) != len(b.Records) {
		live = nil
	}
	for i, r := range b.Records {
		var k recordKey
		var o committedOffset
		decoded := false
		if live != nil {
			k = live[i].key
			// Taken as is only when the JSON round trip would not change
			// it (invalid UTF-8 would): the log's copy is what counts.
			o, decoded = live[i].value.(committedOffset)
			decoded = decoded && utf8.ValidString(o.Metadata)
		} else if json.Unmarshal(r.Key, &k) != nil {
			continue
		}
		if k.Group == "" {
			continue
		}
		g := s.group(k.Group, s.loading || r.Value != nil)
		if g == nil {
			continue // a tombstone of a group already gone
		}
		if !s.loading {
			g.mu.Lock()
		}
		tp := grp.TopicPartition{Topic: k.Topic, Partition: k.Partition}
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
			g.mu.Unlock()
		}
	}
	// The chaos checker learns every offset an OffsetCommit committed.
	for group, recs := range commits {
		s.c.recordCommits(group, recs)
	}
}

// recordCommit notes a committed offset for the chaos checker, if it runs
// and this is a live write.
func (s *groupShard) recordCommit(commits map[string][]coordinatorRecord, k recordKey, o committedOffset) map[string][]coordinatorRecord {
	if s.loading || s.c.chaos.Load() == nil {
		return commits
	}
	if commits == nil {
		commits = map[string][]coordinatorRecord{}
	}
	commits[k.Group] = append(commits[k.Group], coordinatorRecord{key: k, value: o})
	return commits
}

// replayMarker applies a transaction marker to every group of the shard.
//
// Each group is locked alone, after the list is taken: no lock is held
// while a group's is taken, so a marker cannot close a lock-order cycle
// with a group's timers (the deadlock TestCoordinatorStress guards).
func (s *groupShard) replayMarker(pid int64, commit bool) {
	if s.loading {
		for _, g := range s.groups { // not yet shared: no g.mu needed
			g.CompleteTxn(pid, commit, nil)
		}
		return
	}
	// The chaos checker learns a transaction's offsets when its commit
	// marker makes them committed, as it learns OffsetCommit's.
	record := commit && s.c.chaos.Load() != nil
	byGroup := map[string][]coordinatorRecord{}
	for _, g := range s.list() {
		var applied func(grp.TopicPartition, committedOffset)
		if record {
			applied = func(tp grp.TopicPartition, o committedOffset) {
				byGroup[g.id] = append(byGroup[g.id], coordinatorRecord{key: recordKey{Group: g.id, Topic: tp.Topic, Partition: tp.Partition}, value: o})
			}
		}
		g.mu.Lock()
		g.CompleteTxn(pid, commit, applied)
		g.mu.Unlock()
	}
	for group, recs := range byGroup {
		s.c.recordCommits(group, recs)
	}
}

// loaded ends a load: groups the log left without offsets, metadata or
// pending offsets are forgotten.
func (s *groupShard) loaded() {
	for id, g := range s.groups {
		if g.Offsets.Empty() && g.meta == nil && g.consumerMeta == nil {
			delete(s.groups, id)
		}
	}
	s.loading = false
	s.c.log.Info("coordinator loaded", "partition", s.index, "groups", len(s.groups))
}

// apply replays one record into the group, answering the offset it
// committed, if any. Callers hold g.mu or own g. A group loaded from the
// log starts with restored false, so its membership is rebuilt from meta
// once; live writes only keep meta current.
func (g *group) apply(k recordKey, value []byte) (committedOffset, bool) {
	if k.Kind == consumerKind {
		g.consumerMeta = value
		return committedOffset{}, false
	}
	if k.Topic == "" {
		g.meta = value // nil: the group was deleted
		return committedOffset{}, false
	}
	return g.ReplayCommit(grp.TopicPartition{Topic: k.Topic, Partition: k.Partition}, value)
}

// coordinatorRecord is one record to write to __consumer_offsets.
type coordinatorRecord struct {
	key   recordKey
	value any // marshalled to JSON; nil writes a tombstone
}

// write appends records to the group's partition with acks=all as the
// coordinator the group was loaded on, and waits until they are committed
// and replayed into the group. Callers must not hold g.mu (the wait can be
// long) but must serialise writes to one group themselves if order
// matters. Errors are mapped as Kafka's coordinator maps them.
func (g *group) write(recs []coordinatorRecord) int16 {
	return g.writeAs(recs, coordinator.NoProducer)
}

// writeAs is write for a transactional producer: a transactional offset
// commit is a transactional batch of that producer, pending in the group
// until the producer's marker.
func (g *group) writeAs(recs []coordinatorRecord, pr coordinator.Producer) int16 {
	out := make([]coordinator.Record, len(recs))
	for i, r := range recs {
		out[i].Key, _ = json.Marshal(r.key)
		if r.value != nil {
			v, err := json.Marshal(r.value)
			if err != nil {
				return kerr.UnknownServerError.Code
			}
			out[i].Value = v
		}
	}
	sh := g.s.shard()
	if sh == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	return sh.WriteLive(g.s.at, pr, out, recs)
}
