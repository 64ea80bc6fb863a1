package group

import (
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/coordinator/coordinatortest"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shardHost is a test broker: a manual clock, the events and the offsets
// the chaos checker would learn.
type shardHost struct {
	rt        *coordinator.Runtime[*Shard]
	clk       *clock.Clock
	log       *coordinatortest.MemLog
	wg        sync.WaitGroup
	closing   chan struct{}
	closeOnce sync.Once
	policy    MigrationPolicy
	topics    fakeTopics

	mu        sync.Mutex
	events    []Event
	committed map[string][]CoordinatorRecord
}

const sessionTimeout = 45 * time.Second

func newShardHost() *shardHost {
	h := &shardHost{clk: clock.NewManual(time.Unix(1_000_000, 0)), log: &coordinatortest.MemLog{Lead: 1, Epoch: 1},
		closing: make(chan struct{}), committed: map[string][]CoordinatorRecord{}}
	h.rt = coordinator.New(coordinator.Config[*Shard]{
		Topic:        "__consumer_offsets",
		Open:         func() ([]coordinator.PartitionLog, error) { return []coordinator.PartitionLog{h.log}, nil },
		NewState:     func(i int32, e coordinator.Epoch) *Shard { return NewShard(h, i, e) },
		AfterReplay:  (*Shard).Loaded,
		Alive:        func(int32) bool { return true },
		Clock:        h.clk,
		WriteTimeout: time.Second,
	})
	return h
}

func (h *shardHost) Shard(i int32) *coordinator.Shard[*Shard] { return h.rt.Shard(i) }
func (h *shardHost) Emit(_ *Group, ev Event)                  { h.EmitConsumer(nil, []Event{ev}) }
func (h *shardHost) EmitConsumer(_ *Group, evs []Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, evs...)
}
func (h *shardHost) Now() time.Time                       { return h.clk.Now() }
func (h *shardHost) InitialRebalanceDelay() time.Duration { return 0 }
func (h *shardHost) GroupConfig(string) Config {
	gc := DefaultConfig()
	gc.ConsumerSessionTimeout = sessionTimeout
	gc.ShareSessionTimeout = sessionTimeout
	return gc
}
func (h *shardHost) MigrationPolicy() MigrationPolicy { return h.policy }
func (h *shardHost) Log() *slog.Logger                { return slog.New(slog.DiscardHandler) }
func (h *shardHost) Closing() <-chan struct{}         { return h.closing }
func (h *shardHost) Recording() bool                  { return true }
func (h *shardHost) Topics() Topics {
	if h.topics != nil {
		return h.topics
	}
	return fakeTopics{"t": 2}
}
func (h *shardHost) Go(f func()) bool {
	select {
	case <-h.closing:
		return false
	default:
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}
func (h *shardHost) Committed(group string, recs []CoordinatorRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.committed[group] = append(h.committed[group], recs...)
}

// close ends the watchers and waits for every goroutine the groups ran.
func (h *shardHost) close() {
	h.closeOnce.Do(func() { close(h.closing) })
	h.wg.Wait()
}

// load acquires the shard as broker.
func (h *shardHost) load(t *testing.T, broker int32) *Shard {
	t.Helper()
	s, _, code := h.rt.Shard(0).Acquire(broker)
	if code != 0 {
		t.Fatalf("acquire as %d: %v", broker, kerr.ErrorForCode(code))
	}
	return s
}

func offsetRec(group string, p int32, off int64) CoordinatorRecord {
	return CoordinatorRecord{Key: RecordKey{Group: group, Topic: "t", Partition: p}, Value: Offset{Offset: off, LeaderEpoch: -1}}
}

// A write takes effect by its replay once committed; a new leader's load
// replays the same records into the same state, and forgets groups the
// log left empty.
func TestShardWriteReplayAndLoad(t *testing.T) {
	h := newShardHost()
	defer h.close()
	s := h.load(t, 1)
	g := s.Group("g", true)
	if code := g.Write([]CoordinatorRecord{offsetRec("g", 0, 5)}); code != 0 || g.Committed[tp0].Offset != 5 {
		t.Fatalf("write: %v %+v", kerr.ErrorForCode(code), g.Committed)
	}
	if got := h.committed["g"]; len(got) != 1 || got[0].Value.(Offset).Offset != 5 {
		t.Fatalf("chaos checker learnt %+v", got)
	}
	md := Meta{ProtocolType: "consumer", Protocol: "range", Generation: 3, Leader: "m1",
		Members: []MemberMeta{{ID: "m1", ClientID: "c", ClientHost: "/h", SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 30_000}}}
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: md}); code != 0 || g.MetaRecord == nil {
		t.Fatalf("store meta: %v", kerr.ErrorForCode(code))
	}
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: Meta{}}); code != 0 {
		t.Fatalf("an older snapshot: %v", kerr.ErrorForCode(code))
	}
	h2 := s.Group("gone", true)
	if code := h2.Write([]CoordinatorRecord{offsetRec("gone", 0, 1), {Key: RecordKey{Group: "gone", Topic: "t"}}}); code != 0 {
		t.Fatalf("write gone: %v", kerr.ErrorForCode(code))
	}

	h.log.Elect(2)
	if g.Current() {
		t.Fatal("the old load is still current")
	}
	if code := g.StoreMeta(MetaSnapshot{Seq: 2, Meta: md}); code != kerr.NotCoordinator.Code {
		t.Fatalf("a stale copy writes: %v", kerr.ErrorForCode(code))
	}
	s2 := h.load(t, 2)
	if s2.Group("gone", false) != nil {
		t.Fatal("a group the log left empty was loaded")
	}
	g2 := s2.Group("g", false)
	if g2 == nil || g2.Committed[tp0].Offset != 5 || len(s2.List()) != 1 {
		t.Fatalf("loaded %+v", g2)
	}
	g2.Mu.Lock()
	if !g2.HasClassicMembers() || g2.Generation != 3 || g2.Leader != "m1" || g2.State != Stable {
		t.Fatalf("restored gen %d leader %q state %s", g2.Generation, g2.Leader, g2.State)
	}
	if code := g2.CheckCommit("m1", 3, nil); code != 0 {
		t.Fatalf("commit check: %v", kerr.ErrorForCode(code))
	}
	g2.Mu.Unlock()
	s2.Forget(g)
	s2.Forget(g2)
	if s2.Group("g", false) != nil {
		t.Fatal("forgotten group still held")
	}
}

