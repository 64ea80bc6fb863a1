package server

// JoinGroup, versions 0-9.
//
// A member without an id joining at v4+ gets MEMBER_ID_REQUIRED and a
// generated id (client id, or instance id for static members, "-" and a
// UUID) and must join again with it; older versions, and static members,
// join at once. A join waits until the rebalance completes: every member
// has rejoined (and every id given out came back), or the rebalance
// timeout (the members' longest) passed and those that did not rejoin were
// removed; the first rebalance of an empty group waits
// group.initial.rebalance.delay.ms first. The first member to join leads
// and gets every member's metadata for the chosen protocol, the one every
// member supports with the most first-choice votes. A follower rejoining a
// Stable group with unchanged metadata just gets the current generation.
//
// A static member (group.instance.id) joining under a new id replaces its
// previous incarnation, whose requests then get FENCED_INSTANCE_ID; in a
// Stable group whose protocol would not change that costs no rebalance:
// the metadata is written and the current generation answered (v9 tells a
// returning leader to skip the assignment).
//
// Errors: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT (outside
// group.min/max.session.timeout.ms), INCONSISTENT_GROUP_PROTOCOL (no
// protocol in common, another protocol type, or a KIP-848 group with
// members), UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, COORDINATOR_NOT_AVAILABLE
// for a deleted group, NOT_COORDINATOR.

