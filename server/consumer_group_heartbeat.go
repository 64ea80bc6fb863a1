package server

// ConsumerGroupHeartbeat, versions 0-1 (KIP-848; v1 members bring their own
// member id, and may subscribe by regex).
//
// Member epoch 0 joins (or rejoins), -1 leaves, -2 leaves a static member;
// any other epoch must be the member's current one (FENCED_MEMBER_EPOCH
// otherwise, UNKNOWN_MEMBER_ID for an unknown member). Null fields mean
// "unchanged since the last heartbeat". A subscription change or a member
// joining or leaving bumps the group epoch and the target assignment is
// recomputed with the group's assignor ("uniform", the default, or
// "range"; others get UNSUPPORTED_ASSIGNOR). The answer carries the
// member's epoch and, when it changed, its assignment; members that miss
// group.consumer.session.timeout.ms leave the group.

import (
	"fmt"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleConsumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (kmsg.Response, error) {
	resp, err := cn.consumerGroupHeartbeat(req)
	if r, ok := resp.(*kmsg.ConsumerGroupHeartbeatResponse); ok && (r.ErrorCode != 0 || req.MemberEpoch < 0) {
		r.HeartbeatIntervalMillis = 0 // as Kafka: an error or a leave carries no interval
	}
	return resp, err
}

func (cn *conn) consumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = int32(c.groupConfig(req.Group).ConsumerHeartbeatInterval.Milliseconds())
	fail := func(err *kerr.Error, format string, args ...any) (kmsg.Response, error) {
		resp.ErrorCode = err.Code
		msg := fmt.Sprintf(format, args...)
		resp.ErrorMessage = &msg
		return resp, nil
	}
	switch {
	case !cn.allowedGroup(authorizer.OpRead, req.Group):
		return fail(kerr.GroupAuthorizationFailed, "Authorization failed.")
	case slices.ContainsFunc(req.SubscribedTopicNames, func(t string) bool { return !cn.allowedTopic(authorizer.OpDescribe, t) }):
		// Kafka 4: a member may not subscribe to topics it cannot see.
		return fail(kerr.TopicAuthorizationFailed, "Authorization failed.")
	case req.Group == "":
		return fail(kerr.InvalidRequest, "group id is empty")
	case req.MemberEpoch < -2:
		return fail(kerr.InvalidRequest, "member epoch %d is invalid", req.MemberEpoch)
	case req.Version >= 1 && req.MemberID == "":
		return fail(kerr.InvalidRequest, "member id must be set from version 1")
	case req.MemberEpoch > 0 && req.MemberID == "":
		return fail(kerr.InvalidRequest, "member id is empty")
	case req.MemberEpoch == 0 && req.SubscribedTopicNames == nil && (req.SubscribedTopicRegex == nil || *req.SubscribedTopicRegex == ""):
		return fail(kerr.InvalidRequest, "joining requires subscribed topic names or a regex")
	case req.MemberEpoch == 0 && req.RebalanceTimeoutMillis <= 0:
		return fail(kerr.InvalidRequest, "joining requires a rebalance timeout")
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != "uniform" && *req.ServerAssignor != "range" {
		return fail(kerr.UnsupportedAssignor, "assignor %q is not supported (uniform, range)", *req.ServerAssignor)
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := grp.CompileSubscription(*req.SubscribedTopicRegex); err != nil {
			return fail(kerr.InvalidRegularExpression, "%v", err)
		}
	}

	g, code := c.group(cn.b.id, req.Group, req.MemberEpoch == 0)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if g == nil { // Kafka 4.4 creates a group only for epoch 0
		return fail(kerr.GroupIDNotFound, "Consumer group %s not found.", req.Group)
	}
	// Heartbeats of one group take turns: each one's state change is
	// written to the log (and committed) before the answer, in order.
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	if c.consumerHeartbeat(req, cn.heartbeatRequest(req), g, resp); resp.ErrorCode != 0 {
		return resp, nil
	}
	// A failed write leaves nothing applied (revertConsumer), as Kafka's
	// runtime reverts a failed write's records.
	if code := g.PersistConsumer(); code != 0 {
		g.Mu.Lock()
		g.RevertConsumer()
		g.Mu.Unlock()
		*resp = *req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
	}
	return resp, nil
}

// consumerHeartbeat applies one heartbeat to g's KIP-848 state (package
// group's step) and fills resp; it returns the member (nil on error).
func (c *Cluster) consumerHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, hr grp.HeartbeatRequest, g *group, resp *kmsg.ConsumerGroupHeartbeatResponse) *consumerMember {
	fail := func(err *kerr.Error, format string, args ...any) *consumerMember {
		resp.ErrorCode = err.Code
		msg := fmt.Sprintf(format, args...)
		resp.ErrorMessage = &msg
		return nil
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.ConsumerGroup()
	if g.Consumer == nil && g.StreamsGroup() != nil {
		return fail(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
	}
	if g.ShareGroup() != nil {
		return fail(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
	}
	if g.Consumer == nil || len(g.Consumer.Members) == 0 && g.HasClassicMembers() {
		switch {
		case g.HasClassicMembers() && req.MemberEpoch != 0:
			return fail(kerr.GroupIDNotFound, "Group %s is not a consumer group", req.Group)
		case req.MemberEpoch != 0 && g.Consumer == nil:
			// A group with no consumer state is a classic one to Kafka.
			return fail(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
		case req.MemberEpoch != 0:
			return fail(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
		case g.HasClassicMembers():
			// A live classic group upgrades (migrate.go), or refuses.
			if code, msg := g.Upgrade(); code != 0 {
				resp.ErrorCode, resp.ErrorMessage = code, &msg
				return nil
			}
		default:
			g.Consumer = grp.NewConsumerGroup()
		}
	}
	hr.Downgrade = grp.MigrationPolicy(c.cfg.ConsumerGroupMigrationPolicy).DowngradeEnabled()
	res := g.Consumer.Heartbeat(hr, assignorTopics{c})
	if res.Downgrade {
		// The last consumer-protocol member left: the group turns classic.
		g.Downgrade(res.Member, res.Events[0])
	} else {
		c.emitConsumerEvents(g, res.Events)
	}
	if res.Code != 0 {
		g.CancelConversion() // an upgrade this heartbeat began is not kept
		resp.ErrorCode = res.Code
		resp.ErrorMessage = &res.Message
		return nil
	}
	m := res.Member
	if !res.Left {
		g.TouchConsumerMember(m)
	}
	resp.MemberID, resp.MemberEpoch = &m.ID, res.MemberEpoch
	if res.Assignment != nil {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, id := range res.Assignment.TopicIDs() {
			t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			t.TopicID, t.Partitions = id, slices.Clone(res.Assignment[id])
			a.Topics = append(a.Topics, t)
		}
		resp.Assignment = &a
	}
	return m
}

// heartbeatRequest is a ConsumerGroupHeartbeat as package group's step
// takes it, with who sent it.
func (cn *conn) heartbeatRequest(req *kmsg.ConsumerGroupHeartbeatRequest) grp.HeartbeatRequest {
	hr := grp.HeartbeatRequest{
		Group: req.Group, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch, InstanceID: req.InstanceID, RackID: req.RackID,
		SubscribedTopicNames: req.SubscribedTopicNames, SubscribedTopicRegex: req.SubscribedTopicRegex, ServerAssignor: req.ServerAssignor,
		ClientID: cn.hdr.ClientID, ClientHost: cn.clientHost(), Principal: cn.principal, Host: cn.host(),
	}
	if req.RebalanceTimeoutMillis > 0 {
		hr.RebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.Topics != nil {
		hr.Owned = assignment{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				hr.Owned.Add(t.TopicID, p)
			}
		}
	}
	return hr
}

// emitConsumerEvents reports what a KIP-848 step changed. Callers hold
// g.Mu.
func (c *Cluster) emitConsumerEvents(g *group, evs []grp.Event) {
	for _, ev := range evs {
		t := groupEventType(ev.Type)
		if ev.Group {
			c.emit(t, func(e *Event) {
				e.Group, e.Reason, e.Generation, e.Detail = g.ID, ev.Reason, ev.Epoch, ev.Detail
			})
			continue
		}
		c.emitGroup(t, g, ev.Member, ev.Reason, ev.Detail)
	}
}
