package server

// The transaction coordinator, shaped like the group coordinator
// (coordinator.go): every transactional id belongs to one partition of the
// internal, replicated __transaction_state topic (by the Java hash of the
// id), that partition's leader is its coordinator, and every transition of
// its state is a record in that partition's log, written with acks=all
// before it takes effect. The rules themselves live in package transaction;
// this file loads, stores and drives them.
//
// The coordinator epoch is the partition's leader epoch when the shard was
// loaded. A new leader rebuilds the shard from its own log as soon as it
// takes over (changed() wakes the coordinator loop) and finishes every
// PrepareCommit/PrepareAbort by writing its markers again.

import (
	"encoding/json"
	"github.com/fakekafka/fakekafka/clock"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStateTopic is Kafka's internal topic for transaction state.
const txnStateTopic = "__transaction_state"

// txnWriteTimeout bounds a coordinator's wait for its state to replicate
// (Kafka uses the request timeout; the client retries on
// COORDINATOR_NOT_AVAILABLE).
const txnWriteTimeout = 5 * time.Second

// txnCoordinators holds one shard per __transaction_state partition,
// created with the topic on first use, and the marker controls.
type txnCoordinators struct {
	once   sync.Once
	err    error
	shards []*txnShard

	wake chan struct{} // a __transaction_state leadership moved

	mu      sync.Mutex
	held    map[topicPartition]bool
	release chan struct{} // closed when holds change
	// crashBeforeMarkers crashes the coordinator right after its next
	// PrepareCommit/PrepareAbort is durable, before any marker is sent.
	crashBeforeMarkers bool
}

// txnShard is the coordinator state of one __transaction_state partition
// as loaded by its current leader.
type txnShard struct {
	c *Cluster
	p *partition

	mu           sync.Mutex
	loadedLeader int32
	loadedEpoch  int32
	txns         map[string]*txnEntry
}

// txnEntry is one transactional id. mu guards md and pending; a transition
// sets pending while it is written, and every other request meanwhile gets
// CONCURRENT_TRANSACTIONS, as Kafka's pendingState does.
type txnEntry struct {
	id         string
	s          *txnShard
	coordEpoch int32 // the shard's leader epoch when this entry was loaded

	mu      sync.Mutex
	exists  bool // md has been written (false for a placeholder)
	md      transaction.Metadata
	pending bool
	changed chan struct{} // closed when a transition finishes; nil until asked for
}

// changes returns a channel closed when the entry's next transition
// finishes (or fails), for callers that retry on CONCURRENT_TRANSACTIONS.
func (e *txnEntry) changes() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.changed
}

// finished wakes the waiters of changes. Callers hold e.mu.
func (e *txnEntry) finished() {
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

// txnRecordKey is the key of a __transaction_state record; its value is the
// JSON of transaction.Metadata, or null once the id expired.
type txnRecordKey struct {
	TransactionalID string `json:"transactional_id"`
}

// txnShards creates __transaction_state on first use and returns its
// shards.
func (c *Cluster) txnShards() ([]*txnShard, error) {
	co := &c.txn
	co.once.Do(func() {
		var t *topic
		t, co.err = c.internalTopic(txnStateTopic, c.cfg.TransactionStatePartitions, c.cfg.TransactionStateReplicationFactor,
			map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "2", "segment.bytes": "104857600"}) // transaction.state.log.segment.bytes
		if t == nil {
			return
		}
		for _, p := range t.partitions() {
			co.shards = append(co.shards, &txnShard{c: c, p: p, loadedLeader: -1, loadedEpoch: -1})
		}
	})
	return co.shards, co.err
}

// txnShardFor returns the shard that owns a transactional id.
func (c *Cluster) txnShardFor(id string) (*txnShard, error) {
	ss, err := c.txnShards()
	if err != nil {
		return nil, err
	}
	return ss[coordinatorShard(id, len(ss))], nil
}

