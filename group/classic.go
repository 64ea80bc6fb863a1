package group

// The classic group protocol's membership and rebalance state machine, as
// Kafka's group coordinator runs it:
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
// coordinator restores the membership from the last such record (Restore)
// with fresh session timers, so members that keep heartbeating do not
// notice the move.
//
// Classic is soft state: its timers (sessions, the rebalance, the pending
// sync) and the channels waiting JoinGroups and SyncGroups are answered on
// live in the coordinator's shard; what must survive is in the metadata
// record. The coordinator guards a Classic with its group's lock and
// gives it a ClassicHost: timers bound to the shard's load, events, the
// metadata writes.

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's names of the classic group states.
const (
	Empty               = "Empty"
	PreparingRebalance  = "PreparingRebalance"
	CompletingRebalance = "CompletingRebalance"
	Stable              = "Stable"
	Dead                = "Dead"
)

// newMemberJoinTimeout bounds how long a new member may wait in a join
// without heartbeating: its connection may be long gone (Kafka's constant).
const newMemberJoinTimeout = 5 * time.Minute

// ClassicHost is what a classic group needs of its coordinator.
type ClassicHost interface {
	// After runs f under the group's lock after d, unless the group shut
	// down or its coordinator moved by then (nil when it cannot).
	After(d time.Duration, f func()) *clock.Timer
	// Emit reports a change of the group.
	Emit(ev Event)
	// PersistAsync writes the group's metadata in the background, through
	// the same Write and Replay as every write (a timer or a leave ended a
	// rebalance Empty under the group's lock, where no write may wait).
	PersistAsync(snap MetaSnapshot)
	// ConsumerMembers is the number of members on the group's KIP-848
	// side (a group has members of one protocol at a time).
	ConsumerMembers() int
	// Now is the coordinator's clock.
	Now() time.Time
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay() time.Duration
	Log() *slog.Logger
}

// Classic is a group's classic membership. Its lock is the group's.
type Classic struct {
	ID   string
	host ClassicHost

	State          string
	ProtocolType   string
	Protocol       string
	Generation     int32
	Leader         string
	Members        map[string]*Member      // nil until restored (Restore)
	Statics        map[string]string       // group.instance.id → member id
	PendingMembers map[string]*clock.Timer // ids given out with MEMBER_ID_REQUIRED, not yet back
	nextSeq        uint64

	joinTimer      *clock.Timer
	joinSeq        uint64 // invalidates a fired join timer
	initialDelay   bool   // the first rebalance of an empty group is waiting
	newMemberAdded bool   // ... and a member joined during the current delay
	syncTimer      *clock.Timer
	syncSeq        uint64
	AwaitingSync   map[string]bool // members of this generation that have not synced

	Shut bool // timers stopped for good: closed, deleted or moved

	metaSeq uint64 // snapshots taken
}

// Protocol is one protocol a member supports, with its metadata.
type Protocol struct {
	Name     string
	Metadata []byte
}

// Member is one classic group member.
type Member struct {
	ID, ClientID, ClientHost string
	InstanceID               *string
	SessionTimeout           time.Duration
	RebalanceTimeout         time.Duration
	Protocols                []Protocol
	Assignment               []byte
	seq                      uint64 // join order: the longest-standing member leads
	isNew                    bool   // joined and not yet through a completed join
	joinedAt                 time.Time

	// join and sync are set while the member's JoinGroup or SyncGroup
	// waits; the connection may have gone, as in Kafka, where the member
	// still counts as joining. Each channel gets one result.
	join chan JoinResult
	sync chan SyncResult

	session  *clock.Timer
	timerSeq uint64
}

// JoinResult is a JoinGroup answer.
type JoinResult struct {
	Code           int16
	MemberID       string
	Generation     int32
	ProtocolType   string
	Protocol       string
	Leader         string
	Members        []kmsg.JoinGroupResponseMember
	SkipAssignment bool
}

// SyncResult is a SyncGroup answer.
type SyncResult struct {
	Code       int16
	Assignment []byte
}

// JoinError is a failed JoinGroup's answer.
func JoinError(code int16, memberID string) JoinResult {
	return JoinResult{Code: code, MemberID: memberID, Generation: -1}
}

// Meta is the value of a group metadata record (JSON).
type Meta struct {
	ProtocolType string       `json:"protocol_type"`
	Protocol     string       `json:"protocol"`
	Generation   int32        `json:"generation"`
	Leader       string       `json:"leader"`
	Timestamp    int64        `json:"timestamp"`
	Members      []MemberMeta `json:"members"`
}

