package server

// SyncGroup, versions 0-5.
//
// In CompletingRebalance followers wait for the leader's SyncGroup, which
// carries every member's assignment (members it leaves out get an empty
// one, unknown ids are ignored). The group metadata with those assignments
// is written to __consumer_offsets with acks=all before anyone is answered;
// then the group is Stable and each waiting member gets its assignment. If
// the write fails, every waiting member gets the error (NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE) and the group rebalances. In Stable a member
// gets its current assignment at once. A rebalance that begins meanwhile
// answers REBALANCE_IN_PROGRESS.
//
// Errors: UNKNOWN_MEMBER_ID (unknown group or member, Empty group),
// FENCED_INSTANCE_ID, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL (v5
// protocol type or name not the group's), REBALANCE_IN_PROGRESS
// (PreparingRebalance), COORDINATOR_NOT_AVAILABLE (deleted group),
// NOT_COORDINATOR.

import (
	"fmt"
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleSyncGroup(req *kmsg.SyncGroupRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	fail := func(code int16) (kmsg.Response, error) {
		resp.ErrorCode = code
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		return fail(errGroupAuth)
	}
	g, code := c.existingGroup(cn.b.id, req.Group, kerr.UnknownMemberID)
	if code != 0 {
		return fail(code)
	}

	g.mu.Lock()
	g.ready()
	code = g.validateMember(req.MemberID, req.InstanceID)
	switch {
	case g.state == groupDead:
		code = kerr.CoordinatorNotAvailable.Code
	case code != 0:
	case req.Generation != g.generation:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType, req.Protocol != nil && *req.Protocol != g.protocol:
		code = kerr.InconsistentGroupProtocol.Code
	case g.state == groupEmpty:
		code = kerr.UnknownMemberID.Code
	case g.state == groupPreparing:
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		g.mu.Unlock()
		return fail(code)
	}
	protocolType, protocol := g.protocolType, g.protocol
	m := g.members[req.MemberID]
	delete(g.awaitingSync, m.id)
	g.touch(m)
	if g.state == groupStable {
		assignment := m.assignment
		g.mu.Unlock()
		resp.ProtocolType, resp.Protocol, resp.MemberAssignment = &protocolType, &protocol, assignment
		return resp, nil
	}

	// CompletingRebalance: wait for the leader's assignment.
	m.deliverSync(syncResult{code: kerr.RebalanceInProgress.Code}) // a previous SyncGroup still waiting
	ch := make(chan syncResult, 1)
	m.sync = ch
	var snap metaSnapshot
	var assignments map[string][]byte
	generation := g.generation
	leader := m.id == g.leader
	if leader {
		assignments = map[string][]byte{}
		for _, a := range req.GroupAssignment {
			if g.members[a.MemberID] != nil {
				assignments[a.MemberID] = a.MemberAssignment
			}
		}
		for id := range g.members {
			if assignments[id] == nil {
				assignments[id] = []byte{}
			}
		}
		snap = g.snapshotMeta(assignments)
	}
	g.mu.Unlock()

	if leader {
		code := g.storeMeta(snap)
		g.mu.Lock()
		g.completeSync(generation, assignments, code)
		g.mu.Unlock()
	}
	cn.parkBegin() // a delayed sync: no handler time
	select {
	case r := <-ch:
		if r.code != 0 {
			return fail(r.code)
		}
		resp.ProtocolType, resp.Protocol, resp.MemberAssignment = &protocolType, &protocol, r.assignment
		return resp, nil
	case <-cn.closed:
	case <-c.closing:
	}
	return nil, errCloseConn
}

// completeSync ends CompletingRebalance once the leader's assignments are
// written (code 0): the group is Stable and every waiting member gets its
// assignment. A failed write fails the waiting members and rebalances.
// Nothing happens if a rebalance began meanwhile. Callers hold g.mu.
func (g *group) completeSync(generation int32, assignments map[string][]byte, code int16) {
	if g.generation != generation || g.state != groupCompleting {
		return
	}
	if code != 0 {
		g.s.c.log.Warn("writing group metadata failed; rebalancing", "group", g.id, "generation", generation, "error", errorName(code))
		g.resetAssignments(code)
		g.prepareRebalance("group metadata write failed")
		return
	}
	for id, m := range g.members {
		m.assignment = assignments[id] // every member: joins would have rebalanced
	}
	g.state = groupStable
	g.s.c.log.Info("group stable", "group", g.id, "generation", g.generation, "members", len(g.members))
	g.s.c.emitGroup(EventGroupRebalanceCompleted, g, "", "", fmt.Sprintf("stable, %d members", len(g.members)))
	for _, m := range g.members {
		m.deliverSync(syncResult{assignment: m.assignment})
	}
}
