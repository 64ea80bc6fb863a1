package group

// One consumer group's coordinator state on its shard: the offsets, the
// classic membership and the KIP-848 state, their restore from the last
// records after a load, the timers bound to the shard's load and the
// writes that go through the runtime (Write → replication → Replay).
//
// Lock order (coordinator's): WriteMu, then Mu; Mu is never held while
// the runtime's Write or Marker runs, since their replay takes it.

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Group is one consumer group's coordinator state. Mu guards everything
// below it.
type Group struct {
	s *Shard

	Mu sync.Mutex
	// Offsets are the committed offsets and the transactions' pending ones.
	Offsets
	// MetaRecord is the last group metadata record replayed (JSON of
	// Meta), nil when none; the classic membership is restored from it once.
	MetaRecord []byte
	// Classic is the classic protocol's membership.
	Classic
	// Consumer is the KIP-848 state when members use that protocol;
	// ConsumerMeta its last record, restored into Consumer after a load.
	Consumer     *ConsumerGroup
	ConsumerMeta []byte
	// Streams is the streams group state (KIP-1071); StreamsMeta its last
	// record, restored into Streams after a load.
	Streams     *StreamsGroup
	StreamsMeta []byte
	// Share is the share group's state (KIP-932) when g is one; ShareMeta
	// its last record, restored into Share after a load.
	Share     *ShareGroup
	ShareMeta []byte
	// WriteMu orders the group's state writes: taken before Mu, held
	// across a write and its replication.
	WriteMu    sync.Mutex
	writtenSeq uint64 // last metadata snapshot written (WriteMu)
	// conversion is a protocol migration made live and not yet written
	// (its records go in the next PersistConsumer).
	conversion *conversion
	// ExpiryMu keeps the offset expiry's decision and its tombstones
	// apart from commits: OffsetCommit's writes read-lock it, the expiry
	// (server/offset_expiry.go) locks it.
	ExpiryMu sync.RWMutex
	done     chan struct{} // closed on shutdown, ending the watcher
}

func newGroup(s *Shard, id string) *Group {
	g := &Group{s: s, Offsets: NewOffsets()}
	g.Classic = NewClassic(id, classicHost{g})
	return g
}

// Shard is the shard g belongs to.
func (g *Group) Shard() *Shard { return g.s }

// apply replays one record into the group, answering the offset it
// committed, if any. Callers hold g.Mu or own g. Live writes only keep
// the metadata records current; the membership is restored from them once
// after a load (Ready).
func (g *Group) apply(k RecordKey, value []byte) (Offset, bool) {
	if k.Kind == ShareKind {
		g.ShareMeta = value
		return Offset{}, false
	}
	if k.Kind == ConsumerKind {
		g.ConsumerMeta = value
		return Offset{}, false
	}
	if k.Kind == StreamsKind {
		g.StreamsMeta = value
		return Offset{}, false
	}
	if k.Topic == "" {
		g.MetaRecord = value // nil: the group was deleted
		return Offset{}, false
	}
	return g.ReplayCommit(TopicPartition{Topic: k.Topic, Partition: k.Partition}, value)
}

// Write appends records to the group's partition with acks=all as the
// coordinator the group was loaded on, and waits until they are committed
// and replayed into the group. Callers must not hold g.Mu (the replay
// takes it) but serialise writes to one group themselves (WriteMu) if
// order matters. Errors are the partition's, mapped by the caller.
func (g *Group) Write(recs []CoordinatorRecord) int16 {
	return g.WriteAs(recs, coordinator.NoProducer)
}

// WriteAs is Write for a transactional producer: a transactional offset
// commit is a transactional batch of that producer, pending in the group
// until the producer's marker.
func (g *Group) WriteAs(recs []CoordinatorRecord, pr coordinator.Producer) int16 {
	out := make([]coordinator.Record, len(recs))
	for i, r := range recs {
		out[i].Key, _ = json.Marshal(r.Key)
		if r.Value != nil {
			v, err := json.Marshal(r.Value)
			if err != nil {
				return kerr.UnknownServerError.Code
			}
			out[i].Value = v
		}
	}
	sh := g.s.runtime()
	if sh == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	return sh.WriteLive(g.s.at, pr, out, recs)
}

// StoreMeta writes a metadata snapshot and waits until it is committed and
// replayed, unless a later snapshot was written already. Callers hold
// neither g.Mu nor g.WriteMu.
func (g *Group) StoreMeta(snap MetaSnapshot) int16 {
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	if snap.Seq <= g.writtenSeq {
		return 0
	}
	if !g.Current() {
		return kerr.NotCoordinator.Code
	}
	code := g.Write([]CoordinatorRecord{{Key: RecordKey{Group: g.ID}, Value: snap.Meta}})
	if code == 0 {
		g.writtenSeq = snap.Seq
	}
	return code
}

// Ready initialises the membership on first use after a load, restoring
// it from the last group metadata record. Callers hold g.Mu.
func (g *Group) Ready() {
	if g.Members != nil {
		return
	}
	h := g.s.host
	if g.done == nil {
		g.done = make(chan struct{})
		if !h.Go(g.watch) {
			g.Shut = true
		}
	}
	var md *Meta
	if g.MetaRecord != nil {
		md = new(Meta)
		if err := json.Unmarshal(g.MetaRecord, md); err != nil {
			h.Log().Warn("unreadable group metadata in __consumer_offsets", "group", g.ID, "error", err)
			md = nil
		}
	}
	g.Restore(md)
}

