package server

// The group coordinator's storage, as in Kafka: every group belongs to one
// partition of the internal, replicated __consumer_offsets topic (by the
// Java hash of its id), that partition's leader is the group's coordinator,
// and committed offsets and group metadata are records in that partition's
// log. A write is acknowledged only once the partition's HW covers it
// (acks=all), so it survives a coordinator crash exactly as Kafka's does:
// the next leader rebuilds every group of the partition from its own log
// when it first serves one.

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// offsetsTopic is Kafka's internal topic for committed offsets and groups.
const offsetsTopic = "__consumer_offsets"

// offsetsCommitTimeout is offsets.commit.timeout.ms: how long a coordinator
// write waits for replication before failing.
const offsetsCommitTimeout = 5 * time.Second

// coordinators holds one shard per __consumer_offsets partition, created
// with the topic on first use.
type coordinators struct {
	once   sync.Once
	err    error
	shards []*shard
}

// shard is the coordinator state of one __consumer_offsets partition, as
// loaded by its current leader.
type shard struct {
	c *Cluster
	p *partition

	mu           sync.Mutex
	loadedLeader int32 // leader and epoch the groups were loaded under
	loadedEpoch  int32
	groups       map[string]*group
}

// group is one consumer group's coordinator state. g.mu guards everything
// below it; the membership fields belong to the classic and consumer
// protocols (group_*.go).
type group struct {
	id string
	s  *shard

	mu      sync.Mutex
	offsets map[topicPartition]committedOffset
	// txnOffsets are TxnOffsetCommit offsets per producer id, pending
	// until that producer's marker commits (or aborts) them.
	txnOffsets map[int64]map[topicPartition]committedOffset
	// meta is the last group metadata record loaded from the log (JSON of
	// groupMeta), nil when none; the membership code restores from it once.
	meta []byte
	groupState
	// consumer is the KIP-848 state when members use that protocol;
	// consumerMeta its last record, restored into consumer after a load.
	consumer     *consumerGroup
	consumerMeta []byte
	// writeMu orders the group's state writes: taken before g.mu, held
	// across the snapshot and its replication.
	writeMu sync.Mutex
}

type topicPartition struct {
	Topic     string
	Partition int32
}

// committedOffset is one committed offset as OffsetFetch returns it.
type committedOffset struct {
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata"`
	Timestamp   int64  `json:"timestamp"`
}

// recordKey is the key of a __consumer_offsets record: an offset commit
// (Topic set) or the group's metadata. A record with no value deletes.
type recordKey struct {
	Kind      string `json:"kind,omitempty"` // consumerKind for KIP-848 group state
	Group     string `json:"group"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition,omitempty"`
}