// txnCoordinatorOf returns the broker coordinating a transactional id, or
// -1 with the FindCoordinator error.
func (c *Cluster) txnCoordinatorOf(id string) (int32, int16) {
	s, err := c.txnShardFor(id)
	if err != nil {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return c.coordinatorLeader(s.p)
}

// txnEntry returns id's entry as coordinated by broker, loading the shard
// if leadership moved since it was last loaded. With create, an unknown id
// gets a placeholder (exists false); without, it is nil and no error.
func (c *Cluster) txnEntry(broker int32, id string, create bool) (*txnEntry, int16) {
	s, err := c.txnShardFor(id)
	if err != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	if code := s.ensureLoaded(broker); code != 0 {
		return nil, code
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.txns[id]
	if e == nil && create {
		e = &txnEntry{id: id, s: s, coordEpoch: s.loadedEpoch}
		s.txns[id] = e
	}
	return e, 0
}

// ensureLoaded makes sure broker leads the shard's partition and has loaded
// it at the current leader epoch. A fresh load finishes the transactions
// the previous coordinator left prepared.
func (s *txnShard) ensureLoaded(broker int32) int16 {
	s.p.mu.Lock()
	leader, epoch, _ := s.p.st.View(broker)
	var batches []*replication.Batch
	s.mu.Lock()
	stale := s.loadedLeader != leader || s.loadedEpoch != epoch
	s.mu.Unlock()
	if leader == broker && stale {
		batches = append(batches, s.p.st.Replica(broker).Log().Batches()...)
	}
	s.p.mu.Unlock()
	switch {
	case leader < 0:
		return kerr.CoordinatorNotAvailable.Code
	case leader != broker:
		return kerr.NotCoordinator.Code
	case !stale:
		return 0
	}
	s.mu.Lock()
	if s.loadedLeader == leader && s.loadedEpoch == epoch {
		s.mu.Unlock()
		return 0 // someone else loaded it meanwhile
	}
	s.load(batches, epoch)
	s.loadedLeader, s.loadedEpoch = leader, epoch
	var prepared []*txnEntry
	for _, e := range s.txns {
		if _, ok := e.md.State.Completed(); ok {
			prepared = append(prepared, e)
		}
	}
	s.mu.Unlock()
	for _, e := range prepared {
		s.c.startMarkers(broker, e, e.md)
	}
	return 0
}

// load rebuilds every transactional id from the leader's log (Kafka's
// loadTransactionsForTxnTopicPartition): the last record per id wins, a
// null value removes it. Callers hold s.mu.
func (s *txnShard) load(batches []*replication.Batch, epoch int32) {
	s.txns = map[string]*txnEntry{}
	for _, b := range batches {
		if b.Control {
			continue
		}
		recs, err := protocol.Records(b.Raw)
		if err != nil {
			s.c.log.Warn("skipping unreadable batch in "+txnStateTopic, "partition", s.p.index, "offset", b.BaseOffset, "error", err)
			continue
		}
		for _, r := range recs {
			var k txnRecordKey
			if json.Unmarshal(r.Key, &k) != nil || k.TransactionalID == "" {
				continue
			}
			var md transaction.Metadata
			if r.Value == nil || json.Unmarshal(r.Value, &md) != nil {
				delete(s.txns, k.TransactionalID)
				continue
			}
			s.txns[k.TransactionalID] = &txnEntry{id: k.TransactionalID, s: s, coordEpoch: epoch, exists: true, md: md}
		}
	}
	s.c.log.Info("transaction coordinator loaded", "partition", s.p.index, "epoch", epoch, "transactions", len(s.txns))
}

// current reports whether the entry still belongs to the loaded shard, so
// a stale coordinator's goroutines stop.
func (e *txnEntry) current() bool {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.loadedEpoch == e.coordEpoch && e.s.txns[e.id] == e
}

// apply runs a rule on the entry and, if it decides a transition, writes
// it as broker and then lets it take effect. It returns the metadata in
// force afterwards and the code to answer. A Prepare* transition starts
// its markers. cause (TxnCause...) labels the transition's events.
func (e *txnEntry) apply(broker int32, cause string, rule func(cur *transaction.Metadata, pending bool) transaction.Decision) (transaction.Metadata, int16) {
	e.mu.Lock()
	var cur *transaction.Metadata
	if e.exists {
		cur = &e.md
	}
	// pending keeps prev in force until the transition below takes effect.
	prev, existed := e.md, e.exists
	d := rule(cur, e.pending)
	if d.Next == nil {
		md := e.md
		e.mu.Unlock()
		return md, d.Code
	}
	e.pending = true
	e.mu.Unlock()

	code := e.write(broker, d.Next)
	e.mu.Lock()
	e.pending = false
	if code == 0 {
		e.md, e.exists = *d.Next, true
		// Reported before anyone waiting can make the next transition,
		// so the events keep the transitions' order.
		e.s.c.emitTxnTransition(prev, existed, e.md, cause)
	}
	md := e.md
	e.finished()
	e.mu.Unlock()
	if code != 0 {
		return md, code
	}
	if _, ok := md.State.Completed(); ok {
		e.s.c.afterPrepare(broker, e, md)
	}
	return md, d.Code
}

// write appends one transition to the shard's partition with acks=all.
// A nil md writes the tombstone of an expired id.
func (e *txnEntry) write(broker int32, md *transaction.Metadata) int16 {
	if !e.current() {
		return kerr.NotCoordinator.Code
	}
	c := e.s.c
	key, _ := json.Marshal(txnRecordKey{e.id})
	rec := protocol.Record{Key: key}
	if md != nil {
		rec.Value, _ = json.Marshal(md)
	}
	now := c.now()
	raw, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: now.UnixMilli()}, protocol.CodecNone, []protocol.Record{rec})
	if err != nil {
		return kerr.UnknownServerError.Code
	}
	h, _ := protocol.ParseBatchHeader(raw)
	b := &replication.Batch{Raw: raw, LastOffset: int64(h.LastOffsetDelta), MaxTimestamp: h.MaxTimestamp, ProducerID: -1, BaseSequence: -1, NumRecords: h.NumRecords}
	epoch, code := c.appendInternal(e.s.p, broker, b, txnWriteTimeout)
	if code == 0 && epoch != e.coordEpoch {
		return kerr.NotCoordinator.Code
	}
	return coordinatorError(code)
}

