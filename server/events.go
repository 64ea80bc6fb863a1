package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EventType names what happened. The names are part of the HTTP contract
// (GET /v1/events?type=...).
type EventType string

// The cluster's events.
const (
	EventBrokerStarted  EventType = "broker_started"
	EventBrokerStopped  EventType = "broker_stopped" // Mode: clean, crash or powerloss
	EventBrokerFenced   EventType = "broker_fenced"  // the controller noticed it is gone
	EventBrokerIsolated EventType = "broker_isolated"
	EventBrokerHealed   EventType = "broker_healed"

	EventLeaderElected       EventType = "leader_elected" // Leader, OldLeader, Epoch, Unclean, Reason
	EventPartitionLeaderless EventType = "partition_leaderless"
	EventISRShrunk           EventType = "isr_shrunk"   // Broker left; Reason: lag, fenced, manual, ...
	EventISRExpanded         EventType = "isr_expanded" // Broker joined
	EventHWAdvanced          EventType = "hw_advanced"  // From, To; coalesced per partition
	EventLogTruncated        EventType = "log_truncated"
	EventRecordsLost         EventType = "records_lost"     // acknowledged offsets [From, To) are gone
	EventLogCleaned          EventType = "log_cleaned"      // the cleaner compacted [.., To) on leader Broker; From: first dirty offset
	EventProducerExpired     EventType = "producer_expired" // ProducerID idle past producer.id.expiration.ms on leader Broker

	EventFaultAdded   EventType = "fault_added"
	EventFaultHit     EventType = "fault_hit"
	EventFaultExpired EventType = "fault_expired" // its count is used up
	EventFaultRemoved EventType = "fault_removed"

	EventTopicCreated       EventType = "topic_created"
	EventTopicDeleted       EventType = "topic_deleted"
	EventTopicConfigChanged EventType = "topic_config_changed"

	EventACLCreated   EventType = "acl_created" // Detail: the binding
	EventACLDeleted   EventType = "acl_deleted"
	EventQuotaChanged EventType = "quota_changed" // Detail: the entity
	// EventClientThrottled: a connection is muted for a quota; Broker, and
	// Detail with the principal, client id and throttle time.
	EventClientThrottled EventType = "client_throttled"

	EventGroupRebalanceStarted   EventType = "group_rebalance_started"
	EventGroupRebalanceCompleted EventType = "group_rebalance_completed"
	EventGroupMemberJoined       EventType = "group_member_joined"
	EventGroupMemberLeft         EventType = "group_member_left"
	EventGroupMemberExpired      EventType = "group_member_expired"

	// The LSO moved after a transaction held it below the HW (a marker
	// let it go): From, To, coalesced with hw_advanced. Partitions without
	// transactions, whose LSO is their HW, report hw_advanced only.
	EventLSOAdvanced EventType = "lso_advanced"
	// A replica's log start offset moved up: Broker, From, To; Reason
	// delete_records, follower_reset (its log ended below the leader's log
	// start) or retention.
	EventLogStartMoved EventType = "log_start_moved"
	// A follower (Broker) stopped or restarted fetching (PauseReplica,
	// ResumeReplica).
	EventReplicaPaused  EventType = "replica_paused"
	EventReplicaResumed EventType = "replica_resumed"
	EventChaosStarted   EventType = "chaos_started" // Detail: seed and spec
	EventChaosAction    EventType = "chaos_action"  // Reason: the action's kind; Detail: what it did
	EventChaosAnomaly   EventType = "chaos_anomaly" // the run's first loss, with the seed to replay it
	EventChaosStopped   EventType = "chaos_stopped"
)

// Event is one state change the cluster made. Seq numbers events from 1
// without gaps; Time is the cluster's clock (Config.Now). Fields that do
// not apply to a type hold -1 (numbers) or are empty, and are left out of
// the JSON form.
type Event struct {
	Seq        uint64
	Time       time.Time
	Type       EventType
	Broker     int32 // the broker or replica concerned
	Topic      string
	Partition  int32
	Leader     int32 // leader_elected: the new leader
	OldLeader  int32
	Epoch      int32 // the leader epoch after the change
	ISR        []int32
	From, To   int64 // offsets: HW, truncation (old and new LEO), lost range [From, To)
	Unclean    bool
	Reason     string
	Mode       StopMode // broker_stopped
	Group      string
	Member     string
	Generation int32
	Fault      string // the fault rule id
	Detail     string // a short human-readable summary of anything else
	Configs    map[string]string

	// Transaction events (txn_events.go): the transactional id, its
	// producer id and epoch after the change, its state and the one before
	// (State also names a marker: COMMIT or ABORT), and the partitions
	// concerned.
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	State           string
	PreviousState   string
	Partitions      []transaction.Partition
}

