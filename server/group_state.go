package server

// The classic group protocol's membership and rebalance state machine, as
// Kafka's group coordinator runs it. The request handlers are
// join_group.go, sync_group.go, heartbeat.go and leave_group.go.
//
//	Empty ──JoinGroup──► PreparingRebalance ──every member rejoined, or the
//	rebalance timeout──► CompletingRebalance ──leader's SyncGroup, group
//	metadata committed──► Stable
//
// A join by a new member, by the leader or by a member with new metadata,
// a LeaveGroup, a session expiry and a member that never syncs all send a
// Stable or CompletingRebalance group back to PreparingRebalance; members
// that did not rejoin by the rebalance timeout are removed when the join
// completes; a rebalance that nobody rejoins ends Empty; DeleteGroups ends
// an Empty group Dead. Heartbeats answer REBALANCE_IN_PROGRESS while a
// rebalance prepares, which is how members learn to rejoin.
//
// The group metadata (generation, protocol, leader, members with their
// subscription and assignment) is written to __consumer_offsets with
// acks=all before the leader's SyncGroup is answered, when a rebalance ends
// Empty and when a static member is replaced, as Kafka does. A new
// coordinator restores the membership from the last such record the first
// time the group is touched, with fresh session timers, so members that
// keep heartbeating do not notice the move.
//
// Timers (sessions, the rebalance, the pending sync) are AfterFunc
// callbacks on the cluster's clock that take g.mu. A watcher goroutine per group stops them when
// the cluster closes, and a callback that finds its group replaced (the
// shard was reloaded under a new leader) shuts the stale copy down.

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's names of the classic group states.
const (
	groupEmpty      = "Empty"
	groupPreparing  = "PreparingRebalance"
	groupCompleting = "CompletingRebalance"
	groupStable     = "Stable"
	groupDead       = "Dead"
)

// newMemberJoinTimeout bounds how long a new member may wait in a join
// without heartbeating: its connection may be long gone (Kafka's constant).
const newMemberJoinTimeout = 5 * time.Minute

// groupState is a group's classic membership, embedded in group and
// guarded by g.mu (writtenSeq excepted).
type groupState struct {
	// restored is true once the membership was rebuilt from g.meta after
	// a coordinator load. A metadata write of our own clears it again
	// (apply); members being non-nil then says there is nothing to rebuild.
	restored bool

	state        string
	protocolType string
	protocol     string
	generation   int32
	leader       string
	members      map[string]*member      // nil until ready
	statics      map[string]string       // group.instance.id → member id
	pending      map[string]*clock.Timer // ids given out with MEMBER_ID_REQUIRED, not yet back
	nextSeq      uint64

	joinTimer      *clock.Timer
	joinSeq        uint64 // invalidates a fired join timer
	initialDelay   bool   // the first rebalance of an empty group is waiting
	newMemberAdded bool   // ... and a member joined during the current delay
	syncTimer      *clock.Timer
	syncSeq        uint64
	awaitingSync   map[string]bool // members of this generation that have not synced

	shut bool          // timers stopped for good: closed, deleted or moved
	done chan struct{} // closed on shut, ending the watcher

	metaSeq    uint64 // snapshots taken
	writtenSeq uint64 // last snapshot written (g.writeMu)
}

type memberProtocol struct {
	name     string
	metadata []byte
}

// member is one classic group member.
type member struct {
	id, clientID, clientHost string
	instanceID               *string
	sessionTimeout           time.Duration
	rebalanceTimeout         time.Duration
	protocols                []memberProtocol
	assignment               []byte
	seq                      uint64 // join order: the longest-standing member leads
	isNew                    bool   // joined and not yet through a completed join
	joinedAt                 time.Time

	// join and sync are set while the member's JoinGroup or SyncGroup
	// waits; the connection may have gone, as in Kafka, where the member
	// still counts as joining. Each channel gets one result.
	join chan joinResult
	sync chan syncResult

	session  *clock.Timer
	timerSeq uint64
}

type joinResult struct {
	code           int16
	memberID       string
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	members        []kmsg.JoinGroupResponseMember
	skipAssignment bool
}

type syncResult struct {
	code       int16
	assignment []byte
}