// afterPrepare starts the markers of a durable Prepare* state, unless the
// coordinator is to crash right here.
func (c *Cluster) afterPrepare(broker int32, e *txnEntry, md transaction.Metadata) {
	c.txn.mu.Lock()
	crash := c.txn.crashBeforeMarkers
	c.txn.crashBeforeMarkers = false
	c.txn.mu.Unlock()
	if crash {
		c.log.Info("crashing transaction coordinator before markers", "broker", broker, "transactional_id", e.id, "state", md.State)
		if err := c.StopBroker(broker, StopCrash); err != nil {
			c.log.Warn("crashing transaction coordinator", "broker", broker, "error", err)
		}
		return
	}
	c.startMarkers(broker, e, md)
}

// txnLoop is the coordinators' periodic work: load shards whose leadership
// moved (finishing their prepared transactions), abort transactions past
// their timeout and forget expired ids, every
// transaction.abort.timed.out.transaction.cleanup.interval.ms or when a
// __transaction_state leader changes.
// It runs on t, a timer on the cluster's clock (so that advancing the clock
// past a transaction's timeout lets the next check abort it), made before
// the goroutine starts so that the cluster's timers are all armed once
// NewCluster returns.
func (c *Cluster) txnLoop(t *clock.Timer) {
	defer c.wg.Done()
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			t.Reset(c.cfg.TransactionAbortTimedOutInterval)
		case <-c.txn.wake:
		}
		if c.topic(txnStateTopic) == nil {
			continue
		}
		shards, err := c.txnShards()
		if err != nil {
			continue
		}
		for _, s := range shards {
			s.p.mu.Lock()
			leader := s.p.st.Leader()
			s.p.mu.Unlock()
			if b := c.broker(leader); b == nil || !b.up.Load() {
				continue
			}
			if s.ensureLoaded(leader) == 0 {
				s.expire(leader)
			}
		}
	}
}

// expire aborts the shard's timed-out transactions and removes ids idle
// past transactional.id.expiration.ms.
func (s *txnShard) expire(broker int32) {
	s.mu.Lock()
	entries := make([]*txnEntry, 0, len(s.txns))
	for _, e := range s.txns {
		entries = append(entries, e)
	}
	s.mu.Unlock()
	nowMs := s.c.now().UnixMilli()
	for _, e := range entries {
		e.apply(broker, TxnCauseTimeout, func(cur *transaction.Metadata, pending bool) transaction.Decision {
			if cur == nil || pending || !transaction.TimedOut(*cur, nowMs) {
				return transaction.Decision{}
			}
			s.c.log.Info("aborting timed-out transaction", "transactional_id", e.id, "producer_id", cur.ProducerID, "epoch", cur.ProducerEpoch)
			return transaction.Abort(*cur, nowMs)
		})
		e.mu.Lock()
		expired := e.exists && !e.pending && transaction.Expired(e.md, nowMs, s.c.cfg.TransactionalIDExpiration.Milliseconds())
		md := e.md
		if expired {
			e.pending = true
		}
		e.mu.Unlock()
		if expired {
			code := e.write(broker, nil)
			s.mu.Lock()
			removed := code == 0 && s.txns[e.id] == e
			if removed {
				delete(s.txns, e.id)
			}
			s.mu.Unlock()
			if removed {
				s.c.emitTxnExpired(md)
			}
			e.mu.Lock()
			e.pending = false
			e.finished()
			e.mu.Unlock()
		}
	}
}

// txnStateLeaderListener wakes the transaction coordinator's loop when a
// partition of __transaction_state gets a new leader epoch: the new leader
// loads and finishes prepared transactions.
type txnStateLeaderListener struct{ c *Cluster }

func (l *txnStateLeaderListener) partitionChanged(p *partition, _ partitionChange) {
	if p.t.name == txnStateTopic {
		l.c.wakeTxnLoop()
	}
}

// wakeTxnLoop nudges the coordinator loop (a leadership change of a
// __transaction_state partition).
func (c *Cluster) wakeTxnLoop() {
	select {
	case c.txn.wake <- struct{}{}:
	default:
	}
}

// loadedLeaderID is the broker the shard is loaded on.
func (s *txnShard) loadedLeaderID() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadedLeader
}

// txnVersion2 reports whether transaction.version 2 is finalized, so
// clients that ask for it (EndTxn v5, Produce v12, TxnOffsetCommit v5) run
// KIP-890's rules.
func (c *Cluster) txnVersion2() bool { return c.cfg.TransactionVersion >= 2 }

// apiVersions is protocol's ApiVersions answer plus the features this
// cluster finalizes (v3+): transaction.version.
func (c *Cluster) apiVersions(version int16) *kmsg.ApiVersionsResponse {
	resp := protocol.ApiVersionsResponse(version)
	if resp.Version < 3 || resp.ErrorCode != 0 || c.cfg.TransactionVersion < 0 {
		return resp
	}
	level := int16(c.cfg.TransactionVersion)
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	ff := kmsg.NewApiVersionsResponseFinalizedFeature()
	ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", level, level
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	resp.FinalizedFeaturesEpoch = 1
	return resp
}