func newEvent(t EventType) Event {
	return Event{Type: t, Broker: -1, Partition: -1, Leader: -1, OldLeader: -1, Epoch: -1, From: -1, To: -1, Generation: -1,
		ProducerID: -1, ProducerEpoch: -1}
}

type eventJSON struct {
	Seq        uint64            `json:"seq"`
	Time       time.Time         `json:"time"`
	Type       EventType         `json:"type"`
	Broker     *int32            `json:"broker,omitempty"`
	Topic      string            `json:"topic,omitempty"`
	Partition  *int32            `json:"partition,omitempty"`
	Leader     *int32            `json:"leader,omitempty"`
	OldLeader  *int32            `json:"old_leader,omitempty"`
	Epoch      *int32            `json:"epoch,omitempty"`
	ISR        []int32           `json:"isr,omitempty"`
	From       *int64            `json:"from,omitempty"`
	To         *int64            `json:"to,omitempty"`
	Unclean    bool              `json:"unclean,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Mode       StopMode          `json:"mode,omitempty"`
	Group      string            `json:"group,omitempty"`
	Member     string            `json:"member,omitempty"`
	Generation *int32            `json:"generation,omitempty"`
	Fault      string            `json:"fault,omitempty"`
	Detail     string            `json:"detail,omitempty"`
	Configs    map[string]string `json:"configs,omitempty"`

	TransactionalID string                  `json:"transactional_id,omitempty"`
	ProducerID      *int64                  `json:"producer_id,omitempty"`
	ProducerEpoch   *int16                  `json:"producer_epoch,omitempty"`
	State           string                  `json:"state,omitempty"`
	PreviousState   string                  `json:"previous_state,omitempty"`
	Partitions      []transaction.Partition `json:"partitions,omitempty"`
}

func opt[T int16 | int32 | int64](v T) *T {
	if v == -1 {
		return nil
	}
	return &v
}

func unopt[T int16 | int32 | int64](v *T) T {
	if v == nil {
		return -1
	}
	return *v
}

// MarshalJSON leaves out the fields that do not apply.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{
		Seq: e.Seq, Time: e.Time, Type: e.Type, Broker: opt(e.Broker), Topic: e.Topic, Partition: opt(e.Partition),
		Leader: opt(e.Leader), OldLeader: opt(e.OldLeader), Epoch: opt(e.Epoch), ISR: e.ISR, From: opt(e.From), To: opt(e.To),
		Unclean: e.Unclean, Reason: e.Reason, Mode: e.Mode, Group: e.Group, Member: e.Member, Generation: opt(e.Generation),
		Fault: e.Fault, Detail: e.Detail, Configs: e.Configs,
		TransactionalID: e.TransactionalID, ProducerID: opt(e.ProducerID), ProducerEpoch: opt(e.ProducerEpoch),
		State: e.State, PreviousState: e.PreviousState, Partitions: e.Partitions,
	})
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Event{
		Seq: j.Seq, Time: j.Time, Type: j.Type, Broker: unopt(j.Broker), Topic: j.Topic, Partition: unopt(j.Partition),
		Leader: unopt(j.Leader), OldLeader: unopt(j.OldLeader), Epoch: unopt(j.Epoch), ISR: j.ISR, From: unopt(j.From), To: unopt(j.To),
		Unclean: j.Unclean, Reason: j.Reason, Mode: j.Mode, Group: j.Group, Member: j.Member, Generation: unopt(j.Generation),
		Fault: j.Fault, Detail: j.Detail, Configs: j.Configs,
		TransactionalID: j.TransactionalID, ProducerID: unopt(j.ProducerID), ProducerEpoch: unopt(j.ProducerEpoch),
		State: j.State, PreviousState: j.PreviousState, Partitions: j.Partitions,
	}
	return nil
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
func (l *eventLog) add(e Event, now func() time.Time) {
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

// EventMatcher selects events for WaitFor.
type EventMatcher func(Event) bool

// WaitFor returns the first event match accepts, among the events the
// ring still holds and those still to come. A test writes
//
//	ev, err := c.WaitFor(ctx, server.ISRShrunk("orders", 0))
func (c *Cluster) WaitFor(ctx context.Context, match EventMatcher) (Event, error) {
	var since uint64
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

// OfType matches every event of type t.
func OfType(t EventType) EventMatcher { return func(e Event) bool { return e.Type == t } }

func partitionEvent(t EventType, topic string, partition int32) EventMatcher {
	return func(e Event) bool { return e.Type == t && e.Topic == topic && e.Partition == partition }
}

// ISRShrunk matches a replica leaving the ISR of topic/partition.
func ISRShrunk(topic string, partition int32) EventMatcher {
	return partitionEvent(EventISRShrunk, topic, partition)
}

// ISRExpanded matches a replica joining the ISR of topic/partition.
func ISRExpanded(topic string, partition int32) EventMatcher {
	return partitionEvent(EventISRExpanded, topic, partition)
}

// LeaderElected matches any new leader of topic/partition.
func LeaderElected(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLeaderElected, topic, partition)
}

// LeaderElectedOn matches broker becoming leader of topic/partition.
func LeaderElectedOn(topic string, partition, broker int32) EventMatcher {
	m := LeaderElected(topic, partition)
	return func(e Event) bool { return m(e) && e.Leader == broker }
}

// LogTruncated matches a truncation of any replica of topic/partition.
func LogTruncated(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLogTruncated, topic, partition)
}

// RecordsLost matches acknowledged records of topic/partition vanishing.
func RecordsLost(topic string, partition int32) EventMatcher {
	return partitionEvent(EventRecordsLost, topic, partition)
}

// LogStartMoved matches the log start offset of any replica of
// topic/partition moving up (retention, DeleteRecords, ...).
func LogStartMoved(topic string, partition int32) EventMatcher {
	return partitionEvent(EventLogStartMoved, topic, partition)
}

// HWReached matches the HW of topic/partition advancing to at least hw.
func HWReached(topic string, partition int32, hw int64) EventMatcher {
	m := partitionEvent(EventHWAdvanced, topic, partition)
	return func(e Event) bool { return m(e) && e.To >= hw }
}

// LSOAdvanced matches the LSO of topic/partition moving on its own (a
// transaction decided) to at least lso.
func LSOAdvanced(topic string, partition int32, lso int64) EventMatcher {
	m := partitionEvent(EventLSOAdvanced, topic, partition)
	return func(e Event) bool { return m(e) && e.To >= lso }
}

func brokerEvent(t EventType, id int32) EventMatcher {
	return func(e Event) bool { return e.Type == t && e.Broker == id }
}

// BrokerStopped matches broker id stopping in any mode.
func BrokerStopped(id int32) EventMatcher { return brokerEvent(EventBrokerStopped, id) }

// BrokerStarted matches broker id starting again.
func BrokerStarted(id int32) EventMatcher { return brokerEvent(EventBrokerStarted, id) }

// BrokerFenced matches the controller fencing broker id.
func BrokerFenced(id int32) EventMatcher { return brokerEvent(EventBrokerFenced, id) }

// TopicCreated matches the creation of topic name.
func TopicCreated(name string) EventMatcher {
	return func(e Event) bool { return e.Type == EventTopicCreated && e.Topic == name }
}

// GroupRebalanced matches a completed rebalance of group.
func GroupRebalanced(group string) EventMatcher {
	return func(e Event) bool { return e.Type == EventGroupRebalanceCompleted && e.Group == group }
}

// FaultHit matches the fault rule with id firing.
func FaultHit(id string) EventMatcher {
	return func(e Event) bool { return e.Type == EventFaultHit && e.Fault == id }
}

// partitionEvents reports what changed in p between before and after:
// the state machine's own record of leader, ISR, truncation and loss
// changes at once, HW moves coalesced. Callers hold p.mu.
func (c *Cluster) partitionEvents(p *partition, before, after state) {
	if p.st.HasChanges() {
		for _, ch := range p.st.TakeChanges() {
			c.emitChange(p, ch)
		}
	}
	if p.ev.cause != "" {
		p.extras().ev.cause = ""
	}
	if after.lso != after.hw && !p.ev.lsoHeld {
		p.extras().ev.lsoHeld = true
	}
	if (after.hw != before.hw && after.hw >= 0 || after.lso != before.lso && after.lso >= 0) && !p.ev.hwQueued {
		ev := &p.extras().ev
		ev.hwQueued, ev.hwFrom, ev.lsoFrom = true, before.hw, before.lso
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
		e.Group, e.Member, e.Reason, e.Detail, e.Generation = g.id, member, reason, detail, g.Generation
	})
}

// ClientThrottled matches a connection muted for a quota on broker (0 for
// any).
func ClientThrottled(broker int32) EventMatcher {
	return func(e Event) bool { return e.Type == EventClientThrottled && (broker == 0 || e.Broker == broker) }
}