func joinError(code int16, memberID string) joinResult {
	return joinResult{code: code, memberID: memberID, generation: -1}
}

// groupMeta is the value of a group metadata record (JSON).
type groupMeta struct {
	ProtocolType string       `json:"protocol_type"`
	Protocol     string       `json:"protocol"`
	Generation   int32        `json:"generation"`
	Leader       string       `json:"leader"`
	Timestamp    int64        `json:"timestamp"`
	Members      []memberMeta `json:"members"`
}

type memberMeta struct {
	ID                 string  `json:"member_id"`
	InstanceID         *string `json:"group_instance_id,omitempty"`
	ClientID           string  `json:"client_id"`
	ClientHost         string  `json:"client_host"`
	SessionTimeoutMs   int64   `json:"session_timeout_ms"`
	RebalanceTimeoutMs int64   `json:"rebalance_timeout_ms"`
	Subscription       []byte  `json:"subscription"`
	Assignment         []byte  `json:"assignment"`
}

type metaSnapshot struct {
	seq  uint64
	meta groupMeta
}

// ready initialises the membership on first use after a load, restoring
// it from the last group metadata record. Callers hold g.mu.
func (g *group) ready() {
	if g.members != nil {
		g.restored = true
		return
	}
	c := g.s.c
	g.restored = true
	g.members, g.statics, g.pending = map[string]*member{}, map[string]string{}, map[string]*clock.Timer{}
	g.state = groupEmpty
	g.done = make(chan struct{})
	if !c.goTracked(g.watch) {
		g.shut = true
	}
	if g.meta == nil {
		return
	}
	var md groupMeta
	if err := json.Unmarshal(g.meta, &md); err != nil {
		c.log.Warn("unreadable group metadata in "+offsetsTopic, "group", g.id, "error", err)
		return
	}
	g.protocolType, g.protocol, g.generation, g.leader = md.ProtocolType, md.Protocol, md.Generation, md.Leader
	for _, mm := range md.Members {
		m := &member{
			id: mm.ID, instanceID: mm.InstanceID, clientID: mm.ClientID, clientHost: mm.ClientHost,
			sessionTimeout:   time.Duration(mm.SessionTimeoutMs) * time.Millisecond,
			rebalanceTimeout: time.Duration(mm.RebalanceTimeoutMs) * time.Millisecond,
			protocols:        []memberProtocol{{md.Protocol, mm.Subscription}},
			assignment:       mm.Assignment,
			seq:              g.nextSeq,
		}
		g.nextSeq++
		g.members[m.id] = m
		if m.instanceID != nil {
			g.statics[*m.instanceID] = m.id
		}
		g.touch(m)
	}
	if len(g.members) > 0 {
		g.state = groupStable
		if g.members[g.leader] == nil {
			g.leader = g.oldestMember()
		}
	}
	c.log.Info("group restored", "group", g.id, "state", g.state, "generation", g.generation, "members", len(g.members))
}

