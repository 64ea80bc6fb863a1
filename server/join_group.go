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
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleJoinGroup(req *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		resp.ErrorCode, resp.Generation = errGroupAuth, -1
		return resp, nil
	}
	r := grp.JoinRequest{
		Version: req.Version, MemberID: req.MemberID, InstanceID: req.InstanceID, ClientID: cn.hdr.ClientID, Host: cn.clientHost(),
		Session: time.Duration(req.SessionTimeoutMillis) * time.Millisecond, ProtocolType: req.ProtocolType,
	}
	r.Rebalance = r.Session // v0 has no rebalance timeout
	if req.Version >= 1 {
		r.Rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	for _, p := range req.Protocols {
		r.Protocols = append(r.Protocols, grp.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	res, ok := cn.joinGroup(req.Group, r)
	if !ok {
		return nil, errCloseConn
	}
	resp.ErrorCode, resp.MemberID, resp.Generation = res.Code, res.MemberID, res.Generation
	if res.Code == 0 {
		resp.ProtocolType, resp.Protocol = &res.ProtocolType, &res.Protocol
		resp.LeaderID, resp.Members, resp.SkipAssignment = res.Leader, res.Members, res.SkipAssignment
	}
	return resp, nil
}

// joinGroup runs one join and waits for its answer; false means the
// connection or the cluster closed meanwhile.
func (cn *conn) joinGroup(groupID string, r grp.JoinRequest) (grp.JoinResult, bool) {
	c := cn.b.c
	switch {
	case groupID == "":
		return grp.JoinError(kerr.InvalidGroupID.Code, r.MemberID), true
	case r.Session < c.cfg.GroupMinSessionTimeout || r.Session > c.cfg.GroupMaxSessionTimeout:
		return grp.JoinError(kerr.InvalidSessionTimeout.Code, r.MemberID), true
	}
	g, code := c.group(cn.b.id, groupID, r.MemberID == "")
	switch {
	case code != 0:
		return grp.JoinError(code, r.MemberID), true
	case g == nil:
		return grp.JoinError(kerr.UnknownMemberID.Code, r.MemberID), true
	}
	if code := convertEmptyStreamsGroup(g); code != 0 {
		return grp.JoinError(code, ""), true
	}
	if res, ok := c.mixedJoin(g, r); ok {
		return res, true // a classic member of a consumer group (group_mixed.go)
	}
	g.Mu.Lock()
	g.Ready()
	if g.ShareGroup() != nil { // Kafka: "Group %s is not a classic group."
		g.Mu.Unlock()
		return grp.JoinError(kerr.GroupIDNotFound.Code, r.MemberID), true
	}
	if g.State != grp.Dead {
		if cg := g.ConsumerGroup(); cg != nil && len(cg.Members) == 0 {
			g.Consumer, g.ConsumerMeta = nil, nil // an empty KIP-848 group turns classic
		}
	}
	res, ch, static := g.Join(r)
	g.Mu.Unlock()
	if static != nil {
		code := g.StoreMeta(static.Snap)
		g.Mu.Lock()
		g.FinishStaticRejoin(static, code)
		g.Mu.Unlock()
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
	return grp.JoinResult{}, false
}
