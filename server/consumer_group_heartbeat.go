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
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
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
	resp.HeartbeatIntervalMillis = int32(c.cfg.ConsumerGroupHeartbeatInterval.Milliseconds())
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
		if _, err := compileSubscription(*req.SubscribedTopicRegex); err != nil {
			return fail(kerr.InvalidRegularExpression, "%v", err)
		}
	}

	g, code := c.group(cn.b.id, req.Group, req.MemberEpoch == 0)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if g == nil {
		return fail(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
	}
	// Heartbeats of one group take turns: each one's state change is
	// written to the log (and committed) before the answer, in order.
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	m := c.consumerHeartbeat(cn, req, g, resp)
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	if code := c.persistConsumerGroup(g); code != 0 {
		g.mu.Lock()
		m.sent = nil // resend the assignment once the write succeeds
		g.mu.Unlock()
		*resp = *req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
	}
	return resp, nil
}

// consumerHeartbeat applies one heartbeat to g's KIP-848 state and fills
// resp; it returns the member (nil on error).
func (c *Cluster) consumerHeartbeat(cn *conn, req *kmsg.ConsumerGroupHeartbeatRequest, g *group, resp *kmsg.ConsumerGroupHeartbeatResponse) *consumerMember {
	fail := func(err *kerr.Error, format string, args ...any) *consumerMember {
		resp.ErrorCode = err.Code
		msg := fmt.Sprintf(format, args...)
		resp.ErrorMessage = &msg
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c.consumerGroupOf(g)
	if g.consumer == nil {
		if req.MemberEpoch != 0 {
			return fail(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
		}
		if g.hasClassicMembers() {
			return fail(kerr.GroupIDNotFound, "group %s is a classic group with members", req.Group)
		}
		g.consumer = newConsumerGroup()
	}
	cg := g.consumer
	m := cg.members[req.MemberID]

	if req.MemberEpoch < 0 { // leave
		if m == nil {
			return fail(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
		}
		c.removeConsumerMember(g, m)
		c.emitGroup(EventGroupMemberLeft, g, m.id, "left (member epoch -1)", "")
		resp.MemberID, resp.MemberEpoch = &m.id, req.MemberEpoch
		return m
	}

	switch {
	case req.MemberEpoch == 0:
		if m == nil {
			id := req.MemberID
			if id == "" {
				id = newMemberID()
			}
			// A static member coming back under a new id replaces its
			// previous incarnation, keeping its target.
			if req.InstanceID != nil {
				for _, old := range cg.members {
					if old.instanceID != nil && *old.instanceID == *req.InstanceID {
						c.removeConsumerMember(g, old)
					}
				}
			}
			m = &consumerMember{id: id, assigned: assignment{}, owned: assignment{}}
			cg.members[id] = m
			c.emitGroup(EventGroupMemberJoined, g, id, "", "consumer")
			cg.nextEpoch()
		}
		m.epoch = 0
		m.sent = nil
		m.clientID, m.clientHost = cn.hdr.ClientID, cn.clientHost()
	case m == nil:
		return fail(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
	case req.MemberEpoch != m.epoch:
		return fail(kerr.FencedMemberEpoch, "member %s is at epoch %d, not %d", m.id, m.epoch, req.MemberEpoch)
	}

	if req.SubscribedTopicNames != nil && !slices.Equal(sortedCopy(req.SubscribedTopicNames), m.subscribed) {
		m.subscribed = sortedCopy(req.SubscribedTopicNames)
		cg.nextEpoch()
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex = *req.SubscribedTopicRegex
		m.regexPrincipal, m.regexHost = cn.principal, cn.host() // its matches are what they may DESCRIBE
		cg.nextEpoch()
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != cg.assignor {
		cg.assignor = *req.ServerAssignor
		cg.nextEpoch()
	}
	if req.InstanceID != nil {
		m.instanceID = req.InstanceID
	}
	if req.RackID != nil {
		m.rackID = req.RackID
	}
	if req.RebalanceTimeoutMillis > 0 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.Topics != nil {
		owned := assignment{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				owned.add(t.TopicID, p)
			}
		}
		m.owned = owned
	}
	c.touchConsumerMember(g, m)

	if c.subscriptionsMoved(cg) {
		cg.nextEpoch()
	}
	if cg.assignmentEpoch < cg.epoch {
		c.computeTarget(cg)
		c.emitConsumerGroup(EventGroupRebalanceStarted, g, cg, "new target assignment")
	}
	settled := consumerGroupSettled(cg)
	cg.reconcile(m)
	if !settled && consumerGroupSettled(cg) {
		c.emitConsumerGroup(EventGroupRebalanceCompleted, g, cg, "every member has its target assignment")
	}

	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	if m.sent == nil || !m.assigned.equal(m.sent) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, id := range sortedIDs(m.assigned) {
			t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			t.TopicID, t.Partitions = id, slices.Clone(m.assigned[id])
			a.Topics = append(a.Topics, t)
		}
		resp.Assignment = &a
		m.sent = m.assigned.clone()
	}
	return m
}

// subscriptionsMoved reports whether a subscribed topic appeared, vanished
// or grew since the target was computed (Kafka bumps the group epoch on such
// metadata changes too).
func (c *Cluster) subscriptionsMoved(cg *consumerGroup) bool {
	return !maps.Equal(c.subscribedPartitions(cg), cg.topicsSeen)
}

// touchConsumerMember restarts the member's session timer. Callers hold g.mu.
func (c *Cluster) touchConsumerMember(g *group, m *consumerMember) {
	if m.session != nil {
		m.session.Stop()
	}
	// g.after fires only while this copy of the group is still the
	// coordinator's (not after a failover or Close).
	m.session = g.after(c.cfg.ConsumerGroupSessionTimeout, func() {
		if g.consumer == nil || g.consumer.members[m.id] != m {
			return
		}
		c.log.Info("consumer group member session expired", "group", g.id, "member", m.id)
		c.emitGroup(EventGroupMemberExpired, g, m.id, "session timeout", "")
		c.removeConsumerMember(g, m)
		g.goLocked(func() {
			g.writeMu.Lock()
			defer g.writeMu.Unlock()
			c.persistConsumerGroup(g)
		})
	})
}

// removeConsumerMember drops m and bumps the group epoch. Callers hold g.mu.
func (c *Cluster) removeConsumerMember(g *group, m *consumerMember) {
	cg := g.consumer
	if m.session != nil {
		m.session.Stop()
	}
	delete(cg.members, m.id)
	delete(cg.target, m.id)
	cg.nextEpoch()
	if len(cg.members) > 0 {
		c.computeTarget(cg)
		c.emitConsumerGroup(EventGroupRebalanceStarted, g, cg, "member "+m.id+" left")
	}
}

func compileSubscription(re string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + re + ")$")
}

func newMemberID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedIDs(a assignment) [][16]byte {
	ids := make([][16]byte, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y [16]byte) int { return slices.Compare(x[:], y[:]) })
	return ids
}
