package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newEvent(t EventType) Event {
	return Event{Type: t, Broker: -1, Partition: -1, Leader: -1, OldLeader: -1, Epoch: -1, From: -1, To: -1, Generation: -1,
		ProducerID: -1, ProducerEpoch: -1, Version: -1, SchemaID: -1}
}

// DefaultEventBuffer is how many events the ring keeps by default.
const DefaultEventBuffer = 10000

// hwEventInterval bounds hw_advanced events: at most one per partition per
// interval, carrying where the HW was and where it is now.
const hwEventInterval = 100 * time.Millisecond

// eventLog is the bounded ring of events. Emitting takes its lock, but
// only state changes emit; produce and fetch touch it at most once per
// partition per hwEventInterval.
type eventLog struct {
	mu   sync.Mutex
	ring []Event // grows to size, then wraps; oldest at ring[head]
	size int
	head int
	last uint64        // seq of the newest event
	wake chan struct{} // closed and replaced on every event
	seq  atomic.Uint64 // last, for readers that must not take mu (chaos recording)

	hwQueue []*partition  // partitions whose HW moved since the last flush
	hwKick  chan struct{} // wakes runHWEvents
}

func newEventLog(size int) *eventLog {
	return &eventLog{size: size, wake: make(chan struct{}), hwKick: make(chan struct{}, 1)}
}

// partitionEvents is a partition's coalesced HW report, guarded by p.mu.
type partitionEvents struct {
	hwQueued bool
	hwFrom   int64
	lsoFrom  int64 // the LSO when the HW or LSO first moved since the last flush
	lsoHeld  bool  // a transaction held the LSO below the HW since the last flush
	// cause says why the change under way happens (a controlled shutdown,
	// a preferred election...); it labels the events it produces.
	cause string
}

// add numbers e and stamps it with now() under the lock, so that times
// never go backwards along the sequence.
func (l *eventLog) add(e Event, now func() time.Time) Event {
	l.mu.Lock()
	l.last++
	l.seq.Store(l.last)
	e.Seq, e.Time = l.last, now()
	if len(l.ring) < l.size {
		l.ring = append(l.ring, e) // grows as needed: most clusters never fill it
	} else {
		l.ring[l.head] = e
		l.head = (l.head + 1) % len(l.ring)
	}
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	return e
}

// after returns the kept events with Seq > since, oldest first, and the
// channel that closes on the next event.
func (l *eventLog) after(since uint64) ([]Event, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.ring)
	first := l.last - uint64(n) + 1 // seq of ring's oldest
	var out []Event
	if since < l.last {
		skip := 0
		if since >= first {
			skip = int(since - first + 1)
		}
		out = make([]Event, 0, n-skip)
		for i := skip; i < n; i++ {
			out = append(out, l.ring[(l.head+i)%n])
		}
	}
	return out, l.wake
}

// emit records an event of type t; fill sets its fields.
func (c *Cluster) emit(t EventType, fill func(*Event)) {
	e := newEvent(t)
	if fill != nil {
		fill(&e)
	}
	c.events.add(e, c.now)
}

// Events returns the events with a sequence number above since that the
// ring still holds, oldest first. Events(0) is everything kept.
func (c *Cluster) Events(since uint64) []Event {
	evs, _ := c.events.after(since)
	return evs
}

// WaitEvents returns the events after since, waiting until there is at
// least one. It fails when ctx ends or the cluster closes.
func (c *Cluster) WaitEvents(ctx context.Context, since uint64) ([]Event, error) {
	for {
		evs, wake := c.events.after(since)
		if len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-c.closing:
			return nil, errClusterClosed
		}
	}
}

var errClusterClosed = errors.New("cluster closed")

// LastEventSeq is the sequence number of the newest event, 0 before the
// first: the since of a poll that wants only what comes next.
func (c *Cluster) LastEventSeq() uint64 {
	c.events.mu.Lock()
	defer c.events.mu.Unlock()
	return c.events.last
}

// WaitFor returns the first event match accepts, among the events the
// ring still holds and those still to come. A test writes
//
//	ev, err := c.WaitFor(ctx, server.ISRShrunk("orders", 0))
//
// Past events count: a second heal in the same test would return at once
// on the first one's isr_expanded. To wait for what an action causes, use
// WaitForAfter with the sequence number from before the action.
func (c *Cluster) WaitFor(ctx context.Context, match EventMatcher) (Event, error) {
	return c.WaitForAfter(ctx, 0, match)
}

// WaitForAfter returns the first event after sequence number since that
// match accepts, waiting for it if need be. Take since from LastEventSeq
// before the action, and the returned event's Seq is the since of the next
// wait:
//
//	seq := c.LastEventSeq()
//	c.HealBroker(2)
//	ev, err := c.WaitForAfter(ctx, seq, server.ISRExpanded("orders", 0))
//	seq = ev.Seq // the next wait sees only what comes after this one
//
// Events that left the ring (Config.EventBuffer) are not seen.
func (c *Cluster) WaitForAfter(ctx context.Context, since uint64, match EventMatcher) (Event, error) {
	for {
		evs, err := c.WaitEvents(ctx, since)
		if err != nil {
			return Event{}, err
		}
		for _, e := range evs {
			if match(e) {
				return e, nil
			}
			since = e.Seq
		}
	}
}

