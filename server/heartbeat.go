package server

// Heartbeat, versions 0-4.
//
// A heartbeat restarts the member's session timer. It answers
// REBALANCE_IN_PROGRESS while the group prepares a rebalance, which is how
// members learn to rejoin, and NONE in CompletingRebalance (members may
// heartbeat between their join and their sync) and Stable. A member that
// misses session.timeout.ms is removed and the group rebalances.
//
// Errors: UNKNOWN_MEMBER_ID (unknown group or member, Empty group),
// FENCED_INSTANCE_ID, ILLEGAL_GENERATION, COORDINATOR_NOT_AVAILABLE
// (deleted group), NOT_COORDINATOR, INVALID_GROUP_ID.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleHeartbeat(req *kmsg.HeartbeatRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = cn.heartbeat(req)
	return resp, nil
}

func (cn *conn) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		return errGroupAuth
	}
	g, code := cn.b.c.existingGroup(cn.b.id, req.Group, kerr.UnknownMemberID)
	if code != 0 {
		return code
	}
	if code, ok := cn.b.c.mixedHeartbeat(g, req.MemberID, req.InstanceID, req.Generation); ok {
		return code // a classic member of a consumer group
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.Ready()
	return g.Heartbeat(req.MemberID, req.InstanceID, req.Generation)
}
