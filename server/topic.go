package server

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topic is one topic. Its partition list only grows (CreatePartitions) and
// is replaced whole, so readers load it without a lock.
type topic struct {
	name  string
	id    [16]byte
	parts atomic.Pointer[[]*partition]
	// settings is replaced whole on every config change (AlterConfigs, a
	// broker default changing), so the produce path reads it without a lock.
	settings  atomic.Pointer[topicSettings]
	lastFlush time.Time // used only by runCheckpoints
	c         *Cluster
	deleted   atomic.Bool
}

// topicSettings is a topic's explicit configs and the values hot paths
// read, resolved against the broker defaults. It is never modified.
type topicSettings struct {
	configs       map[string]string // explicitly set topic configs
	maxBytes      int32             // max.message.bytes, else message.max.bytes
	logAppendTime bool              // message.timestamp.type=LogAppendTime
	lagTimeMax    time.Duration
	flushInterval time.Duration // flush.ms, else log.flush.interval.ms
	compact       bool          // cleanup.policy includes compact: records need keys
	produce       producePolicy // timestamp bounds and compression (produce_validate.go)
}

func (t *topic) cfg() *topicSettings { return t.settings.Load() }

// partitions is the topic's partition list; the slice is never modified.
func (t *topic) partitions() []*partition {
	if ps := t.parts.Load(); ps != nil {
		return *ps
	}
	return nil
}

// partition guards one replication.Partition with its own lock, and keeps
// the requests parked on it (acks=all produces, long-polling fetches).
type partition struct {
	t     *topic
	index int32

	mu sync.Mutex
	st *replication.Partition

	// Guarded by mu; shared while the partition has never used them.
	*partitionExtras
}

// partitionExtras is what a partition needs once it is used: an idle
// partition of a 10,000-partition topic has no waiters, pauses, queued
// events, data directory or chaos run, so every such partition points at
// one frozen zero value, idlePartition, and gets its own on the first
// write (extras). Read the fields through the partition; write them only
// through extras.
type partitionExtras struct {
	waiters []chan struct{}
	paused  []int32 // followers that do not fetch
	ev      partitionEvents
	disk    *storage.Log     // the log on disk with Config.DataDir (persist.go)
	rec     *partitionRecord // a chaos run's recording (chaos_record.go)
}

var idlePartition partitionExtras

// extras returns p's extras for writing, making them on first use.
// Callers hold p.mu.
func (p *partition) extras() *partitionExtras {
	if p.partitionExtras == &idlePartition {
		p.partitionExtras = &partitionExtras{}
	}
	return p.partitionExtras
}

// lso is the leader's last stable offset, -1 without a leader. Callers
// hold p.mu.
func (p *partition) lso() int64 {
	if l := p.st.LeaderReplica(); l != nil {
		return l.LSO()
	}
	return -1
}

func (p *partition) isPaused(broker int32) bool { return slices.Contains(p.paused, broker) }

// isInternalTopic reports whether name is one of Kafka's internal topics,
// which Metadata flags so that clients leave them out of regex subscriptions.
func isInternalTopic(name string) bool {
	return name == offsetsTopic || name == txnStateTopic || name == shareStateTopic
}

// topicSpec is a validated topic creation request.
type topicSpec struct {
	name       string
	partitions int32
	rf         int16
	assignment [][]int32 // optional explicit replicas per partition
	configs    map[string]string
	id         [16]byte // a restored topic's id; zero: a new one
	goAPI      bool     // from the Go API: fakekafka's own configs too
	// before: the topics a CreateTopics request found, the ones its names
	// may collide with (nil: the topics now).
	before map[string]*topic
}

