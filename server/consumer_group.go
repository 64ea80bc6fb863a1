package server

// KIP-848 consumer groups: the coordinator assigns partitions itself
// ("uniform" or "range"), and each member converges on its target
// assignment through heartbeats. A partition moves only after its previous
// owner has revoked it (the owner heartbeats without it), so no partition
// is ever consumed by two members of one group epoch.
//
// The group epoch moves on every membership or subscription change; the
// target assignment is recomputed for it; a member's epoch reaches the
// target's once it holds no partition outside its target.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"maps"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"regexp"
	"slices"
	"strings"
	"time"
)

// consumerGroup is a KIP-848 group's state, guarded by its group's mu.
type consumerGroup struct {
	epoch           int32 // group epoch
	assignmentEpoch int32 // epoch the target assignment was computed at
	assignor        string
	members         map[string]*consumerMember
	target          map[string]assignment // member id → target partitions
	topicsSeen      map[[16]byte]int      // subscribed topics' partition counts at the target's computation
	persisted       []byte                // the last state written to the log
}

// assignment is a set of partitions by topic id, each list sorted.
type assignment map[[16]byte][]int32

func (a assignment) clone() assignment {
	out := make(assignment, len(a))
	for id, ps := range a {
		out[id] = slices.Clone(ps)
	}
	return out
}

func (a assignment) has(id [16]byte, p int32) bool {
	_, ok := slices.BinarySearch(a[id], p)
	return ok
}