import (
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinRequest is a JoinGroup as the state machine sees it.
type joinRequest struct {
	version            int16
	memberID           string
	instanceID         *string
	clientID, host     string
	session, rebalance time.Duration
	protocolType       string
	protocols          []memberProtocol
}

// staticRejoin is a static member replaced in a Stable group, answered
// once the new metadata is written.
type staticRejoin struct {
	snap                   metaSnapshot
	oldID, newID           string
	oldProtocols           []memberProtocol
	oldLeader              string
	generation             int32
	ch                     chan joinResult
	supportsSkipAssignment bool
}

func (cn *conn) handleJoinGroup(req *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		resp.ErrorCode, resp.Generation = errGroupAuth, -1
		return resp, nil
	}
	r := joinRequest{
		version: req.Version, memberID: req.MemberID, instanceID: req.InstanceID, clientID: cn.hdr.ClientID, host: cn.clientHost(),
		session: time.Duration(req.SessionTimeoutMillis) * time.Millisecond, protocolType: req.ProtocolType,
	}
	r.rebalance = r.session // v0 has no rebalance timeout
	if req.Version >= 1 {
		r.rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	for _, p := range req.Protocols {
		r.protocols = append(r.protocols, memberProtocol{p.Name, p.Metadata})
	}
	res, ok := cn.joinGroup(req.Group, r)
	if !ok {
		return nil, errCloseConn
	}
	resp.ErrorCode, resp.MemberID, resp.Generation = res.code, res.memberID, res.generation
	if res.code == 0 {
		resp.ProtocolType, resp.Protocol = &res.protocolType, &res.protocol
		resp.LeaderID, resp.Members, resp.SkipAssignment = res.leader, res.members, res.skipAssignment
	}
	return resp, nil
}

// joinGroup runs one join and waits for its answer; false means the
// connection or the cluster closed meanwhile.
func (cn *conn) joinGroup(groupID string, r joinRequest) (joinResult, bool) {
	c := cn.b.c
	switch {
	case groupID == "":
		return joinError(kerr.InvalidGroupID.Code, r.memberID), true
	case r.session < c.cfg.GroupMinSessionTimeout || r.session > c.cfg.GroupMaxSessionTimeout:
		return joinError(kerr.InvalidSessionTimeout.Code, r.memberID), true
	}
	g, code := c.group(cn.b.id, groupID, r.memberID == "")
	switch {
	case code != 0:
		return joinError(code, r.memberID), true
	case g == nil:
		return joinError(kerr.UnknownMemberID.Code, r.memberID), true
	}
	g.mu.Lock()
	g.ready()
	res, ch, static := g.join(r)
	g.mu.Unlock()
	if static != nil {
		code := g.storeMeta(static.snap)
		g.mu.Lock()
		g.finishStaticRejoin(static, code)
		g.mu.Unlock()
	}
	if ch == nil {
		return res, true
	}
	cn.parkBegin() // a delayed join: no handler time
	select {
	case res := <-ch:
		return res, true
	case <-cn.closed:
	case <-c.closing:
	}
	return joinResult{}, false
}

// join applies a JoinGroup: it answers at once (res), or returns the
// channel the answer will come on, and for a static member replaced in a
// Stable group the metadata to write before answering. Callers hold g.mu.
func (g *group) join(r joinRequest) (res joinResult, ch chan joinResult, static *staticRejoin) {
	if g.state == groupDead {
		return joinError(kerr.CoordinatorNotAvailable.Code, r.memberID), nil, nil
	}
	if cg := g.s.c.consumerGroupOf(g); cg != nil {
		if len(cg.Members) > 0 {
			return joinError(kerr.InconsistentGroupProtocol.Code, r.memberID), nil, nil
		}
		g.consumer, g.consumerMeta = nil, nil // an empty KIP-848 group turns classic
	}
	if !g.supports(r.protocolType, r.protocols) {
		return joinError(kerr.InconsistentGroupProtocol.Code, r.memberID), nil, nil
	}
	if r.memberID == "" {
		return g.joinNew(r)
	}
	if _, ok := g.pending[r.memberID]; ok {
		stopTimer(g.pending[r.memberID])
		delete(g.pending, r.memberID)
		return g.addAndJoin(r.memberID, r)
	}
	if code := g.validateMember(r.memberID, r.instanceID); code != 0 {
		return joinError(code, r.memberID), nil, nil
	}
	m := g.members[r.memberID]
	switch g.state {
	case groupPreparing:
		ch = g.updateMember(m, r)
		g.tryCompleteJoin()
		return joinResult{}, ch, nil
	case groupCompleting:
		if m.matches(r.protocols) {
			// It lost the answer to its join: answer it again.
			res = g.currentJoin(m.id)
			if m.id == g.leader {
				res.members = g.leaderMembers()
			}
			g.touch(m)
			return res, nil, nil
		}
	case groupStable:
		if m.id != g.leader && m.matches(r.protocols) {
			g.touch(m)
			return g.currentJoin(m.id), nil, nil
		}
		// The leader rejoins to rebalance for changes the members'
		// metadata does not show (a topic grew, say).
	}
	ch = g.updateMember(m, r)
	g.prepareRebalance("member " + m.id + " rejoined with new metadata or as the leader")
	return joinResult{}, ch, nil
}

// joinNew handles a join without a member id. Callers hold g.mu.
func (g *group) joinNew(r joinRequest) (joinResult, chan joinResult, *staticRejoin) {
	if r.instanceID != nil {
		if old, ok := g.statics[*r.instanceID]; ok {
			return g.rejoinStatic(g.members[old], r)
		}
		return g.addAndJoin(classicMemberID(r.clientID, r.instanceID), r)
	}
	id := classicMemberID(r.clientID, nil)
	if r.version >= 4 {
		g.addPending(id, r.session)
		return joinError(kerr.MemberIDRequired.Code, id), nil, nil
	}
	return g.addAndJoin(id, r)
}

// addAndJoin adds a new member waiting in its join and rebalances.
// Callers hold g.mu.
func (g *group) addAndJoin(id string, r joinRequest) (joinResult, chan joinResult, *staticRejoin) {
	m := &member{id: id, instanceID: r.instanceID, isNew: true, joinedAt: g.s.c.now()}
	ch := g.updateMember(m, r)
	g.addMember(m, r.protocolType)
	g.touch(m)
	switch g.state {
	case groupPreparing:
		g.tryCompleteJoin()
	default:
		g.prepareRebalance("new member " + id + " joined")
	}
	return joinResult{}, ch, nil
}

// updateMember takes a member's new join: its protocols, timeouts and
// waiting request (an earlier one still waiting is told to retry).
// Callers hold g.mu.
func (g *group) updateMember(m *member, r joinRequest) chan joinResult {
	m.deliverJoin(joinError(kerr.RebalanceInProgress.Code, m.id))
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = r.protocols, r.session, r.rebalance
	m.clientID, m.clientHost = r.clientID, r.host
	m.join = make(chan joinResult, 1)
	return m.join
}

// rejoinStatic replaces a static member's previous incarnation by a new
// member id. In a Stable group whose protocol stays, that needs no
// rebalance, only a metadata write. Callers hold g.mu.
func (g *group) rejoinStatic(m *member, r joinRequest) (joinResult, chan joinResult, *staticRejoin) {
	oldID, newID := m.id, classicMemberID(r.clientID, r.instanceID)
	oldLeader, oldProtocols := g.leader, m.protocols
	g.s.c.log.Info("static member rejoined", "group", g.id, "instance", *r.instanceID, "old", oldID, "new", newID)
	m.deliverJoin(joinError(kerr.FencedInstanceID.Code, oldID))
	m.deliverSync(syncResult{code: kerr.FencedInstanceID.Code})
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.statics[*r.instanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.awaitingSync[oldID] {
		delete(g.awaitingSync, oldID)
		g.awaitingSync[newID] = true
	}
	ch := g.updateMember(m, r)
	g.touch(m)
	switch g.state {
	case groupStable:
		if g.selectProtocol() == g.protocol {
			return joinResult{}, ch, &staticRejoin{
				snap: g.snapshotMeta(nil), oldID: oldID, newID: newID, oldProtocols: oldProtocols, oldLeader: oldLeader,
				generation: g.generation, ch: ch, supportsSkipAssignment: r.version >= 9,
			}
		}
		g.prepareRebalance("static member " + newID + " rejoined with another protocol")
	case groupCompleting:
		// The leader may be assigning to the old id: rebalance.
		g.prepareRebalance("static member " + newID + " rejoined during CompletingRebalance")
	case groupPreparing:
		g.tryCompleteJoin()
	}
	return joinResult{}, ch, nil
}

// finishStaticRejoin answers a replaced static member once its metadata
// write is done: on failure the old incarnation comes back; on success it
// gets the current generation, unless a rebalance began meanwhile, which
// it then takes part in. A returning leader that knows KIP-814 (v9) is
// told it leads but must not assign; an older one is told the old id
// leads, so it syncs as a follower. Callers hold g.mu.
func (g *group) finishStaticRejoin(sr *staticRejoin, code int16) {
	m := g.members[sr.newID]
	if m == nil || m.join != sr.ch || g.state != groupStable || g.generation != sr.generation {
		return // answered already, or taking part in a rebalance that began meanwhile
	}
	if code != 0 {
		delete(g.members, sr.newID)
		m.id, m.protocols = sr.oldID, sr.oldProtocols
		g.members[sr.oldID] = m
		g.statics[*m.instanceID] = sr.oldID
		if g.leader == sr.newID {
			g.leader = sr.oldID
		}
		m.deliverJoin(joinError(code, ""))
		return
	}
	res := g.currentJoin(sr.newID)
	if sr.supportsSkipAssignment {
		res.skipAssignment = true
		if g.leader == sr.newID {
			res.members = g.leaderMembers()
		}
	} else {
		res.leader = sr.oldLeader
	}
	m.deliverJoin(res)
}