// MemberMeta is one member in a Meta.
type MemberMeta struct {
	ID                 string  `json:"member_id"`
	InstanceID         *string `json:"group_instance_id,omitempty"`
	ClientID           string  `json:"client_id"`
	ClientHost         string  `json:"client_host"`
	SessionTimeoutMs   int64   `json:"session_timeout_ms"`
	RebalanceTimeoutMs int64   `json:"rebalance_timeout_ms"`
	Subscription       []byte  `json:"subscription"`
	Assignment         []byte  `json:"assignment"`
}

// MetaSnapshot is a metadata record to write; Seq orders the snapshots.
type MetaSnapshot struct {
	Seq  uint64
	Meta Meta
}

// NewClassic is an Empty classic group id on host.
func NewClassic(id string, host ClassicHost) Classic {
	return Classic{ID: id, host: host}
}

// Restore initialises the membership on first use after a load, from the
// last group metadata record (md nil: none): every member comes back with
// a fresh session, and a group with members is Stable. Callers hold the
// group's lock.
func (g *Classic) Restore(md *Meta) {
	g.Members, g.Statics, g.PendingMembers = map[string]*Member{}, map[string]string{}, map[string]*clock.Timer{}
	g.State = Empty
	if md == nil {
		return
	}
	g.ProtocolType, g.Protocol, g.Generation, g.Leader = md.ProtocolType, md.Protocol, md.Generation, md.Leader
	for _, mm := range md.Members {
		m := &Member{
			ID: mm.ID, InstanceID: mm.InstanceID, ClientID: mm.ClientID, ClientHost: mm.ClientHost,
			SessionTimeout:   time.Duration(mm.SessionTimeoutMs) * time.Millisecond,
			RebalanceTimeout: time.Duration(mm.RebalanceTimeoutMs) * time.Millisecond,
			Protocols:        []Protocol{{md.Protocol, mm.Subscription}},
			Assignment:       mm.Assignment,
			seq:              g.nextSeq,
		}
		g.nextSeq++
		g.Members[m.ID] = m
		if m.InstanceID != nil {
			g.Statics[*m.InstanceID] = m.ID
		}
		g.Touch(m)
	}
	if len(g.Members) > 0 {
		g.State = Stable
		if g.Members[g.Leader] == nil {
			g.Leader = g.oldestMember()
		}
	}
	g.host.Log().Info("group restored", "group", g.ID, "state", g.State, "generation", g.Generation, "members", len(g.Members))
}

// emit reports a change of the group at its current generation.
func (g *Classic) emit(t EventType, member, reason, detail string) {
	g.host.Emit(Event{Type: t, Epoch: g.Generation, Member: member, Reason: reason, Detail: detail})
}

// HasMembers reports whether the classic protocol has members, or ids
// given out that may come back. Callers hold the group's lock.
func (g *Classic) HasMembers() bool {
	return len(g.Members) > 0 || len(g.PendingMembers) > 0
}

// empty says whether neither protocol has members.
func (g *Classic) empty() bool {
	return len(g.Members) == 0 && g.host.ConsumerMembers() == 0
}

// Shutdown stops every timer and answers every waiting request with code;
// false when it was shut already. Callers hold the group's lock.
func (g *Classic) Shutdown(code int16) bool {
	if g.Shut {
		return false
	}
	g.Shut = true
	stopTimer(g.joinTimer)
	stopTimer(g.syncTimer)
	for _, t := range g.PendingMembers {
		stopTimer(t)
	}
	for _, m := range g.Members {
		stopTimer(m.session)
		m.deliverJoin(JoinError(code, m.ID))
		m.deliverSync(SyncResult{Code: code})
	}
	return true
}