// goTracked runs f on a goroutine that Close waits for, unless the cluster
// is closing.
func (c *Cluster) goTracked(f func()) bool {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	select {
	case <-c.closing:
		return false
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// watch stops the group's timers when the cluster closes.
func (g *group) watch() {
	select {
	case <-g.s.c.closing:
		g.mu.Lock()
		g.shutdown(kerr.CoordinatorNotAvailable.Code)
		g.mu.Unlock()
	case <-g.done:
	}
}

// goLocked runs f on a tracked goroutine. While the group is not shut its
// watcher is running, so the cluster's WaitGroup is above zero and may
// grow. Callers hold g.mu.
func (g *group) goLocked(f func()) {
	if g.shut {
		return
	}
	c := g.s.c
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// shutdown stops every timer and answers every waiting request with code.
// Callers hold g.mu.
func (g *group) shutdown(code int16) {
	if g.shut {
		return
	}
	g.shut = true
	stopTimer(g.joinTimer)
	stopTimer(g.syncTimer)
	for _, t := range g.pending {
		stopTimer(t)
	}
	for _, m := range g.members {
		stopTimer(m.session)
		m.deliverJoin(joinError(code, m.id))
		m.deliverSync(syncResult{code: code})
	}
	close(g.done)
}

func stopTimer(t *clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// after runs f under g.mu after d, unless the group shut down or is no
// longer the coordinator's copy by then: the timer is bound to the load
// of the group's shard, and a stale copy shuts down instead. Callers hold
// g.mu.
func (g *group) after(d time.Duration, f func()) *clock.Timer {
	if g.shut {
		return nil
	}
	sh := g.s.shard()
	if sh == nil {
		return nil
	}
	return sh.AfterFunc(g.s.at, d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		switch {
		case g.shut:
		case !g.s.holds(g):
			g.stopStale()
		default:
			f()
		}
	}, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.stopStale()
	})
}

// stopStale shuts down a copy of the group its coordinator no longer
// holds. Callers hold g.mu.
func (g *group) stopStale() {
	if !g.shut {
		g.s.c.log.Info("group moved; stopping the stale copy", "group", g.id, "broker", g.s.at.Leader)
		g.shutdown(kerr.NotCoordinator.Code)
	}
}

// current says whether g is still the group as its coordinator holds it:
// the shard was not reloaded, its partition's leadership did not move and
// the group was not replaced.
func (g *group) current() bool {
	sh := g.s.shard()
	return sh != nil && g.s.holds(g) && sh.Current(g.s.at)
}

func (m *member) deliverJoin(r joinResult) {
	if m.join != nil {
		m.join <- r
		m.join = nil
	}
}

func (m *member) deliverSync(r syncResult) {
	if m.sync != nil {
		m.sync <- r
		m.sync = nil
	}
}

// matches says whether protocols are exactly the member's, in order.
func (m *member) matches(protocols []memberProtocol) bool {
	return slices.EqualFunc(m.protocols, protocols, func(a, b memberProtocol) bool {
		return a.name == b.name && string(a.metadata) == string(b.metadata)
	})
}

func (m *member) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.name == protocol {
			return p.metadata
		}
	}
	return nil
}

// classicMemberID is Kafka's member id: the instance id (static members)
// or client id, a dash and a random UUID.
func classicMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// sortedMembers lists the members in join order. Callers hold g.mu.
func (g *group) sortedMembers() []*member {
	ms := slices.Collect(maps.Values(g.members))
	slices.SortFunc(ms, func(a, b *member) int { return cmp.Compare(a.seq, b.seq) })
	return ms
}

func (g *group) oldestMember() string {
	if ms := g.sortedMembers(); len(ms) > 0 {
		return ms[0].id
	}
	return ""
}

// hasClassicMembers reports whether the classic protocol has members in g.
// Callers hold g.mu.
func (g *group) hasClassicMembers() bool {
	g.ready()
	return len(g.members) > 0 || len(g.pending) > 0
}

// consumerProtocol returns g's KIP-848 state when g is a KIP-848 group:
// it has that state and no classic members or metadata. Callers hold g.mu.
func (g *group) consumerProtocol() *consumerGroup {
	g.ready()
	cg := g.s.c.consumerGroupOf(g)
	if cg == nil || len(g.members) > 0 || len(cg.Members) == 0 && g.meta != nil {
		return nil
	}
	return cg
}

// empty says whether neither protocol has members. Callers hold g.mu.
func (g *group) empty() bool {
	cg := g.s.c.consumerGroupOf(g)
	return len(g.members) == 0 && (cg == nil || len(cg.Members) == 0)
}

