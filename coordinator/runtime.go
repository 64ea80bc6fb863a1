// Package coordinator is the runtime every coordinator of fakekafka runs on
// (the group coordinator, the transaction coordinator), shaped as Apache
// Kafka 4.x's CoordinatorRuntime: a coordinator keeps its state in an
// internal, replicated, compacted topic; each partition of that topic is
// one shard, owned by the partition's leader; a key (a group id, a
// transactional id) belongs to the shard chosen by its Java hash.
//
// A shard is loaded on the broker that leads its partition, at that
// leader epoch, by replaying the partition's log into a fresh state, and
// is replaced by a fresh load as soon as the leadership moves (a stale
// state is never written to again). There is one write discipline: an
// operation computes records from the state, Write appends them with
// acks=all through the PartitionLog, waits until the HW covers them and
// only then replays them into the state, with the same Replay a load
// uses. A write that fails is not replayed, so it leaves nothing applied.
// Transaction markers on the partition reach the state the same way
// (Marker replays the control batch). Timers (AfterFunc) are bound to the
// load they were armed under: one from an older load never fires into a
// newer state.
//
// The runtime knows nothing of groups or transactions: the state is a type
// parameter that replays batches.
//
// # Lock order
//
// Locks are taken only in this order, and never the other way round:
//
//	caller's state locks (a group's, a transactional id's)
//	  → Shard.loadMu (Acquire, while it loads)
//	    → the PartitionLog's own lock (Load, Append, Leader), released before
//	    → Shard.mu
//
// Shard.mu is a leaf: nothing is called while it is held, neither the
// PartitionLog nor the state. A load's Replay and AfterReplay touch only
// the fresh state nobody else can see yet. Loaded, the Replay of a write
// or of a marker, and timer callbacks run with no runtime lock held, so a
// state takes its own locks there; a caller therefore must not hold the
// lock Replay takes (a group's g.mu) while it calls Write or Marker, though
// it may hold a coarser one (a group's write lock). No runtime lock is
// held across the replication wait of a Write: writes to different keys of
// one shard do not serialise; a state that needs its writes of one key in
// order serialises them itself.
package coordinator