func stopTimer(t *clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

func (m *Member) deliverJoin(r JoinResult) {
	if m.join != nil {
		m.join <- r
		m.join = nil
	}
}

func (m *Member) deliverSync(r SyncResult) {
	if m.sync != nil {
		m.sync <- r
		m.sync = nil
	}
}

// matches says whether protocols are exactly the member's, in order.
func (m *Member) matches(protocols []Protocol) bool {
	return slices.EqualFunc(m.Protocols, protocols, func(a, b Protocol) bool {
		return a.Name == b.Name && string(a.Metadata) == string(b.Metadata)
	})
}

func (m *Member) MetadataFor(protocol string) []byte {
	for _, p := range m.Protocols {
		if p.Name == protocol {
			return p.Metadata
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
func (g *Classic) SortedMembers() []*Member {
	ms := slices.Collect(maps.Values(g.Members))
	slices.SortFunc(ms, func(a, b *Member) int { return cmp.Compare(a.seq, b.seq) })
	return ms
}

func (g *Classic) oldestMember() string {
	if ms := g.SortedMembers(); len(ms) > 0 {
		return ms[0].ID
	}
	return ""
}

// addMember adds m, which starts the group's protocol type if it is the
// first, and leads if nobody does. Callers hold g.mu.
func (g *Classic) addMember(m *Member, protocolType string) {
	if len(g.Members) == 0 {
		g.ProtocolType = protocolType
	}
	m.seq = g.nextSeq
	g.nextSeq++
	g.Members[m.ID] = m
	g.emit(MemberJoined, m.ID, "", protocolType)
	if m.InstanceID != nil {
		g.Statics[*m.InstanceID] = m.ID
	}
	if g.Leader == "" {
		g.Leader = m.ID
	}
	if g.initialDelay {
		g.newMemberAdded = true
	}
}

// removeMember drops m, answering its waiting requests with code. Callers
// hold g.mu and decide whether the group rebalances.
func (g *Classic) removeMember(m *Member, code int16) {
	m.deliverJoin(JoinError(code, m.ID))
	m.deliverSync(SyncResult{Code: code})
	stopTimer(m.session)
	m.timerSeq++
	delete(g.Members, m.ID)
	delete(g.AwaitingSync, m.ID)
	if m.InstanceID != nil && g.Statics[*m.InstanceID] == m.ID {
		delete(g.Statics, *m.InstanceID)
	}
	if g.Leader == m.ID {
		g.Leader = g.oldestMember()
	}
}

// removeAndRebalance removes a member that left or expired and moves the
// group on, as Kafka's removeMemberAndUpdateGroup. Callers hold g.mu.
func (g *Classic) removeAndRebalance(m *Member, reason string) {
	g.removeMember(m, kerr.UnknownMemberID.Code)
	switch g.State {
	case Stable, CompletingRebalance:
		g.prepareRebalance(reason)
	case PreparingRebalance:
		g.tryCompleteJoin()
	}
}

// removePending forgets a member id given out with MEMBER_ID_REQUIRED.
// Callers hold g.mu.
func (g *Classic) removePending(id string) {
	stopTimer(g.PendingMembers[id])
	delete(g.PendingMembers, id)
	if g.State == PreparingRebalance {
		g.tryCompleteJoin()
	}
}

// addPending remembers a member id given out with MEMBER_ID_REQUIRED for
// one session timeout. Callers hold g.mu.
func (g *Classic) addPending(id string, session time.Duration) {
	var t *clock.Timer
	t = g.host.After(session, func() {
		if g.PendingMembers[id] == t {
			g.host.Log().Info("pending group Member expired", "group", g.ID, "member", id)
			g.removePending(id)
		}
	})
	g.PendingMembers[id] = t
}

// touch restarts m's session timer: a heartbeat, join or sync. Callers
// hold g.mu.
func (g *Classic) Touch(m *Member) {
	stopTimer(m.session)
	m.timerSeq++
	seq := m.timerSeq
	m.session = g.host.After(m.SessionTimeout, func() {
		if m.timerSeq != seq || g.Members[m.ID] != m {
			return
		}
		// A member waiting in a join or sync is alive as far as Kafka
		// knows, unless a new member waited too long.
		if m.sync != nil || m.join != nil && (!m.isNew || g.host.Now().Sub(m.joinedAt) < newMemberJoinTimeout) {
			g.Touch(m)
			return
		}
		g.host.Log().Info("group Member session expired", "group", g.ID, "member", m.ID, "session_timeout", m.SessionTimeout)
		g.emit(MemberExpired, m.ID, "session timeout", "")
		g.removeAndRebalance(m, "session timeout of Member "+m.ID)
	})
}

// validateMember checks that memberID is in the group and, for a static
// Member, still the current incarnation of its instance. Callers hold g.mu.
func (g *Classic) ValidateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		cur, ok := g.Statics[*instanceID]
		switch {
		case ok && cur != memberID:
			return kerr.FencedInstanceID.Code
		case !ok:
			return kerr.UnknownMemberID.Code
		}
	}
	if g.Members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// checkCommit validates an OffsetCommit against the membership as Kafka
// does: a Dead group is COORDINATOR_NOT_AVAILABLE; generation -1 to a
// group without members is a simple commit; otherwise a commit naming a
// Member (or a generation) must come from a current member of the current
// generation, and one naming none is UNKNOWN_MEMBER_ID once the group has
// members; a member's commit during CompletingRebalance
// is REBALANCE_IN_PROGRESS (one during PreparingRebalance is fine: that is
// how eager members commit before they rejoin). Callers hold g.mu.
func (g *Classic) CheckCommit(memberID string, generation int32, instanceID *string) int16 {
	switch {
	case g.State == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case generation < 0 && g.empty():
		return 0 // a simple commit: the group only stores offsets
	case generation >= 0 || memberID != "" || instanceID != nil:
		if code := g.ValidateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.Generation {
			return kerr.IllegalGeneration.Code
		}
		if g.State == CompletingRebalance {
			return kerr.RebalanceInProgress.Code
		}
	case !g.empty():
		return kerr.UnknownMemberID.Code
	}
	return 0
}