// A failed write leaves nothing applied and answers the error Kafka maps
// it to; a later snapshot of the same sequence may still be written.
func TestShardFailedWriteAppliesNothing(t *testing.T) {
	h := newShardHost()
	defer h.close()
	g := h.load(t, 1).Group("g", true)
	h.log.Fail = kerr.NotEnoughReplicas.Code
	if code := g.Write([]CoordinatorRecord{offsetRec("g", 0, 5)}); code != kerr.CoordinatorNotAvailable.Code || len(g.Committed) != 0 {
		t.Fatalf("write: %v %+v", kerr.ErrorForCode(code), g.Committed)
	}
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: Meta{Generation: 1}}); code != kerr.CoordinatorNotAvailable.Code || g.MetaRecord != nil {
		t.Fatalf("store meta: %v %s", kerr.ErrorForCode(code), g.MetaRecord)
	}
	h.log.Fail = 0
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: Meta{Generation: 1}}); code != 0 || g.MetaRecord == nil {
		t.Fatalf("retry: %v", kerr.ErrorForCode(code))
	}
	if len(h.committed) != 0 {
		t.Fatalf("chaos checker learnt %+v", h.committed)
	}
}

// Transactional offsets are pending until their producer's marker, live
// (Marker) or replayed from the log by a load.
func TestShardTxnOffsets(t *testing.T) {
	h := newShardHost()
	defer h.close()
	s := h.load(t, 1)
	g := s.Group("g", true)
	if code := g.WriteAs([]CoordinatorRecord{offsetRec("g", 0, 7)}, coordinator.Producer{ID: 9}); code != 0 {
		t.Fatalf("txn write: %v", kerr.ErrorForCode(code))
	}
	if code := g.WriteAs([]CoordinatorRecord{offsetRec("g", 1, 8)}, coordinator.Producer{ID: 10}); code != 0 {
		t.Fatalf("txn write: %v", kerr.ErrorForCode(code))
	}
	if len(g.Committed) != 0 || g.Pending[9][tp0].Offset != 7 {
		t.Fatalf("pending %+v committed %+v", g.Pending, g.Committed)
	}
	h.log.Marker(9, true)
	h.rt.Shard(0).Marker(9, 0, true)
	h.log.Marker(10, false)
	h.rt.Shard(0).Marker(10, 0, false)
	if len(g.Committed) != 1 || g.Committed[tp0].Offset != 7 || len(g.Pending) != 0 {
		t.Fatalf("after markers: committed %+v pending %+v", g.Committed, g.Pending)
	}
	if got := h.committed["g"]; len(got) != 1 || got[0].Key.Partition != 0 {
		t.Fatalf("chaos checker learnt %+v", got)
	}
	h.log.Elect(2)
	g2 := h.load(t, 2).Group("g", false)
	if g2 == nil || len(g2.Committed) != 1 || g2.Committed[tp0].Offset != 7 || len(g2.Pending) != 0 {
		t.Fatalf("loaded %+v", g2)
	}
}

