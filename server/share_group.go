package server

// ShareGroupHeartbeat (76) and ShareGroupDescribe (77), version 1
// (KIP-932), on the group coordinator: package group holds the membership
// (epochs, the simple assignor, records); this file validates, answers
// and writes.
//
// Heartbeat: member id required; epoch 0 joins (with subscribed topic
// names), -1 leaves, others must be the member's (FENCED_MEMBER_EPOCH;
// UNKNOWN_MEMBER_ID for an unknown member). A group id a consumer or
// classic group uses is GROUP_ID_NOT_FOUND, as Kafka answers. The
// interval is share.heartbeat.interval.ms; members that miss
// share.session.timeout.ms leave.

import (
	"fmt"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// defaultShareGroupMaxSize is group.share.max.size's default.
const defaultShareGroupMaxSize = 200

func (cn *conn) handleShareGroupHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	fail := func(err *kerr.Error, format string, args ...any) (kmsg.Response, error) {
		resp.ErrorCode = err.Code
		msg := fmt.Sprintf(format, args...)
		resp.ErrorMessage = &msg
		return resp, nil
	}
	switch {
	case !cn.allowedGroup(authorizer.OpRead, req.GroupID):
		return fail(kerr.GroupAuthorizationFailed, "Authorization failed.")
	case slices.ContainsFunc(req.SubscribedTopicNames, func(t string) bool { return !cn.allowedTopic(authorizer.OpDescribe, t) }):
		return fail(kerr.TopicAuthorizationFailed, "Authorization failed.")
	case req.GroupID == "":
		return fail(kerr.InvalidRequest, "GroupId can't be empty.")
	case req.MemberID == "":
		return fail(kerr.InvalidRequest, "MemberId can't be empty.")
	case req.MemberEpoch < -1:
		return fail(kerr.InvalidRequest, "MemberEpoch is invalid.")
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return fail(kerr.InvalidRequest, "SubscribedTopicNames must be set in first request.")
	}
	g, code := c.group(cn.b.id, req.GroupID, req.MemberEpoch == 0)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if g == nil { // Kafka 4.4: an unknown group, not an unknown member
		return fail(kerr.GroupIDNotFound, "Share group %s not found.", req.GroupID)
	}
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	left := c.shareHeartbeat(cn, req, g, resp)
	if resp.ErrorCode != 0 {
		resp.HeartbeatIntervalMillis = 0
		return resp, nil
	}
	if code := g.PersistShare(); code != 0 {
		g.Mu.Lock()
		g.RevertShare()
		g.Mu.Unlock()
		*resp = *req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	if left {
		resp.HeartbeatIntervalMillis = 0
		c.releaseShareMemberEverywhere(req.GroupID, req.MemberID)
	}
	if resp.Assignment != nil {
		c.initializeSharePartitions(req.GroupID, resp.Assignment.TopicPartitions)
	}
	return resp, nil
}

// initializeSharePartitions writes the start offset of the assigned share
// partitions that have no state yet, at share.auto.offset.reset, before
// the member learns of them, as Kafka's group coordinator initialises a
// share partition (InitializeShareGroupState) before assigning it: records
// produced after the assignment are delivered.
func (c *Cluster) initializeSharePartitions(group string, tps []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition) {
	for _, tp := range tps {
		t := c.topicByID(tp.TopicID)
		if t == nil {
			continue
		}
		for _, idx := range tp.Partitions {
			if idx < 0 || int(idx) >= len(t.partitions()) {
				continue
			}
			k := share.Key{Group: group, TopicID: tp.TopicID, Partition: idx}
			c.shares.mu.Lock()
			done := c.shares.initialized[k]
			c.shares.mu.Unlock()
			if done {
				continue
			}
			st, code := c.persister().ReadSummary(k, -1)
			switch {
			case code == kerr.FencedLeaderEpoch.Code || code == kerr.FencedStateEpoch.Code || code == 0 && st.StartOffset >= 0:
				c.markShareInitialized(k) // a state exists (a fenced read says so too)
				continue
			case code != 0:
				continue // the share coordinator is unavailable: the next heartbeat tries again
			}
			start := c.shareStartOffset(t.partitions()[idx], c.groupConfig(group).ShareAutoOffsetReset)
			if c.persister().Initialize(k, 0, start) == 0 {
				c.markShareInitialized(k)
			}
		}
	}
}

func (c *Cluster) markShareInitialized(k share.Key) {
	c.shares.mu.Lock()
	defer c.shares.mu.Unlock()
	if c.shares.initialized == nil {
		c.shares.initialized = map[share.Key]bool{}
	}
	c.shares.initialized[k] = true
}

// shareHeartbeat applies one heartbeat to g's share state and fills resp;
// it reports whether the member left.
func (c *Cluster) shareHeartbeat(cn *conn, req *kmsg.ShareGroupHeartbeatRequest, g *group, resp *kmsg.ShareGroupHeartbeatResponse) bool {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if g.ShareGroup() == nil {
		if g.ConsumerGroup() != nil || g.HasClassicMembers() || g.MetaRecord != nil || !g.Offsets.Empty() {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			msg := fmt.Sprintf("Group %s is not a share group.", req.GroupID)
			resp.ErrorMessage = &msg
			return false
		}
		if req.MemberEpoch != 0 {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			msg := fmt.Sprintf("Share group %s not found.", req.GroupID)
			resp.ErrorMessage = &msg
			return false
		}
		g.Share = grp.NewShareGroup()
	}
	maxSize := c.cfg.ShareGroupMaxSize
	if maxSize <= 0 {
		maxSize = defaultShareGroupMaxSize
	}
	res := g.Share.Heartbeat(grp.ShareHeartbeatRequest{
		Group: req.GroupID, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch, RackID: req.RackID,
		SubscribedTopicNames: req.SubscribedTopicNames, ClientID: cn.hdr.ClientID, ClientHost: cn.clientHost(), MaxSize: maxSize,
	}, assignorTopics{c})
	c.emitShareEvents(g, req.MemberID, res.Events)
	if res.Code != 0 {
		resp.ErrorCode = res.Code
		resp.ErrorMessage = &res.Message
		return false
	}
	m := res.Member
	if !res.Left {
		g.TouchShareMember(m)
	}
	resp.MemberID, resp.MemberEpoch = &m.ID, res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(c.groupConfig(req.GroupID).ShareHeartbeatInterval.Milliseconds())
	if res.Assignment != nil {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		for _, id := range res.Assignment.TopicIDs() {
			t := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			t.TopicID, t.Partitions = id, slices.Clone(res.Assignment[id])
			a.TopicPartitions = append(a.TopicPartitions, t)
		}
		resp.Assignment = &a
	}
	return res.Left
}

// releaseShareMemberEverywhere releases what a departed member holds in
// the group's share partitions.
func (c *Cluster) releaseShareMemberEverywhere(group, member string) {
	var keys []share.Key
	for _, sp := range c.shareSnapshot(group) {
		keys = append(keys, sp.key)
	}
	c.releaseShareMember(group, member, keys)
}

func (cn *conn) handleShareGroupDescribe(req *kmsg.ShareGroupDescribeRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID = id
		rg.AuthorizedOperations = -2147483648
		g, code := c.group(cn.b.id, id, false)
		switch {
		case !cn.allowedGroup(authorizer.OpDescribe, id):
			rg.ErrorCode = errGroupAuth
		case code != 0:
			rg.ErrorCode = code
		case g == nil:
			rg.ErrorCode = kerr.GroupIDNotFound.Code
		default:
			g.Mu.Lock()
			if sg := g.ShareGroup(); sg == nil {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
			} else {
				describeShareGroup(sg, &rg)
				if req.IncludeAuthorizedOperations {
					rg.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceGroup, id)
				}
			}
			g.Mu.Unlock()
		}
		if rg.ErrorCode != 0 {
			msg := kerr.ErrorForCode(rg.ErrorCode).Error()
			if rg.ErrorCode == kerr.GroupIDNotFound.Code {
				msg = fmt.Sprintf("Group %s not found.", id)
			}
			rg.ErrorMessage = &msg
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

func describeShareGroup(sg *grp.ShareGroup, rg *kmsg.ShareGroupDescribeResponseGroup) {
	rg.GroupState, rg.GroupEpoch, rg.AssignmentEpoch, rg.Assignor = sg.State(), sg.Epoch, sg.AssignmentEpoch, "simple"
	ids := make([]string, 0, len(sg.Members))
	for id := range sg.Members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		m := sg.Members[id]
		rm := kmsg.NewShareGroupDescribeResponseGroupMember()
		rm.MemberID, rm.RackID, rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.ID, m.RackID, m.Epoch, m.ClientID, m.ClientHost
		rm.SubscribedTopicNames = slices.Clone(m.Subscribed)
		for _, tid := range m.Assigned.TopicIDs() {
			tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = tid, slices.Clone(m.Assigned[tid])
			rm.Assignment.TopicPartitions = append(rm.Assignment.TopicPartitions, tp)
		}
		rg.Members = append(rg.Members, rm)
	}
}

// ByNames resolves a share member's subscription.
func (at assignorTopics) ByNames(names []string) []grp.Topic {
	var out []grp.Topic
	for _, n := range names {
		if t := at.c.topic(n); t != nil {
			out = append(out, grp.Topic{ID: t.id, Name: t.name, Partitions: len(t.partitions())})
		}
	}
	slices.SortFunc(out, func(a, b grp.Topic) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return slices.CompactFunc(out, func(a, b grp.Topic) bool { return a.ID == b.ID })
}

func (h groupHost) EmitShare(g *group, member string, evs []grp.Event) {
	h.c.emitShareEvents(g, member, evs)
}