func (a assignment) equal(b assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// filter keeps the partitions keep accepts.
func (a assignment) filter(keep func(id [16]byte, p int32) bool) assignment {
	out := assignment{}
	for id, ps := range a {
		for _, p := range ps {
			if keep(id, p) {
				out[id] = append(out[id], p)
			}
		}
	}
	return out
}

func (a assignment) add(id [16]byte, p int32) {
	ps := a[id]
	if i, ok := slices.BinarySearch(ps, p); !ok {
		a[id] = slices.Insert(ps, i, p)
	}
}

type consumerMember struct {
	id, clientID, clientHost string
	instanceID, rackID       *string
	epoch                    int32
	subscribed               []string
	regex                    string
	regexPrincipal           string // who set the regex (not kept across restarts: then "")
	regexHost                string
	rebalanceTimeout         time.Duration
	assignor                 string

	assigned assignment // what the member was told to own
	owned    assignment // what it last said it owns (revocations acked)
	sent     assignment // the last assignment sent, to send only changes
	session  *clock.Timer
}

func newConsumerGroup() *consumerGroup {
	return &consumerGroup{members: map[string]*consumerMember{}, target: map[string]assignment{}, assignor: "uniform"}
}

// state is the group state as ConsumerGroupDescribe and ListGroups name it.
func (cg *consumerGroup) state() string {
	switch {
	case len(cg.members) == 0:
		return "Empty"
	case cg.assignmentEpoch < cg.epoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch {
			return "Reconciling"
		}
	}
	return "Stable"
}

// subscribedTopics resolves a member's subscription to existing topics. A
// regex must match a whole name and, as in Kafka's group coordinator, may
// match internal topics too (clients filter those themselves when they
// resolve a regex locally). With the authorizer a regex matches only the
// topics the principal that set it may DESCRIBE (Kafka 4.0, KAFKA-18813).
func (c *Cluster) subscribedTopics(m *consumerMember) []*topic {
	var re *regexp.Regexp
	if m.regex != "" {
		re, _ = compileSubscription(m.regex)
	}
	var out []*topic
	for name, t := range c.topics.Load().byName {
		if slices.Contains(m.subscribed, name) || (re != nil && re.MatchString(name) && c.regexMayDescribe(m, name)) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	return out
}

// regexMayDescribe says whether the principal that set m's regex may
// DESCRIBE topic name.
func (c *Cluster) regexMayDescribe(m *consumerMember, name string) bool {
	if !c.cfg.Authorizer || m.regexPrincipal == "" {
		return true
	}
	return c.acls.Load().Authorize(authorizer.Action{Principal: m.regexPrincipal, Host: m.regexHost,
		Operation: authorizer.OpDescribe, ResourceType: authorizer.ResourceTopic, Name: name})
}

// computeTarget runs the group's assignor for the current group epoch.
func (c *Cluster) computeTarget(cg *consumerGroup) {
	ids := slices.Sorted(maps.Keys(cg.members))
	subs := map[string][]*topic{}
	topicsByID := map[[16]byte]*topic{}
	for _, id := range ids {
		subs[id] = c.subscribedTopics(cg.members[id])
		for _, t := range subs[id] {
			topicsByID[t.id] = t
		}
	}
	next := map[string]assignment{}
	for _, id := range ids {
		next[id] = assignment{}
	}
	if cg.assignor == "range" {
		for _, t := range sortedTopics(topicsByID) {
			var ms []string
			for _, id := range ids {
				if slices.Contains(subs[id], t) {
					ms = append(ms, id)
				}
			}
			n, k := len(t.partitions()), len(ms)
			for i, id := range ms {
				lo, hi := i*n/k, (i+1)*n/k
				for p := lo; p < hi; p++ {
					next[id].add(t.id, int32(p))
				}
			}
		}
	} else {
		c.uniform(cg, ids, subs, topicsByID, next)
	}
	cg.target = next
	cg.assignmentEpoch = cg.epoch
	cg.topicsSeen = c.subscribedPartitions(cg)
}

// subscribedPartitions maps every topic some member subscribes to, to its
// partition count.
func (c *Cluster) subscribedPartitions(cg *consumerGroup) map[[16]byte]int {
	out := map[[16]byte]int{}
	for _, m := range cg.members {
		for _, t := range c.subscribedTopics(m) {
			out[t.id] = len(t.partitions())
		}
	}
	return out
}

func sortedTopics(byID map[[16]byte]*topic) []*topic {
	ts := slices.Collect(maps.Values(byID))
	slices.SortFunc(ts, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	return ts
}

// uniform spreads every subscribed partition evenly over the members that
// subscribe to its topic, keeping partitions where they are when that stays
// balanced (a sticky, balanced assignor like Kafka's "uniform").
func (c *Cluster) uniform(cg *consumerGroup, ids []string, subs map[string][]*topic, byID map[[16]byte]*topic, next map[string]assignment) {
	total := 0
	for _, t := range byID {
		total += len(t.partitions())
	}
	quota := func(i int) int { // members sorted: the first total%n get one more
		q := total / len(ids)
		if i < total%len(ids) {
			q++
		}
		return q
	}
	count := map[string]int{}
	taken := map[[16]byte]map[int32]bool{}
	for i, id := range ids { // keep what stays valid and fits the quota
		for tid, ps := range cg.target[id] {
			t := byID[tid]
			if t == nil || !slices.Contains(subs[id], t) {
				continue
			}
			for _, p := range ps {
				if int(p) < len(t.partitions()) && count[id] < quota(i) {
					next[id].add(tid, p)
					count[id]++
					if taken[tid] == nil {
						taken[tid] = map[int32]bool{}
					}
					taken[tid][p] = true
				}
			}
		}
	}
	for _, t := range sortedTopics(byID) {
		for p := range int32(len(t.partitions())) {
			if taken[t.id][p] {
				continue
			}
			best := ""
			for _, id := range ids {
				if slices.Contains(subs[id], t) && (best == "" || count[id] < count[best]) {
					best = id
				}
			}
			if best != "" {
				next[best].add(t.id, p)
				count[best]++
			}
		}
	}
}

// reconcile moves member m toward its target: while it holds partitions
// outside the target it is told to keep only the rest (and stays at its
// epoch); once it has revoked them it gets the target partitions no other
// member still holds, and the target's epoch.
func (cg *consumerGroup) reconcile(m *consumerMember) {
	target := cg.target[m.id]
	if target == nil {
		target = assignment{}
	}
	outside := func(a assignment) bool {
		for id, ps := range a {
			for _, p := range ps {
				if !target.has(id, p) {
					return true
				}
			}
		}
		return false
	}
	if outside(m.assigned) || outside(m.owned) {
		m.assigned = m.assigned.filter(target.has)
		return
	}
	heldByOthers := func(id [16]byte, p int32) bool {
		for _, o := range cg.members {
			if o != m && (o.assigned.has(id, p) || o.owned.has(id, p)) {
				return true
			}
		}
		return false
	}
	next := m.assigned.clone()
	for id, ps := range target {
		for _, p := range ps {
			if !heldByOthers(id, p) {
				next.add(id, p)
			}
		}
	}
	m.assigned = next
	m.epoch = cg.assignmentEpoch
}

// nextEpoch bumps the group epoch after a membership or subscription change.
func (cg *consumerGroup) nextEpoch() {
	cg.epoch++
}

// consumerMember returns the KIP-848 member with id, or nil. Callers hold
// g.mu.
func (g *group) consumerMember(id string) *consumerMember {
	if g.consumer == nil || id == "" {
		return nil
	}
	return g.consumer.members[id]
}

// checkMemberEpoch validates a KIP-848 member's OffsetCommit: the epoch it
// sends must be its current one; an older one is STALE_MEMBER_EPOCH (the
// member may retry after its next heartbeat), a newer one FENCED.
func checkMemberEpoch(m *consumerMember, epoch int32) int16 {
	switch {
	case epoch < m.epoch:
		return kerr.StaleMemberEpoch.Code
	case epoch > m.epoch:
		return kerr.FencedMemberEpoch.Code
	}
	return 0
}

// consumerKind marks __consumer_offsets records holding KIP-848 state.
const consumerKind = "consumer"

// consumerGroupRecord is the KIP-848 state written to __consumer_offsets
// after every change, so a new coordinator carries on with the same epochs
// and assignments after a failover.
type consumerGroupRecord struct {
	Epoch           int32                 `json:"epoch"`
	AssignmentEpoch int32                 `json:"assignment_epoch"`
	Assignor        string                `json:"assignor"`
	Members         []consumerMemberState `json:"members"`
}

type consumerMemberState struct {
	ID               string             `json:"id"`
	ClientID         string             `json:"client_id"`
	ClientHost       string             `json:"client_host"`
	InstanceID       *string            `json:"instance_id,omitempty"`
	RackID           *string            `json:"rack_id,omitempty"`
	Epoch            int32              `json:"epoch"`
	Subscribed       []string           `json:"subscribed,omitempty"`
	Regex            string             `json:"regex,omitempty"`
	RebalanceTimeout int64              `json:"rebalance_timeout_ms"`
	Assigned         map[string][]int32 `json:"assigned"`
	Owned            map[string][]int32 `json:"owned"`
	Target           map[string][]int32 `json:"target"`
}

func (a assignment) record() map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for id, ps := range a {
		out[hex.EncodeToString(id[:])] = ps
	}
	return out
}

func assignmentFromRecord(m map[string][]int32) assignment {
	out := assignment{}
	for k, ps := range m {
		var id [16]byte
		if b, err := hex.DecodeString(k); err == nil && len(b) == 16 {
			copy(id[:], b)
			out[id] = slices.Clone(ps)
		}
	}
	return out
}

func (cg *consumerGroup) record() consumerGroupRecord {
	r := consumerGroupRecord{Epoch: cg.epoch, AssignmentEpoch: cg.assignmentEpoch, Assignor: cg.assignor}
	for _, id := range slices.Sorted(maps.Keys(cg.members)) {
		m := cg.members[id]
		r.Members = append(r.Members, consumerMemberState{
			ID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, InstanceID: m.instanceID, RackID: m.rackID,
			Epoch: m.epoch, Subscribed: m.subscribed, Regex: m.regex, RebalanceTimeout: m.rebalanceTimeout.Milliseconds(),
			Assigned: m.assigned.record(), Owned: m.owned.record(), Target: cg.target[id].record(),
		})
	}
	return r
}

// consumerGroupOf returns g's KIP-848 state, rebuilding it from the last
// record after a coordinator load; members get fresh session timers, as a
// new coordinator gives them. Callers hold g.mu.
func (c *Cluster) consumerGroupOf(g *group) *consumerGroup {
	g.ready() // binds the copy to its coordinator, for its timers
	if g.consumer != nil || g.consumerMeta == nil {
		return g.consumer
	}
	var r consumerGroupRecord
	if err := json.Unmarshal(g.consumerMeta, &r); err != nil {
		c.log.Warn("unreadable consumer group record", "group", g.id, "error", err)
		return nil
	}
	cg := newConsumerGroup()
	cg.epoch, cg.assignmentEpoch, cg.assignor = r.Epoch, r.AssignmentEpoch, r.Assignor
	for _, ms := range r.Members {
		m := &consumerMember{
			id: ms.ID, clientID: ms.ClientID, clientHost: ms.ClientHost, instanceID: ms.InstanceID, rackID: ms.RackID,
			epoch: ms.Epoch, subscribed: ms.Subscribed, regex: ms.Regex, rebalanceTimeout: time.Duration(ms.RebalanceTimeout) * time.Millisecond,
			assigned: assignmentFromRecord(ms.Assigned), owned: assignmentFromRecord(ms.Owned),
		}
		m.sent = m.assigned.clone()
		cg.members[m.id] = m
		cg.target[m.id] = assignmentFromRecord(ms.Target)
		c.touchConsumerMember(g, m)
	}
	cg.topicsSeen = c.subscribedPartitions(cg)
	cg.persisted, _ = json.Marshal(cg.record())
	g.consumer = cg
	return cg
}

// persistConsumerGroup writes g's KIP-848 state if it changed since the
// last write, and waits for it to commit. Callers hold g.writeMu, not g.mu.
func (c *Cluster) persistConsumerGroup(g *group) int16 {
	g.mu.Lock()
	cg := g.consumer
	if cg == nil {
		g.mu.Unlock()
		return 0
	}
	rec := cg.record()
	raw, _ := json.Marshal(rec)
	same := bytes.Equal(raw, cg.persisted)
	g.mu.Unlock()
	if same {
		return 0
	}
	var value any = rec
	if len(rec.Members) == 0 && len(g.offsetsSnapshot()) == 0 {
		value = nil // an empty group with nothing committed is forgotten
	}
	code := g.write([]coordinatorRecord{{key: recordKey{Kind: consumerKind, Group: g.id}, value: value}})
	if code == 0 {
		g.mu.Lock()
		cg.persisted = raw
		g.mu.Unlock()
	}
	return code
}

// offsetsSnapshot is a copy of the committed offsets. Callers must not
// hold g.mu.
func (g *group) offsetsSnapshot() map[topicPartition]committedOffset {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.offsets)
}
