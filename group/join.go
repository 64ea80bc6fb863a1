package group

// The classic protocol's requests: JoinGroup (with static members'
// replacement), the leader's SyncGroup, LeaveGroup and Heartbeat.

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// JoinRequest is a JoinGroup as the state machine sees it.
type JoinRequest struct {
	Version            int16
	MemberID           string
	InstanceID         *string
	ClientID, Host     string
	Session, Rebalance time.Duration
	ProtocolType       string
	Protocols          []Protocol
	// Downgrade says group.consumer.migration.policy allows an online
	// downgrade (a classic static member replacing a consumer group's last
	// consumer-protocol member turns it classic).
	Downgrade bool
}

// StaticRejoin is a static member replaced in a Stable group, answered
// once the new metadata is written (FinishStaticRejoin).
type StaticRejoin struct {
	Snap                   MetaSnapshot
	oldID, newID           string
	oldProtocols           []Protocol
	oldLeader              string
	generation             int32
	ch                     chan JoinResult
	supportsSkipAssignment bool
}

// join applies a JoinGroup: it answers at once (res), or returns the
// channel the answer will come on, and for a static member replaced in a
// Stable group the metadata to write before answering. Callers hold g.mu.
func (g *Classic) Join(r JoinRequest) (res JoinResult, ch chan JoinResult, static *StaticRejoin) {
	if g.State == Dead {
		return JoinError(kerr.CoordinatorNotAvailable.Code, r.MemberID), nil, nil
	}
	if g.host.ConsumerMembers() > 0 {
		return JoinError(kerr.InconsistentGroupProtocol.Code, r.MemberID), nil, nil
	}
	if !g.supports(r.ProtocolType, r.Protocols) {
		return JoinError(kerr.InconsistentGroupProtocol.Code, r.MemberID), nil, nil
	}
	if r.MemberID == "" {
		return g.joinNew(r)
	}
	if _, ok := g.PendingMembers[r.MemberID]; ok {
		stopTimer(g.PendingMembers[r.MemberID])
		delete(g.PendingMembers, r.MemberID)
		return g.addAndJoin(r.MemberID, r)
	}
	if code := g.ValidateMember(r.MemberID, r.InstanceID); code != 0 {
		return JoinError(code, r.MemberID), nil, nil
	}
	m := g.Members[r.MemberID]
	switch g.State {
	case PreparingRebalance:
		ch = g.updateMember(m, r)
		g.tryCompleteJoin()
		return JoinResult{}, ch, nil
	case CompletingRebalance:
		if m.matches(r.Protocols) {
			// It lost the answer to its join: answer it again.
			res = g.currentJoin(m.ID)
			if m.ID == g.Leader {
				res.Members = g.leaderMembers()
			}
			g.Touch(m)
			return res, nil, nil
		}
	case Stable:
		if m.ID != g.Leader && m.matches(r.Protocols) {
			g.Touch(m)
			return g.currentJoin(m.ID), nil, nil
		}
		// The leader rejoins to rebalance for changes the members'
		// metadata does not show (a topic grew, say).
	}
	ch = g.updateMember(m, r)
	g.prepareRebalance("Member " + m.ID + " rejoined with new metadata or as the leader")
	return JoinResult{}, ch, nil
}

// joinNew handles a join without a member id. Callers hold g.mu.
func (g *Classic) joinNew(r JoinRequest) (JoinResult, chan JoinResult, *StaticRejoin) {
	if r.InstanceID != nil {
		if old, ok := g.Statics[*r.InstanceID]; ok {
			return g.rejoinStatic(g.Members[old], r)
		}
		return g.addAndJoin(classicMemberID(r.ClientID, r.InstanceID), r)
	}
	id := classicMemberID(r.ClientID, nil)
	if r.Version >= 4 {
		g.addPending(id, r.Session)
		return JoinError(kerr.MemberIDRequired.Code, id), nil, nil
	}
	return g.addAndJoin(id, r)
}

// addAndJoin adds a new member waiting in its join and rebalances.
// Callers hold g.mu.
func (g *Classic) addAndJoin(id string, r JoinRequest) (JoinResult, chan JoinResult, *StaticRejoin) {
	m := &Member{ID: id, InstanceID: r.InstanceID, isNew: true, joinedAt: g.host.Now()}
	ch := g.updateMember(m, r)
	g.addMember(m, r.ProtocolType)
	g.Touch(m)
	switch g.State {
	case PreparingRebalance:
		g.tryCompleteJoin()
	default:
		g.prepareRebalance("new member " + id + " joined")
	}
	return JoinResult{}, ch, nil
}