// A KIP-848 member that stops heartbeating expires after
// group.consumer.session.timeout.ms; the group's record is written
// (a tombstone: nothing is left) and a new load restores members with
// fresh sessions.
func TestShardConsumerSession(t *testing.T) {
	h := newShardHost()
	s := h.load(t, 1)
	g := s.Group("g", true)
	g.Mu.Lock()
	g.Ready()
	g.Consumer = NewConsumerGroup()
	g.Consumer.Heartbeat(join("m1", "t"), fakeTopics{"t": 2})
	g.TouchConsumerMember(g.ConsumerMember("m1"))
	g.Mu.Unlock()
	g.WriteMu.Lock()
	code := g.PersistConsumer()
	g.WriteMu.Unlock()
	if code != 0 || g.ConsumerMeta == nil {
		t.Fatalf("persist: %v", kerr.ErrorForCode(code))
	}

	// A new leader restores the member, with its own session timer.
	h.log.Elect(2)
	g2 := h.load(t, 2).Group("g", false)
	g2.Mu.Lock()
	cg := g2.ConsumerProtocol()
	if cg == nil || len(cg.Members) != 1 {
		t.Fatalf("restored %+v", cg)
	}
	var rec ConsumerGroupRecord
	if err := json.Unmarshal(cg.Persisted, &rec); err != nil || len(rec.Members) != 1 {
		t.Fatalf("persisted %s: %v", cg.Persisted, err)
	}
	g2.Mu.Unlock()

	h.clk.Advance(sessionTimeout)
	h.close() // waits for the write the expiry started
	g.Mu.Lock()
	if !g.Shut {
		t.Fatal("the old load's copy did not stop")
	}
	g.Mu.Unlock()
	g2.Mu.Lock()
	defer g2.Mu.Unlock()
	if g2.ConsumerMember("m1") != nil || g2.ConsumerMeta != nil {
		t.Fatalf("after expiry: member %v record %s", g2.ConsumerMember("m1"), g2.ConsumerMeta)
	}
	if len(h.events) == 0 || h.events[0].Type != MemberExpired || h.events[0].Member != "m1" {
		t.Fatalf("events %+v", h.events)
	}
}