// legalTopicName follows Kafka's Topic.validate.
func legalTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("Topic name is invalid: the empty string is not allowed")
	case name == "." || name == "..":
		return fmt.Errorf("Topic name is invalid: '%s' is not allowed", name)
	case len(name) > 249:
		return fmt.Errorf("Topic name is invalid: the length of '%s' is longer than the max allowed length 249", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("Topic name is invalid: '%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// sharedReplicationConfig is replicationConfig for every partition of a
// topic to hold (one copy, never modified, instead of one per partition).
func (c *Cluster) sharedReplicationConfig(cfg map[string]string) *replication.Config {
	rc := c.replicationConfig(cfg)
	return &rc
}

// replicationConfig resolves a topic's effective replication settings
// over the current broker defaults.
func (c *Cluster) replicationConfig(cfg map[string]string) replication.Config {
	bs := c.brokerSettings()
	rc := replication.Config{
		MinInsyncReplicas:     bs.minISR,
		ReplicaLagTimeMax:     bs.lagTimeMax,
		UncleanLeaderElection: bs.unclean,
		LegacyMinISR:          c.cfg.LegacyMinISR,
		FlushMessages:         bs.flushMessages,
	}
	if c.cfg.LegacyHWTruncation {
		rc.Truncation = replication.TruncateToHW
	}
	if v, ok := cfg["flush.messages"]; ok {
		rc.FlushMessages, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	}
	if v, ok := cfg["min.insync.replicas"]; ok {
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		rc.MinInsyncReplicas = n
	}
	if v, ok := cfg["replica.lag.time.max.ms"]; ok { // fakekafka's own (config_validate.go)
		rc.ReplicaLagTimeMax = millis(v)
	}
	if v, ok := cfg["unclean.leader.election.enable"]; ok {
		rc.UncleanLeaderElection = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	rc.Segment, rc.Retention, rc.Compaction = logConfig(cfg, bs)
	return rc
}

// validateSpec turns a creation request into a spec or a Kafka error.
func (c *Cluster) validateSpec(s *topicSpec) (*kerr.Error, string) {
	if err := legalTopicName(s.name); err != nil {
		return kerr.InvalidTopicException, err.Error()
	}
	if other := c.collidingTopic(s.before, s.name); other != "" {
		return collisionError(s.name, other)
	}
	if len(s.assignment) > 0 {
		if s.partitions != -1 || s.rf != -1 {
			if s.rf != -1 {
				return kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1."
			}
			return kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1."
		}
		s.partitions = int32(len(s.assignment))
		s.rf = int16(len(s.assignment[0]))
		for i, rs := range s.assignment {
			rf := len(rs)
			if i > 0 {
				rf = len(s.assignment[0])
			}
			if e, msg := c.checkManualAssignment(rs, rf); e != nil {
				return e, msg
			}
		}
	}
	if s.partitions == -1 {
		s.partitions = int32(c.cfg.NumPartitions)
	}
	if s.rf == -1 {
		s.rf = int16(c.cfg.DefaultReplicationFactor)
	}
	if s.partitions <= 0 {
		return kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value."
	}
	if s.partitions > 100000 {
		return kerr.InvalidPartitions, "number of partitions is above fakekafka's limit of 100000"
	}
	if s.rf <= 0 {
		return kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value."
	}
	if live := len(c.placeableBrokers()); len(s.assignment) == 0 && int(s.rf) > live {
		return kerr.InvalidReplicationFactor, unreplicable(int(s.rf), live)
	}
	if e := validateTopicConfigs(s.configs, s.goAPI); e != nil {
		return e.err, *e.msg
	}
	return nil, ""
}

// assign places replicas round-robin over the running brokers (but those
// whose log dir is cordoned, log_dir_cordon.go): partition i is led by the
// i-th of them (mod their number) and followed by the next ones, so leaders
// spread evenly and tests can predict placement.
func (c *Cluster) assign(partitions int32, rf int16) [][]int32 {
	live := c.placeableBrokers()
	n := int32(len(live))
	out := make([][]int32, partitions)
	for i := range partitions {
		rs := make([]int32, rf)
		for j := range int32(rf) {
			rs[j] = live[(i+j)%n]
		}
		out[i] = rs
	}
	return out
}

func (c *Cluster) liveBrokers() []int32 {
	var out []int32
	for _, b := range c.brokers {
		if b.up.Load() {
			out = append(out, b.id)
		}
	}
	return out
}

// createTopic validates and creates a topic. With validateOnly it only
// validates. It returns the topic (nil on error or validate-only).
func (c *Cluster) createTopic(s topicSpec, validateOnly bool) (*topic, *kerr.Error, string) {
	if kerr, msg := c.validateSpec(&s); kerr != nil {
		return nil, kerr, msg
	}
	created := false
	defer func() { // after the unlock below
		if created {
			c.saveMeta()
		}
	}()
	c.topicsMu.Lock()
	defer c.topicsMu.Unlock()
	cur := c.topics.Load()
	if _, ok := cur.byName[s.name]; ok {
		return nil, kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", s.name)
	}
	if s.before == nil {
		if other := c.collidingTopic(cur.byName, s.name); other != "" {
			e, msg := collisionError(s.name, other) // created meanwhile
			return nil, e, msg
		}
	}
	if validateOnly {
		return nil, nil, ""
	}
	assignment := s.assignment
	if len(assignment) == 0 {
		assignment = c.assign(s.partitions, s.rf)
	}
	if s.configs == nil {
		s.configs = map[string]string{}
	}
	t := &topic{name: s.name, id: s.id, c: c}
	if t.id == ([16]byte{}) {
		t.id = newTopicID()
	}
	c.applyTopicSettings(t, s.configs)
	rc := c.sharedReplicationConfig(s.configs)
	now := c.now()
	parts := make([]*partition, 0, len(assignment))
	for i, rs := range assignment {
		parts = append(parts, c.newPartition(t, int32(i), rs, rc, now))
	}
	t.parts.Store(&parts)
	next := &topics{byName: maps.Clone(cur.byName), byID: maps.Clone(cur.byID)}
	next.byName[t.name] = t
	next.byID[t.id] = t
	c.topics.Store(next)
	c.retune()
	c.log.Info("topic created", "topic", t.name, "partitions", len(assignment), "replication_factor", len(assignment[0]))
	c.emit(EventTopicCreated, func(e *Event) {
		e.Topic, e.Configs, e.Detail = t.name, maps.Clone(s.configs), fmt.Sprintf("%d partitions, replication factor %d", len(assignment), len(assignment[0]))
	})
	created = true
	return t, nil, ""
}

// newPartition creates partition index of t on replicas rs. Explicit
// assignments may name stopped brokers: their replicas start offline and
// fenced, and a live one leads if any can.
func (c *Cluster) newPartition(t *topic, index int32, rs []int32, rc *replication.Config, now time.Time) *partition {
	p := &partition{t: t, index: index, st: replication.NewPartitionShared(rs, rc, now), partitionExtras: &idlePartition}
	for _, id := range rs {
		if b := c.broker(id); b != nil && !b.up.Load() {
			p.st.Crash(id, false)
			c.fenceReplica(p, id)
		}
	}
	p.st.TakeChanges() // part of the creation, which is its own event
	c.attachDisk(p)
	return p
}

// applyTopicSettings resolves configs over the broker defaults and
// publishes them as t's settings. It does not touch the partitions.
func (c *Cluster) applyTopicSettings(t *topic, configs map[string]string) {
	bs := c.brokerSettings()
	ts := &topicSettings{
		configs:       configs,
		maxBytes:      bs.messageMaxBytes,
		logAppendTime: topicLogAppendTime(configs, bs),
		lagTimeMax:    c.replicationConfig(configs).ReplicaLagTimeMax,
		flushInterval: c.cfg.FlushInterval,
		compact:       strings.Contains(logValue(configs, bs, "cleanup.policy"), "compact"),
		produce:       resolveProducePolicy(configs, bs),
	}
	if v, ok := configs["flush.ms"]; ok {
		ts.flushInterval = millis(v)
	}
	if v, ok := configs["max.message.bytes"]; ok {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		ts.maxBytes = int32(n)
	}
	t.settings.Store(ts)
	c.retune()
}

// retune lets the periodic ISR, flush and idle-fetch jobs take a shorter
// interval at once after a topic's settings changed or a topic appeared.
func (c *Cluster) retune() {
	if c.isrChecks == nil {
		return // not started yet
	}
	now := c.now()
	c.isrChecks.retune(now)
	c.checkpoints.retune(now)
	for _, f := range c.fetchers {
		f.polls.retune(now)
	}
}

// millis turns a validated millisecond config into a duration, capping
// Kafka's "never" (Long.MAX_VALUE) instead of overflowing.
func millis(v string) time.Duration {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if n > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Millisecond
}

// deleteTopic removes a topic and wakes everything parked on it. It
// reports false if the topic was already gone (a concurrent delete).
func (c *Cluster) deleteTopic(t *topic) bool {
	c.topicsMu.Lock()
	cur := c.topics.Load()
	if cur.byName[t.name] != t {
		c.topicsMu.Unlock()
		return false
	}
	next := &topics{byName: maps.Clone(cur.byName), byID: maps.Clone(cur.byID)}
	delete(next.byName, t.name)
	delete(next.byID, t.id)
	c.topics.Store(next)
	c.topicsMu.Unlock()
	t.deleted.Store(true)
	for _, p := range t.partitions() {
		p.mu.Lock()
		p.wakeWaiters()
		p.mu.Unlock()
	}
	c.removeTopicData(t)
	c.forgetInternalTopic(t.name)
	c.log.Info("topic deleted", "topic", t.name)
	c.emit(EventTopicDeleted, func(e *Event) { e.Topic = t.name })
	c.shareTopicDeleted(t.id) // share_coordinator.go
	return true
}

// autoCreate creates name with the defaults if auto-creation is on; it
// returns the topic (existing or new) or nil.
func (c *Cluster) autoCreate(name string) *topic {
	if t := c.topic(name); t != nil || !*c.cfg.AutoCreateTopics {
		return t
	}
	t, _, _ := c.createTopic(topicSpec{name: name, partitions: -1, rf: -1}, false)
	if t == nil {
		return c.topic(name)
	}
	return t
}