import (
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// PartitionLog is one partition of a coordinator's internal topic, as the
// broker that hosts it implements it.
type PartitionLog interface {
	// Leader is the partition's leader and leader epoch as broker sees
	// them (-1: the controller's view); leader -1 when there is none.
	Leader(broker int32) (leader, epoch int32)
	// Load is Leader plus, when broker leads, a copy of its replica's log
	// (the batches to replay), read at one instant.
	Load(broker int32) (leader, epoch int32, batches []*replication.Batch)
	// Append appends b as broker (which must lead) with acks=all and waits
	// up to timeout for the HW to cover it. It answers the leader epoch of
	// the append and the partition's error code (REQUEST_TIMED_OUT after
	// timeout).
	Append(broker int32, b *replication.Batch, timeout time.Duration) (epoch int32, code int16)
	// Index is the partition's number.
	Index() int32
}

// Record is one record of an internal topic (protocol's, so that a
// replayed batch needs no copy); a coordinator uses its Key and Value, a
// nil Value being a tombstone.
type Record = protocol.Record

// Batch is one committed batch as a state replays it: data records (of a
// transaction of ProducerID when Transactional), or a transaction marker
// (Control, with Commit saying which).
type Batch struct {
	Offset        int64 // base offset; -1 for a live write's replay
	ProducerID    int64
	ProducerEpoch int16
	Transactional bool
	Control       bool
	Commit        bool
	Records       []Record
	// Live is what the writer handed WriteLive with the records, nil when
	// the batch comes from the log: a state may take it rather than decode
	// the records it was built from again.
	Live any
}

// State is a shard's coordinator state: what its log replays into.
type State interface {
	Replay(b Batch)
}

// Epoch names one load of a shard: the broker it was loaded on and the
// partition's leader epoch then.
type Epoch struct {
	Leader, Epoch int32
}

// Config is a coordinator's runtime.
type Config[S State] struct {
	// Topic is the internal topic's name (for logs).
	Topic string
	// Open creates the internal topic if needed and returns its partitions
	// in order; it is called once, on first use.
	Open func() ([]PartitionLog, error)
	// NewState returns the empty state of shard index, for a load at e.
	NewState func(index int32, e Epoch) S
	// AfterReplay, if set, runs when a load has replayed the log, before
	// the state is published (under the load lock, on a state nobody else
	// sees yet): a state drops what the log left empty there.
	AfterReplay func(S)
	// Loaded, if set, runs after every load with no lock held (the
	// transaction coordinator finishes prepared transactions there).
	Loaded func(sh *Shard[S], e Epoch, st S)
	// Alive says whether a broker is up: a coordinator on a stopped
	// broker is not available.
	Alive func(broker int32) bool
	// Clock times writes' timestamps and the shards' timers.
	Clock *clock.Clock
	// WriteTimeout bounds a Write's wait for replication.
	WriteTimeout time.Duration
	Log          *slog.Logger
}

// Runtime is one coordinator's shards.
type Runtime[S State] struct {
	cfg    Config[S]
	openMu sync.Mutex // serialises opening
	opened atomic.Pointer[opened[S]]
}

// opened is the result of opening the topic: its shards, or why not.
type opened[S State] struct {
	shards []*Shard[S]
	err    error
}

// New returns a runtime whose topic is created on first use.
func New[S State](cfg Config[S]) *Runtime[S] {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	return &Runtime[S]{cfg: cfg}
}

// Shards opens the internal topic on first use (after Forget, on the next
// use) and returns its shards.
func (r *Runtime[S]) Shards() ([]*Shard[S], error) {
	if o := r.opened.Load(); o != nil {
		return o.shards, o.err
	}
	r.openMu.Lock()
	defer r.openMu.Unlock()
	if o := r.opened.Load(); o != nil {
		return o.shards, o.err
	}
	o := &opened[S]{}
	logs, err := r.cfg.Open()
	switch {
	case err != nil:
		o.err = err
	case len(logs) == 0:
		o.err = fmt.Errorf("%s has no partitions", r.cfg.Topic)
	default:
		for _, l := range logs {
			o.shards = append(o.shards, &Shard[S]{rt: r, log: l, index: l.Index(), at: Epoch{-1, -1}})
		}
	}
	r.opened.Store(o)
	return o.shards, o.err
}

// Forget unloads every shard and forgets the topic, as Kafka's coordinator
// resigns the partitions of its internal topic when the topic is deleted:
// a state or timer from before acts no more, and the next use opens the
// topic again, creating it.
func (r *Runtime[S]) Forget() {
	r.openMu.Lock()
	o := r.opened.Swap(nil)
	r.openMu.Unlock()
	if o == nil {
		return
	}
	for _, s := range o.shards {
		s.loadMu.Lock()
		s.mu.Lock()
		var zero S
		s.at, s.state, s.loaded = Epoch{-1, -1}, zero, false
		s.mu.Unlock()
		s.loadMu.Unlock()
	}
}

// ShardFor returns the shard that owns key.
func (r *Runtime[S]) ShardFor(key string) (*Shard[S], error) {
	ss, err := r.Shards()
	if err != nil {
		return nil, err
	}
	return ss[Partition(key, len(ss))], nil
}

// Shard returns shard index, nil when there is none (or the topic could
// not be opened).
func (r *Runtime[S]) Shard(index int32) *Shard[S] {
	ss, err := r.Shards()
	if err != nil || index < 0 || int(index) >= len(ss) {
		return nil
	}
	return ss[index]
}

// Coordinator is the broker coordinating key, or -1 with the error a
// FindCoordinator answer carries.
func (r *Runtime[S]) Coordinator(key string) (int32, int16) {
	s, err := r.ShardFor(key)
	if err != nil {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return s.Coordinator()
}

// Shard is one partition of the internal topic and the state loaded from
// it.
type Shard[S State] struct {
	rt     *Runtime[S]
	log    PartitionLog
	index  int32
	loadMu sync.Mutex // serialises loads

	mu     sync.Mutex // a leaf: guards at, state and loaded
	at     Epoch
	state  S
	loaded bool
}

// Index is the shard's partition.
func (s *Shard[S]) Index() int32 { return s.index }

// Coordinator is the broker leading the shard's partition, or -1 with
// COORDINATOR_NOT_AVAILABLE when that broker is down.
func (s *Shard[S]) Coordinator() (int32, int16) {
	leader, _ := s.log.Leader(-1)
	if leader < 0 || s.rt.cfg.Alive != nil && !s.rt.cfg.Alive(leader) {
		return -1, kerr.CoordinatorNotAvailable.Code
	}
	return leader, 0
}

// Acquire returns the shard's state as broker coordinates it, loading it
// from broker's log first when broker leads the partition at an epoch it
// was not loaded at. It answers NOT_COORDINATOR when broker does not lead
// and COORDINATOR_NOT_AVAILABLE when nobody does.
func (s *Shard[S]) Acquire(broker int32) (S, Epoch, int16) {
	var zero S
	leader, epoch := s.log.Leader(broker)
	switch {
	case leader < 0:
		return zero, Epoch{}, kerr.CoordinatorNotAvailable.Code
	case leader != broker:
		return zero, Epoch{}, kerr.NotCoordinator.Code
	}
	if st, ok := s.loadedAt(Epoch{leader, epoch}); ok {
		return st, Epoch{leader, epoch}, 0
	}
	return s.load(broker)
}

// loadedAt returns the state when it is loaded at e.
func (s *Shard[S]) loadedAt(e Epoch) (S, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.loaded && s.at == e
}

// load replays broker's log into a fresh state, unless another load got
// there first.
func (s *Shard[S]) load(broker int32) (S, Epoch, int16) {
	var zero S
	s.loadMu.Lock()
	leader, epoch, batches := s.log.Load(broker)
	e := Epoch{leader, epoch}
	switch {
	case leader < 0:
		s.loadMu.Unlock()
		return zero, Epoch{}, kerr.CoordinatorNotAvailable.Code
	case leader != broker:
		s.loadMu.Unlock()
		return zero, Epoch{}, kerr.NotCoordinator.Code
	}
	if st, ok := s.loadedAt(e); ok {
		s.loadMu.Unlock()
		return st, e, 0
	}
	st := s.rt.cfg.NewState(s.index, e)
	for _, b := range batches {
		rb, err := replayable(b)
		if err != nil {
			s.rt.cfg.Log.Warn("skipping unreadable batch in "+s.rt.cfg.Topic, "partition", s.index, "offset", b.BaseOffset, "error", err)
			continue
		}
		st.Replay(rb)
	}
	if s.rt.cfg.AfterReplay != nil {
		s.rt.cfg.AfterReplay(st)
	}
	s.mu.Lock()
	s.at, s.state, s.loaded = e, st, true
	s.mu.Unlock()
	s.loadMu.Unlock()
	if s.rt.cfg.Loaded != nil {
		s.rt.cfg.Loaded(s, e, st)
	}
	return st, e, 0
}

// replayable is a stored batch as Replay takes it.
func replayable(b *replication.Batch) (Batch, error) {
	rb := Batch{Offset: b.BaseOffset, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
		Transactional: b.Transactional, Control: b.Control, Commit: b.Commit}
	if b.Control {
		return rb, nil
	}
	recs, err := protocol.Records(b.Raw)
	rb.Records = recs
	return rb, err
}

// LoadedAt says whether the shard is (still) loaded at e, whatever the
// partition's leadership is now.
func (s *Shard[S]) LoadedAt(e Epoch) bool {
	_, ok := s.loadedAt(e)
	return ok
}

// Current says whether the shard is still loaded at e and its partition
// still led at e: a state from e may act.
func (s *Shard[S]) Current(e Epoch) bool {
	s.mu.Lock()
	ok := s.loaded && s.at == e
	s.mu.Unlock()
	if !ok {
		return false
	}
	leader, epoch := s.log.Leader(e.Leader)
	return leader == e.Leader && epoch == e.Epoch
}

// Producer names the transactional producer of a write; NoProducer for an
// ordinary one.
type Producer struct {
	ID    int64
	Epoch int16
}

// NoProducer is a write outside any transaction.
var NoProducer = Producer{ID: -1, Epoch: -1}

// Write appends recs to the shard as the coordinator loaded at e, with
// acks=all, waits until they are committed and replays them into the state
// loaded at e. A write of a transactional producer is a transactional
// batch, replayed as pending until its marker. It answers the error Kafka's
// coordinators answer: NOT_COORDINATOR when the shard moved (the records
// are then not replayed: the next load reads them from the log),
// COORDINATOR_NOT_AVAILABLE when replication failed or timed out, and
// PRODUCER_FENCED for a stale producer epoch.
func (s *Shard[S]) Write(e Epoch, pr Producer, recs []Record) int16 {
	return s.WriteLive(e, pr, recs, nil)
}

// WriteLive is Write whose replay also carries live, the writer's own
// form of recs (Batch.Live).
func (s *Shard[S]) WriteLive(e Epoch, pr Producer, recs []Record, live any) int16 {
	cfg := &s.rt.cfg
	if _, ok := s.loadedAt(e); !ok {
		return kerr.NotCoordinator.Code // a stale state is never written again
	}
	now := cfg.Clock.Now()
	hdr := protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: now.UnixMilli()}
	txn := pr.ID >= 0
	if txn {
		hdr.ProducerID, hdr.ProducerEpoch, hdr.Attributes = pr.ID, pr.Epoch, protocol.AttrTransactional
	}
	raw, err := protocol.BuildBatch(hdr, protocol.CodecNone, recs)
	if err != nil {
		return kerr.UnknownServerError.Code
	}
	h, _ := protocol.ParseBatchHeader(raw)
	b := &replication.Batch{Raw: raw, LastOffset: int64(h.LastOffsetDelta), MaxTimestamp: h.MaxTimestamp, ProducerID: hdr.ProducerID,
		ProducerEpoch: hdr.ProducerEpoch, BaseSequence: -1, NumRecords: h.NumRecords, Transactional: txn}
	epoch, code := s.log.Append(e.Leader, b, cfg.WriteTimeout)
	if code != 0 {
		if code == kerr.InvalidProducerEpoch.Code {
			return kerr.ProducerFenced.Code
		}
		return WriteError(code)
	}
	st, ok := s.loadedAt(e)
	if !ok || epoch != e.Epoch {
		return kerr.NotCoordinator.Code
	}
	st.Replay(Batch{Offset: -1, ProducerID: hdr.ProducerID, ProducerEpoch: hdr.ProducerEpoch, Transactional: txn, Records: recs, Live: live})
	return 0
}

// Marker replays a transaction marker that was committed on the shard's
// partition into the loaded state (a state loaded later replays it from
// the log).
func (s *Shard[S]) Marker(producerID int64, epoch int16, commit bool) {
	s.mu.Lock()
	st, ok := s.state, s.loaded
	s.mu.Unlock()
	if ok {
		st.Replay(Batch{Offset: -1, ProducerID: producerID, ProducerEpoch: epoch, Transactional: true, Control: true, Commit: commit})
	}
}

// Loaded is the state as last loaded and the load it came from, whatever
// the partition's leadership is now; ok is false before the first load.
func (s *Shard[S]) Loaded() (st S, e Epoch, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.at, s.loaded
}

// WriteError maps the error of a failed append to what Kafka's
// coordinators answer.
func WriteError(code int16) int16 {
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	case kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code, kerr.UnknownTopicOrPartition.Code:
		return kerr.CoordinatorNotAvailable.Code
	}
	return code
}

// JavaHash is Java's String.hashCode, with which Kafka places a key.
func JavaHash(s string) int32 {
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

// Partition is the shard (of n) that owns key, as Kafka's partitionFor
// picks it.
func Partition(key string, n int) int {
	// Kafka's Utils.abs, not toPositive: -h for a negative hash, 0 for MinInt32.
	h := JavaHash(key)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return int(h) % n
}