// addMember adds m, which starts the group's protocol type if it is the
// first, and leads if nobody does. Callers hold g.mu.
func (g *group) addMember(m *member, protocolType string) {
	if len(g.members) == 0 {
		g.protocolType = protocolType
	}
	m.seq = g.nextSeq
	g.nextSeq++
	g.members[m.id] = m
	g.s.c.emitGroup(EventGroupMemberJoined, g, m.id, "", protocolType)
	if m.instanceID != nil {
		g.statics[*m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
	if g.initialDelay {
		g.newMemberAdded = true
	}
}

// removeMember drops m, answering its waiting requests with code. Callers
// hold g.mu and decide whether the group rebalances.
func (g *group) removeMember(m *member, code int16) {
	m.deliverJoin(joinError(code, m.id))
	m.deliverSync(syncResult{code: code})
	stopTimer(m.session)
	m.timerSeq++
	delete(g.members, m.id)
	delete(g.awaitingSync, m.id)
	if m.instanceID != nil && g.statics[*m.instanceID] == m.id {
		delete(g.statics, *m.instanceID)
	}
	if g.leader == m.id {
		g.leader = g.oldestMember()
	}
}

// removeAndRebalance removes a member that left or expired and moves the
// group on, as Kafka's removeMemberAndUpdateGroup. Callers hold g.mu.
func (g *group) removeAndRebalance(m *member, reason string) {
	g.removeMember(m, kerr.UnknownMemberID.Code)
	switch g.state {
	case groupStable, groupCompleting:
		g.prepareRebalance(reason)
	case groupPreparing:
		g.tryCompleteJoin()
	}
}

// removePending forgets a member id given out with MEMBER_ID_REQUIRED.
// Callers hold g.mu.
func (g *group) removePending(id string) {
	stopTimer(g.pending[id])
	delete(g.pending, id)
	if g.state == groupPreparing {
		g.tryCompleteJoin()
	}
}

// addPending remembers a member id given out with MEMBER_ID_REQUIRED for
// one session timeout. Callers hold g.mu.
func (g *group) addPending(id string, session time.Duration) {
	var t *clock.Timer
	t = g.after(session, func() {
		if g.pending[id] == t {
			g.s.c.log.Info("pending group member expired", "group", g.id, "member", id)
			g.removePending(id)
		}
	})
	g.pending[id] = t
}

// touch restarts m's session timer: a heartbeat, join or sync. Callers
// hold g.mu.
func (g *group) touch(m *member) {
	stopTimer(m.session)
	m.timerSeq++
	seq := m.timerSeq
	m.session = g.after(m.sessionTimeout, func() {
		if m.timerSeq != seq || g.members[m.id] != m {
			return
		}
		// A member waiting in a join or sync is alive as far as Kafka
		// knows, unless a new member waited too long.
		if m.sync != nil || m.join != nil && (!m.isNew || g.s.c.cfg.Clock.Since(m.joinedAt) < newMemberJoinTimeout) {
			g.touch(m)
			return
		}
		g.s.c.log.Info("group member session expired", "group", g.id, "member", m.id, "session_timeout", m.sessionTimeout)
		g.s.c.emitGroup(EventGroupMemberExpired, g, m.id, "session timeout", "")
		g.removeAndRebalance(m, "session timeout of member "+m.id)
	})
}

// validateMember checks that memberID is in the group and, for a static
// member, still the current incarnation of its instance. Callers hold g.mu.
func (g *group) validateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		cur, ok := g.statics[*instanceID]
		switch {
		case ok && cur != memberID:
			return kerr.FencedInstanceID.Code
		case !ok:
			return kerr.UnknownMemberID.Code
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// checkCommit validates an OffsetCommit against the membership as Kafka
// does: a Dead group is COORDINATOR_NOT_AVAILABLE; generation -1 to a
// group without members is a simple commit; otherwise a commit naming a
// member (or a generation) must come from a current member of the current
// generation, and one naming none is UNKNOWN_MEMBER_ID once the group has
// members; a member's commit during CompletingRebalance
// is REBALANCE_IN_PROGRESS (one during PreparingRebalance is fine: that is
// how eager members commit before they rejoin). Callers hold g.mu.
func (g *group) checkCommit(memberID string, generation int32, instanceID *string) int16 {
	g.ready()
	switch {
	case g.state == groupDead:
		return kerr.CoordinatorNotAvailable.Code
	case generation < 0 && g.empty():
		return 0 // a simple commit: the group only stores offsets
	case generation >= 0 || memberID != "" || instanceID != nil:
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
		if g.state == groupCompleting {
			return kerr.RebalanceInProgress.Code
		}
	case !g.empty():
		return kerr.UnknownMemberID.Code
	}
	return 0
}
func (cn *conn) clientHost() string {
	host := cn.nc.RemoteAddr().String()
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = strings.Trim(host[:i], "[]")
	}
	return "/" + host
}
