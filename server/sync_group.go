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
	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
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

	sr := grp.SyncRequest{MemberID: req.MemberID, InstanceID: req.InstanceID, Generation: req.Generation,
		ProtocolType: req.ProtocolType, Protocol: req.Protocol}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = map[string][]byte{}
		for _, a := range req.GroupAssignment {
			sr.Assignments[a.MemberID] = a.MemberAssignment
		}
	}
	if a, code, ok := c.mixedSync(g, sr); ok { // a classic member of a consumer group
		if code != 0 {
			return fail(code)
		}
		resp.ProtocolType, resp.Protocol, resp.MemberAssignment = req.ProtocolType, req.Protocol, a
		return resp, nil
	}
	g.Mu.Lock()
	g.Ready()
	res, protocolType, protocol, ch, leader := g.Sync(sr)
	g.Mu.Unlock()
	if res.Code != 0 {
		return fail(res.Code)
	}
	if ch == nil {
		resp.ProtocolType, resp.Protocol, resp.MemberAssignment = &protocolType, &protocol, res.Assignment
		return resp, nil
	}
	if leader != nil {
		code := g.StoreMeta(leader.Snap)
		g.Mu.Lock()
		g.CompleteSync(leader.Generation, leader.Assignments, code)
		g.Mu.Unlock()
	}
	cn.parkBegin() // a delayed sync: no handler time
	select {
	case r := <-ch:
		if r.Code != 0 {
			return fail(r.Code)
		}
		resp.ProtocolType, resp.Protocol, resp.MemberAssignment = &protocolType, &protocol, r.Assignment
		return resp, nil
	case <-cn.closed:
	case <-c.closing:
	}
	return nil, errCloseConn
}