// partitionEvents reports what change pc did to p: the state machine's
// own record of leader, ISR, truncation and loss changes at once, HW
// moves coalesced. Callers hold p.mu.
func (c *Cluster) partitionEvents(p *partition, pc partitionChange) {
	if p.st.HasChanges() {
		for _, ch := range p.st.TakeChanges() {
			c.emitChange(p, ch)
		}
	}
	if p.ev.cause != "" {
		p.extras().ev.cause = ""
	}
	if pc.lso != pc.hw && !p.ev.lsoHeld {
		p.extras().ev.lsoHeld = true
	}
	if (pc.hw != pc.hwFrom && pc.hw >= 0 || pc.lso != pc.lsoFrom && pc.lso >= 0) && !p.ev.hwQueued {
		ev := &p.extras().ev
		ev.hwQueued, ev.hwFrom, ev.lsoFrom = true, pc.hwFrom, pc.lsoFrom
		l := c.events
		l.mu.Lock()
		l.hwQueue = append(l.hwQueue, p)
		l.mu.Unlock()
		select {
		case l.hwKick <- struct{}{}:
		default:
		}
	}
}

func (c *Cluster) emitChange(p *partition, ch replication.Change) {
	var t EventType
	switch ch.Kind {
	case replication.LeaderChanged:
		t = EventLeaderElected
		if ch.Broker < 0 {
			t = EventPartitionLeaderless
		}
	case replication.ISRShrunk:
		t = EventISRShrunk
	case replication.ISRExpanded:
		t = EventISRExpanded
	case replication.LogTruncated:
		t = EventLogTruncated
	case replication.RecordsLost:
		t = EventRecordsLost
	case replication.LogStartMoved:
		t = EventLogStartMoved
	default:
		c.emitReassignmentChange(p, ch)
		return
	}
	reason := ch.Reason
	if p.ev.cause != "" && (reason == "" || reason == replication.ReasonFenced) {
		reason = p.ev.cause
	}
	c.emit(t, func(e *Event) {
		e.Topic, e.Partition, e.Epoch, e.ISR, e.Reason = p.t.name, p.index, ch.Epoch, ch.ISR, reason
		switch ch.Kind {
		case replication.LeaderChanged:
			e.Leader, e.OldLeader, e.Unclean = ch.Broker, ch.OldLeader, ch.Unclean
		case replication.LogTruncated, replication.RecordsLost, replication.LogStartMoved:
			e.Broker, e.From, e.To = ch.Broker, ch.From, ch.To
		default:
			e.Broker = ch.Broker
		}
	})
}

// runHWEvents turns queued HW moves into hw_advanced events, at most one
// per partition per hwEventInterval.
func (c *Cluster) runHWEvents() {
	defer c.wg.Done()
	l := c.events
	for {
		select {
		case <-c.closing:
			return
		case <-l.hwKick:
		}
		t := time.NewTimer(hwEventInterval)
		select {
		case <-c.closing:
			t.Stop()
			return
		case <-t.C:
		}
		l.mu.Lock()
		queue := l.hwQueue
		l.hwQueue = nil
		l.mu.Unlock()
		for _, p := range queue {
			p.mu.Lock()
			from, to := p.ev.hwFrom, p.st.HW()
			lsoFrom, lsoTo, held := p.ev.lsoFrom, p.lso(), p.ev.lsoHeld
			ev := &p.extras().ev
			ev.hwQueued, ev.lsoHeld = false, lsoTo != to
			if to != from && to >= 0 && !p.t.deleted.Load() {
				c.emit(EventHWAdvanced, func(e *Event) {
					e.Topic, e.Partition, e.From, e.To, e.Leader, e.Epoch = p.t.name, p.index, from, to, p.st.Leader(), p.st.LeaderEpoch()
				})
			}
			// Without transactions the LSO is the HW: only an LSO that a
			// transaction held back is news.
			if lsoTo != lsoFrom && lsoTo >= 0 && (held || lsoFrom != from || lsoTo != to) && !p.t.deleted.Load() {
				c.emit(EventLSOAdvanced, func(e *Event) {
					e.Topic, e.Partition, e.From, e.To, e.Leader, e.Epoch = p.t.name, p.index, lsoFrom, lsoTo, p.st.Leader(), p.st.LeaderEpoch()
				})
			}
			p.mu.Unlock()
		}
	}
}

// emitFaultHit reports rule r firing on broker for a request of API key,
// and its expiry when that was its last hit.
func (c *Cluster) emitFaultHit(r *FaultRule, broker int32, key int16, hits int) {
	c.emit(EventFaultHit, func(e *Event) {
		e.Fault, e.Broker, e.Topic, e.Detail = r.id, broker, r.f.Topic, fmt.Sprintf("%s: %s (hit %d)", kmsg.NameForKey(key), r.describe(), hits)
	})
	if r.f.Count > 0 && hits == r.f.Count {
		c.emit(EventFaultExpired, func(e *Event) { e.Fault, e.Topic, e.Detail = r.id, r.f.Topic, r.describe() })
	}
}

// describe says what the rule does, in a few words.
func (r *FaultRule) describe() string {
	api := r.f.API
	if api == "" {
		api = "any API"
	}
	var what []string
	if r.f.Error != "" {
		what = append(what, r.f.Error)
	}
	if r.f.Delay > 0 {
		what = append(what, "delay "+r.f.Delay.String())
	}
	if r.f.DropConnection {
		what = append(what, "drop connection")
	}
	if r.f.Count > 0 {
		what = append(what, fmt.Sprintf("count %d", r.f.Count))
	}
	return api + " " + strings.Join(what, ", ")
}

// emitGroup reports a change of group g, of member if not "".
func (c *Cluster) emitGroup(t EventType, g *group, member, reason, detail string) {
	c.emit(t, func(e *Event) {
		e.Group, e.Member, e.Reason, e.Detail, e.Generation = g.ID, member, reason, detail, g.Generation
	})
}