// watch stops the group's timers when the host closes.
func (g *Group) watch() {
	select {
	case <-g.s.host.Closing():
		g.Mu.Lock()
		g.Stop(kerr.CoordinatorNotAvailable.Code)
		g.Mu.Unlock()
	case <-g.done:
	}
}

// goLocked runs f on a goroutine the host tracks. Callers hold g.Mu.
func (g *Group) goLocked(f func()) {
	if !g.Shut {
		g.s.host.Go(f)
	}
}

// Stop stops every timer, answers every waiting request with code and
// ends the watcher. Callers hold g.Mu.
func (g *Group) Stop(code int16) {
	if g.Shutdown(code) && g.done != nil {
		close(g.done)
	}
}

// after runs f under g.Mu after d, unless the group shut down or is no
// longer the coordinator's copy by then: the timer is bound to the load
// of the group's shard, and a stale copy shuts down instead. Callers hold
// g.Mu.
func (g *Group) after(d time.Duration, f func()) *clock.Timer {
	if g.Shut {
		return nil
	}
	sh := g.s.runtime()
	if sh == nil {
		return nil
	}
	return sh.AfterFunc(g.s.at, d, func() {
		g.Mu.Lock()
		defer g.Mu.Unlock()
		switch {
		case g.Shut:
		case !g.s.holds(g):
			g.stopStale()
		default:
			f()
		}
	}, func() {
		g.Mu.Lock()
		defer g.Mu.Unlock()
		g.stopStale()
	})
}

// stopStale shuts down a copy of the group its coordinator no longer
// holds. Callers hold g.Mu.
func (g *Group) stopStale() {
	if !g.Shut {
		g.s.host.Log().Info("group moved; stopping the stale copy", "group", g.ID, "broker", g.s.at.Leader)
		g.Stop(kerr.NotCoordinator.Code)
	}
}

// Current says whether g is still the group as its coordinator holds it:
// the shard was not reloaded, its partition's leadership did not move and
// the group was not replaced.
func (g *Group) Current() bool {
	sh := g.s.runtime()
	return sh != nil && g.s.holds(g) && sh.Current(g.s.at)
}

// HasClassicMembers reports whether the classic protocol has members in
// g. Callers hold g.Mu.
func (g *Group) HasClassicMembers() bool {
	g.Ready()
	return g.HasMembers()
}

// CheckCommit is Classic's CheckCommit on the restored membership.
// Callers hold g.Mu.
func (g *Group) CheckCommit(memberID string, generation int32, instanceID *string) int16 {
	g.Ready()
	return g.Classic.CheckCommit(memberID, generation, instanceID)
}

// ConsumerProtocol returns g's KIP-848 state when g is a KIP-848 group:
// it has that state and no classic members or metadata. Callers hold g.Mu.
func (g *Group) ConsumerProtocol() *ConsumerGroup {
	g.Ready()
	cg := g.ConsumerGroup()
	if cg == nil || len(g.Members) > 0 || len(cg.Members) == 0 && g.MetaRecord != nil {
		return nil
	}
	return cg
}

// classicHost is what the classic protocol needs of the group's shard.
// Its calls come with g.Mu held.
type classicHost struct{ g *Group }

func (h classicHost) After(d time.Duration, f func()) *clock.Timer { return h.g.after(d, f) }
func (h classicHost) Emit(ev Event)                                { h.g.s.host.Emit(h.g, ev) }

// PersistAsync writes the metadata a timer or a leave produced through
// the runtime, as every write goes (Write, then Replay); nobody waits for
// it, so a failure is only logged, as Kafka's coordinator does.
func (h classicHost) PersistAsync(snap MetaSnapshot) {
	g := h.g
	g.goLocked(func() {
		if code := g.StoreMeta(snap); code != 0 {
			g.s.host.Log().Warn("writing group metadata failed", "group", g.ID, "error", kerr.ErrorForCode(code))
		}
	})
}

func (h classicHost) ConsumerMembers() int {
	if cg := h.g.ConsumerGroup(); cg != nil {
		return len(cg.Members)
	}
	return 0
}

func (h classicHost) Now() time.Time                       { return h.g.s.host.Now() }
func (h classicHost) InitialRebalanceDelay() time.Duration { return h.g.s.host.InitialRebalanceDelay() }

func (h classicHost) Log() *slog.Logger { return h.g.s.host.Log() }

// SubscribedTopics is the union of the members' subscriptions under either
// protocol; ok is false when one cannot be read. Callers hold g.Mu.
func (g *Group) SubscribedTopics() (topics map[string]bool, ok bool) {
	topics = map[string]bool{}
	for _, m := range g.Members {
		for _, p := range m.Protocols {
			if g.Protocol != "" && p.Name != g.Protocol {
				continue
			}
			ts, ok := Subscription(p.Metadata)
			if !ok {
				return nil, false
			}
			for _, t := range ts {
				topics[t] = true
			}
		}
	}
	if cg := g.ConsumerGroup(); cg != nil {
		for _, m := range cg.Members {
			for _, t := range m.Subscribed {
				topics[t] = true
			}
			if m.Regex != "" {
				for _, t := range g.s.host.Topics().Subscribed(m) {
					topics[t.Name] = true
				}
			}
		}
	}
	return topics, true
}
