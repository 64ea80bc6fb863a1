package server

// LeaveGroup, versions 0-5 (a batch of members from v3, each with its own
// error).
//
// A leaving member is removed at once and the group rebalances (an Empty
// group is written to the log when the rebalance ends with nobody). A
// member id still pending after MEMBER_ID_REQUIRED is simply forgotten. A
// static member leaves like any other when named by its instance id, with
// its member id or without one (an administrator removing it); a member id
// that is not the instance's current one gets FENCED_INSTANCE_ID. Clients
// usually do not send LeaveGroup for static members on close: that is what
// lets them come back within the session timeout without a rebalance.
//
// Errors: per member UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID (before v3
// as the top-level error); top-level COORDINATOR_NOT_AVAILABLE (deleted
// group), NOT_COORDINATOR, INVALID_GROUP_ID.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleLeaveGroup(req *kmsg.LeaveGroupRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	code, members := cn.leaveGroup(req.Group, leaving)
	resp.ErrorCode = code
	if req.Version >= 3 {
		resp.Members = members
	} else if code == 0 && len(members) == 1 {
		resp.ErrorCode = members[0].ErrorCode
	}
	return resp, nil
}

func (cn *conn) leaveGroup(groupID string, leaving []kmsg.LeaveGroupRequestMember) (int16, []kmsg.LeaveGroupResponseMember) {
	if !cn.allowedGroup(authorizer.OpRead, groupID) {
		return errGroupAuth, nil
	}
	if groupID == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	g, code := cn.b.c.group(cn.b.id, groupID, false)
	if code != 0 {
		return code, nil
	}
	var out []kmsg.LeaveGroupResponseMember
	answer := func(lm kmsg.LeaveGroupRequestMember, code int16) {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = lm.MemberID, lm.InstanceID, code
		out = append(out, rm)
	}
	if g == nil {
		for _, lm := range leaving {
			answer(lm, kerr.UnknownMemberID.Code)
		}
		return 0, out
	}
	lms := make([]grp.LeaveMember, len(leaving))
	for i, lm := range leaving {
		lms[i] = grp.LeaveMember{MemberID: lm.MemberID, InstanceID: lm.InstanceID}
	}
	if codes, code, ok := cn.b.c.mixedLeave(g, lms); ok { // classic members of a consumer group
		if code != 0 {
			return code, nil
		}
		for i, lm := range leaving {
			answer(lm, codes[i])
		}
		return 0, out
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.Ready()
	if g.State == grp.Dead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	for _, lm := range leaving {
		answer(lm, g.Leave(lm.MemberID, lm.InstanceID, lm.Reason))
	}
	return 0, out
}