// javaHash is Java's String.hashCode, which Kafka uses to place a group.
func javaHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 { // UTF-16 surrogate pair, as Java sees it
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// shards creates __consumer_offsets on first use and returns its shards.
func (c *Cluster) shards() ([]*shard, error) {
	co := &c.coord
	co.once.Do(func() {
		var t *topic
		t, co.err = c.internalTopic(offsetsTopic, c.cfg.OffsetsTopicPartitions, c.cfg.OffsetsTopicReplicationFactor,
			map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"}) // offsets.topic.segment.bytes
		if t == nil {
			return
		}
		for _, p := range t.partitions() {
			co.shards = append(co.shards, &shard{c: c, p: p, loadedLeader: -1, loadedEpoch: -1})
		}
	})
	return co.shards, co.err
}

// internalTopic returns the internal topic name, creating it first if it
// does not exist: partitions, a replication factor of at most the live
// brokers, and configs. Both coordinators keep their state in one.
func (c *Cluster) internalTopic(name string, partitions, rf int, configs map[string]string) (*topic, error) {
	if t := c.topic(name); t != nil {
		return t, nil
	}
	rf = min(rf, len(c.liveBrokers()))
	t, e, msg := c.createTopic(topicSpec{name: name, partitions: int32(partitions), rf: int16(rf), configs: configs}, false)
	if t == nil {
		return nil, fmt.Errorf("creating %s: %v: %s", name, e, msg)
	}
	return t, nil
}

// coordinatorShard is the index of the coordinator shard (the internal
// topic's partition) that owns key, as Kafka's partitionFor picks it.
func coordinatorShard(key string, shards int) int {
	// Kafka's Utils.abs, not toPositive: -h for a negative hash, 0 for MinInt32.
	h := javaHash(key)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return int(h) % shards
}

// coordinatorLeader is the broker leading a coordinator partition, or -1
// with COORDINATOR_NOT_AVAILABLE when that broker is down.
func (c *Cluster) coordinatorLeader(p *partition) (int32, int16) {
	p.mu.Lock()
	leader, _, _ := p.st.View(-1)
	p.mu.Unlock()
	if b := c.broker(leader); b == nil || !b.up.Load() {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return leader, 0
}

// shardFor returns the shard that owns groupID.
func (c *Cluster) shardFor(groupID string) (*shard, error) {
	ss, err := c.shards()
	if err != nil {
		return nil, err
	}
	return ss[coordinatorShard(groupID, len(ss))], nil
}

// coordinatorOf returns the broker coordinating groupID, or -1 with the
// error a FindCoordinator answer carries.
func (c *Cluster) coordinatorOf(groupID string) (int32, int16) {
	s, err := c.shardFor(groupID)
	if err != nil {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return c.coordinatorLeader(s.p)
}

// group returns groupID's state as coordinated by broker, loading the shard
// from the log if leadership moved since it was last loaded. It fails with
// NOT_COORDINATOR when broker does not lead the group's partition and
// COORDINATOR_NOT_AVAILABLE when nobody does. With create false an unknown
// group is nil (and no error).
func (c *Cluster) group(broker int32, groupID string, create bool) (*group, int16) {
	s, err := c.shardFor(groupID)
	if err != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	return s.group(broker, groupID, create)
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

func (s *shard) group(broker int32, groupID string, create bool) (*group, int16) {
	s.p.mu.Lock()
	leader, epoch, _ := s.p.st.View(broker)
	var batches []*replication.Batch
	if leader == broker {
		s.mu.Lock()
		stale := s.loadedLeader != leader || s.loadedEpoch != epoch
		s.mu.Unlock()
		if stale {
			batches = append(batches, s.p.st.Replica(broker).Log().Batches()...)
		}
	}
	s.p.mu.Unlock()
	switch {
	case leader < 0:
		return nil, kerr.CoordinatorNotAvailable.Code
	case leader != broker:
		return nil, kerr.NotCoordinator.Code
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loadedLeader != leader || s.loadedEpoch != epoch {
		s.load(batches)
		s.loadedLeader, s.loadedEpoch = leader, epoch
	}
	g := s.groups[groupID]
	if g == nil && create {
		g = newGroup(s, groupID)
		s.groups[groupID] = g
	}
	return g, 0
}

func newGroup(s *shard, id string) *group {
	return &group{id: id, s: s, offsets: map[topicPartition]committedOffset{}}
}

// load rebuilds every group of the shard from the leader's log, the way a
// new coordinator does (Kafka's loadGroupsAndOffsets). Callers hold s.mu.
func (s *shard) load(batches []*replication.Batch) {
	s.groups = map[string]*group{}
	for _, b := range batches {
		if b.Control {
			for _, g := range s.groups { // not yet shared: no g.mu needed
				g.completeTxn(b.ProducerID, b.Commit, nil)
			}
			continue
		}
		recs, err := protocol.Records(b.Raw)
		if err != nil {
			s.c.log.Warn("skipping unreadable batch in "+offsetsTopic, "partition", s.p.index, "offset", b.BaseOffset, "error", err)
			continue
		}
		for _, r := range recs {
			var k recordKey
			if json.Unmarshal(r.Key, &k) != nil || k.Group == "" {
				continue
			}
			g := s.groups[k.Group]
			if g == nil {
				g = newGroup(s, k.Group)
				s.groups[k.Group] = g
			}
			if b.Transactional {
				g.applyTxn(b.ProducerID, k, r.Value)
				continue
			}
			g.apply(k, r.Value)
		}
	}
	for id, g := range s.groups {
		if len(g.offsets) == 0 && g.meta == nil && g.consumerMeta == nil && len(g.txnOffsets) == 0 {
			delete(s.groups, id)
		}
	}
	s.c.log.Info("coordinator loaded", "partition", s.p.index, "groups", len(s.groups))
}

// apply replays one record into the group. Callers hold g.mu or own g.
// A group loaded from the log starts with restored false, so its
// membership is rebuilt from meta once; live writes only keep meta current.
func (g *group) apply(k recordKey, value []byte) {
	if k.Kind == consumerKind {
		g.consumerMeta = value
		return
	}
	if k.Topic == "" {
		g.meta = value // nil: the group was deleted
		return
	}
	tp := topicPartition{k.Topic, k.Partition}
	if value == nil {
		delete(g.offsets, tp)
		return
	}
	var o committedOffset
	if json.Unmarshal(value, &o) == nil {
		g.offsets[tp] = o
	}
}

// coordinatorRecord is one record to write to __consumer_offsets.
type coordinatorRecord struct {
	key   recordKey
	value any // marshalled to JSON; nil writes a tombstone
}

// write appends records to the group's partition as broker (which must
// lead it) with acks=all and waits until they are committed, then applies
// them to the group. Callers must not hold g.mu (the wait can be long) but
// must serialise writes to one group themselves if order matters. Errors
// are mapped as Kafka's coordinator maps them.
func (g *group) write(broker int32, recs []coordinatorRecord) int16 {
	return g.writeAs(broker, recs, -1, -1)
}

// writeAs is write for producer id pid (-1: none). A transactional offset
// commit is a transactional batch of that producer, pending in the group
// until the producer's marker.
func (g *group) writeAs(broker int32, recs []coordinatorRecord, pid int64, epoch int16) int16 {
	s := g.s
	records := make([]protocol.Record, len(recs))
	keys := make([]recordKey, len(recs))
	values := make([][]byte, len(recs))
	for i, r := range recs {
		k, _ := json.Marshal(r.key)
		records[i].Key = k
		keys[i] = r.key
		if r.value != nil {
			v, err := json.Marshal(r.value)
			if err != nil {
				return kerr.UnknownServerError.Code
			}
			records[i].Value, values[i] = v, v
		}
	}
	now := s.c.now()
	hdr := protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: now.UnixMilli()}
	if pid >= 0 {
		hdr.ProducerID, hdr.ProducerEpoch, hdr.Attributes = pid, epoch, protocol.AttrTransactional
	}
	raw, err := protocol.BuildBatch(hdr, protocol.CodecNone, records)
	if err != nil {
		return kerr.UnknownServerError.Code
	}
	h, _ := protocol.ParseBatchHeader(raw)
	b := &replication.Batch{Raw: raw, LastOffset: int64(h.LastOffsetDelta), MaxTimestamp: h.MaxTimestamp, ProducerID: hdr.ProducerID,
		ProducerEpoch: hdr.ProducerEpoch, BaseSequence: -1, NumRecords: h.NumRecords, Transactional: pid >= 0}
	if _, code := s.c.appendInternal(s.p, broker, b, offsetsCommitTimeout); code != 0 {
		if code == kerr.InvalidProducerEpoch.Code {
			return kerr.ProducerFenced.Code
		}
		return coordinatorError(code)
	}
	g.mu.Lock()
	for i := range keys {
		if pid >= 0 {
			g.applyTxn(pid, keys[i], values[i])
			continue
		}
		g.apply(keys[i], values[i])
	}
	g.mu.Unlock()
	return 0
}

// appendInternal appends a batch a coordinator built to p as broker (which
// must lead it, or believe it does) with acks=all and waits until the HW
// covers it, the way Kafka's coordinators and marker writes use
// appendRecords. It returns the leader epoch of the append and the
// partition's error code; REQUEST_TIMED_OUT after timeout.
func (c *Cluster) appendInternal(p *partition, broker int32, b *replication.Batch, timeout time.Duration) (int32, int16) {
	wake := make(chan struct{}, 1)
	p.mu.Lock()
	var res replication.AppendResult
	var code int16
	var epoch int32
	p.mutate(func() {
		res, code = p.st.AppendAs(broker, b, -1, c.now())
		_, epoch, _ = p.st.View(broker)
	})
	if code == 0 {
		p.watch(wake)
	}
	p.mu.Unlock()
	if code != 0 {
		return epoch, code
	}
	defer p.unwatch(wake)
	timer := c.cfg.Clock.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		done, code := p.st.AppendStatus(broker, epoch, res.Required)
		p.mu.Unlock()
		if done {
			return epoch, code
		}
		select {
		case <-wake:
		case <-timer.C:
			return epoch, kerr.RequestTimedOut.Code
		case <-c.closing:
			return epoch, kerr.RequestTimedOut.Code
		}
	}
}

// coordinatorError maps a failed write to what Kafka's coordinator answers.
func coordinatorError(code int16) int16 {
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	case kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code, kerr.UnknownTopicOrPartition.Code:
		return kerr.CoordinatorNotAvailable.Code
	}
	return code
}