// updateMember takes a member's new join: its protocols, timeouts and
// waiting request (an earlier one still waiting is told to retry).
// Callers hold g.mu.
func (g *Classic) updateMember(m *Member, r JoinRequest) chan JoinResult {
	m.deliverJoin(JoinError(kerr.RebalanceInProgress.Code, m.ID))
	m.Protocols, m.SessionTimeout, m.RebalanceTimeout = r.Protocols, r.Session, r.Rebalance
	m.ClientID, m.ClientHost = r.ClientID, r.Host
	m.join = make(chan JoinResult, 1)
	return m.join
}

// rejoinStatic replaces a static member's previous incarnation by a new
// member id. In a Stable group whose protocol stays, that needs no
// rebalance, only a metadata write. Callers hold g.mu.
func (g *Classic) rejoinStatic(m *Member, r JoinRequest) (JoinResult, chan JoinResult, *StaticRejoin) {
	oldID, newID := m.ID, classicMemberID(r.ClientID, r.InstanceID)
	oldLeader, oldProtocols := g.Leader, m.Protocols
	g.host.Log().Info("static member rejoined", "group", g.ID, "instance", *r.InstanceID, "old", oldID, "new", newID)
	m.deliverJoin(JoinError(kerr.FencedInstanceID.Code, oldID))
	m.deliverSync(SyncResult{Code: kerr.FencedInstanceID.Code})
	delete(g.Members, oldID)
	m.ID = newID
	g.Members[newID] = m
	g.Statics[*r.InstanceID] = newID
	if g.Leader == oldID {
		g.Leader = newID
	}
	if g.AwaitingSync[oldID] {
		delete(g.AwaitingSync, oldID)
		g.AwaitingSync[newID] = true
	}
	ch := g.updateMember(m, r)
	g.Touch(m)
	switch g.State {
	case Stable:
		if g.selectProtocol() == g.Protocol {
			return JoinResult{}, ch, &StaticRejoin{
				Snap: g.SnapshotMeta(nil), oldID: oldID, newID: newID, oldProtocols: oldProtocols, oldLeader: oldLeader,
				generation: g.Generation, ch: ch, supportsSkipAssignment: r.Version >= 9,
			}
		}
		g.prepareRebalance("static member " + newID + " rejoined with another protocol")
	case CompletingRebalance:
		// The leader may be assigning to the old id: rebalance.
		g.prepareRebalance("static member " + newID + " rejoined during CompletingRebalance")
	case PreparingRebalance:
		g.tryCompleteJoin()
	}
	return JoinResult{}, ch, nil
}

// finishStaticRejoin answers a replaced static member once its metadata
// write is done: on failure the old incarnation comes back; on success it
// gets the current generation, unless a rebalance began meanwhile, which
// it then takes part in. A returning leader that knows KIP-814 (v9) is
// told it leads but must not assign; an older one is told the old id
// leads, so it syncs as a follower. Callers hold g.mu.
func (g *Classic) FinishStaticRejoin(sr *StaticRejoin, code int16) {
	m := g.Members[sr.newID]
	if m == nil || m.join != sr.ch || g.State != Stable || g.Generation != sr.generation {
		return // answered already, or taking part in a rebalance that began meanwhile
	}
	if code != 0 {
		delete(g.Members, sr.newID)
		m.ID, m.Protocols = sr.oldID, sr.oldProtocols
		g.Members[sr.oldID] = m
		g.Statics[*m.InstanceID] = sr.oldID
		if g.Leader == sr.newID {
			g.Leader = sr.oldID
		}
		m.deliverJoin(JoinError(code, ""))
		return
	}
	res := g.currentJoin(sr.newID)
	if sr.supportsSkipAssignment {
		res.SkipAssignment = true
		if g.Leader == sr.newID {
			res.Members = g.leaderMembers()
		}
	} else {
		res.Leader = sr.oldLeader
	}
	m.deliverJoin(res)
}

// completeSync ends CompletingRebalance once the leader's assignments are
// written (code 0): the group is Stable and every waiting member gets its
// assignment. A failed write fails the waiting members and rebalances.
// Nothing happens if a rebalance began meanwhile. Callers hold g.mu.
func (g *Classic) CompleteSync(generation int32, assignments map[string][]byte, code int16) {
	if g.Generation != generation || g.State != CompletingRebalance {
		return
	}
	if code != 0 {
		g.host.Log().Warn("writing group metadata failed; rebalancing", "group", g.ID, "generation", generation, "error", kerr.ErrorForCode(code))
		g.resetAssignments(code)
		g.prepareRebalance("group metadata write failed")
		return
	}
	for id, m := range g.Members {
		m.Assignment = assignments[id] // every member: joins would have rebalanced
	}
	g.State = Stable
	g.host.Log().Info("group stable", "group", g.ID, "generation", g.Generation, "members", len(g.Members))
	g.emit(RebalanceCompleted, "", "", fmt.Sprintf("stable, %d members", len(g.Members)))
	for _, m := range g.Members {
		m.deliverSync(SyncResult{Assignment: m.Assignment})
	}
}

// Leave removes one member (LeaveGroup names it by id or, for a static
// member, by instance id). Callers hold the group's lock.
func (g *Classic) Leave(memberID string, instanceID, why *string) int16 {
	reason := "member left"
	if why != nil {
		reason += ": " + *why
	}
	id := memberID
	_, pending := g.PendingMembers[id]
	switch {
	case id == "" && instanceID != nil:
		cur, ok := g.Statics[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		id = cur
	case pending:
		g.removePending(id)
		return 0
	default:
		if code := g.ValidateMember(id, instanceID); code != 0 {
			return code
		}
	}
	g.host.Log().Info("group Member leaving", "group", g.ID, "member", id, "reason", reason)
	g.emit(MemberLeft, id, reason, "")
	g.removeAndRebalance(g.Members[id], reason+" ("+id+")")
	return 0
}

// SyncRequest is a SyncGroup as the state machine sees it.
type SyncRequest struct {
	MemberID     string
	InstanceID   *string
	Generation   int32
	ProtocolType *string // nil: not checked (before v5)
	Protocol     *string
	// Assignments are the leader's, by member id.
	Assignments map[string][]byte
}

// LeaderSync is what the leader's SyncGroup writes before the group is
// Stable: CompleteSync takes the write's outcome.
type LeaderSync struct {
	Snap        MetaSnapshot
	Generation  int32
	Assignments map[string][]byte
}

// Sync applies a SyncGroup. It answers at once (ch nil), or returns the
// channel the answer will come on; for the leader's SyncGroup of a
// CompletingRebalance group it also returns the metadata to write, after
// which CompleteSync makes the group Stable. protocolType and protocol are
// the group's, for the answer. Callers hold the group's lock.
func (g *Classic) Sync(req SyncRequest) (res SyncResult, protocolType, protocol string, ch chan SyncResult, leader *LeaderSync) {
	code := g.ValidateMember(req.MemberID, req.InstanceID)
	switch {
	case g.State == Dead:
		code = kerr.CoordinatorNotAvailable.Code
	case code != 0:
	case req.Generation != g.Generation:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != g.ProtocolType, req.Protocol != nil && *req.Protocol != g.Protocol:
		code = kerr.InconsistentGroupProtocol.Code
	case g.State == Empty:
		code = kerr.UnknownMemberID.Code
	case g.State == PreparingRebalance:
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		return SyncResult{Code: code}, "", "", nil, nil
	}
	protocolType, protocol = g.ProtocolType, g.Protocol
	m := g.Members[req.MemberID]
	delete(g.AwaitingSync, m.ID)
	g.Touch(m)
	if g.State == Stable {
		return SyncResult{Assignment: m.Assignment}, protocolType, protocol, nil, nil
	}

	// CompletingRebalance: wait for the leader's assignment.
	m.deliverSync(SyncResult{Code: kerr.RebalanceInProgress.Code}) // a previous SyncGroup still waiting
	ch = make(chan SyncResult, 1)
	m.sync = ch
	if m.ID == g.Leader {
		assignments := map[string][]byte{}
		for id, a := range req.Assignments {
			if g.Members[id] != nil {
				assignments[id] = a
			}
		}
		for id := range g.Members {
			if assignments[id] == nil {
				assignments[id] = []byte{}
			}
		}
		leader = &LeaderSync{Snap: g.SnapshotMeta(assignments), Generation: g.Generation, Assignments: assignments}
	}
	return SyncResult{}, protocolType, protocol, ch, leader
}

// Heartbeat applies a classic member's Heartbeat: its session restarts;
// REBALANCE_IN_PROGRESS tells it to rejoin. Callers hold the group's lock.
func (g *Classic) Heartbeat(memberID string, instanceID *string, generation int32) int16 {
	if g.State == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.ValidateMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != g.Generation {
		return kerr.IllegalGeneration.Code
	}
	g.Touch(g.Members[memberID])
	if g.State == PreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// NoMembers says whether neither protocol has members. Callers hold the
// group's lock.
func (g *Classic) NoMembers() bool { return g.empty() }
