package group

// The KIP-848 ConsumerGroupHeartbeat step. Member epoch 0 joins (or
// rejoins), -1 leaves, -2 leaves a static member; any other epoch must be
// the member's current one (FENCED_MEMBER_EPOCH otherwise,
// UNKNOWN_MEMBER_ID for an unknown member). Null fields mean "unchanged
// since the last heartbeat". A subscription change or a member joining or
// leaving bumps the group epoch and the target assignment is recomputed
// with the group's assignor. The answer carries the member's epoch and,
// when it changed, its assignment.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// HeartbeatRequest is a ConsumerGroupHeartbeat as the step sees it, with
// who sent it.
type HeartbeatRequest struct {
	Group            string
	MemberID         string
	MemberEpoch      int32
	InstanceID       *string
	RackID           *string
	RebalanceTimeout time.Duration // 0: unchanged
	// SubscribedTopicNames nil, SubscribedTopicRegex nil, ServerAssignor
	// nil and Owned nil mean unchanged.
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	ServerAssignor       *string
	Owned                Assignment
	// Downgrade says group.consumer.migration.policy allows an online
	// downgrade when the last consumer-protocol member leaves.
	Downgrade bool

	ClientID, ClientHost string
	// Principal and Host are who subscribes: a regex matches only what
	// they may describe.
	Principal, Host string
}

// EventType is a group change the coordinator reports.
type EventType int

const (
	MemberJoined EventType = iota
	MemberLeft
	MemberExpired
	RebalanceStarted
	RebalanceCompleted
	// MemberFenced: the coordinator removed a member of a consumer group
	// (its rebalance or sync deadline passed, or it expired).
	MemberFenced
	// GroupUpgraded and GroupDowngraded: the group changed protocol.
	GroupUpgraded
	GroupDowngraded
)

// Event is one change a step made. A group event (Group true) reports the
// KIP-848 group itself as it was then: its epoch, and in Detail its
// members and assignment epoch.
type Event struct {
	Type   EventType
	Group  bool
	Epoch  int32
	Member string
	Reason string
	Detail string
}

// groupEvent is a group event of cg as it is now.
func (cg *ConsumerGroup) groupEvent(t EventType, reason string) Event {
	return Event{Type: t, Group: true, Epoch: cg.Epoch, Reason: reason,
		Detail: fmt.Sprintf("%d members, assignment epoch %d", len(cg.Members), cg.AssignmentEpoch)}
}

// HeartbeatResult is the step's answer.
type HeartbeatResult struct {
	Code    int16
	Message string // with an error
	// Member is the member the heartbeat was for (left or not); nil on
	// error. Its session is to be restarted unless it left.
	Member      *ConsumerMember
	Left        bool
	MemberEpoch int32
	// Assignment is the member's assignment when it changed since the last
	// one sent (else nil).
	Assignment Assignment
	Events     []Event
	// Downgrade says the member leaving was the group's last one on the
	// consumer protocol and the policy allows a downgrade: the caller
	// turns the group classic (the step did not remove the member).
	Downgrade bool
}

func heartbeatError(err *kerr.Error, format string, args ...any) HeartbeatResult {
	return HeartbeatResult{Code: err.Code, Message: fmt.Sprintf(format, args...)}
}

// CompileSubscription compiles a subscription regex: it must match a whole
// topic name.
func CompileSubscription(re string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + re + ")$")
}

// Heartbeat applies one heartbeat of a member to the group.
func (cg *ConsumerGroup) Heartbeat(req HeartbeatRequest, topics Topics) HeartbeatResult {
	var res HeartbeatResult
	m := cg.Members[req.MemberID]
	if req.InstanceID != nil && req.MemberEpoch != 0 {
		// A static member is known by its instance id: an unknown one is
		// UNKNOWN_MEMBER_ID, another member id FENCED_INSTANCE_ID.
		s := cg.StaticMember(*req.InstanceID)
		switch {
		case s == nil:
			return heartbeatError(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		case s.ID != req.MemberID:
			return heartbeatError(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, s.ID)
		}
		m = s
	}
	if req.MemberEpoch < 0 { // leave
		if m == nil {
			return heartbeatError(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
		}
		res.Member, res.Left, res.MemberEpoch = m, true, req.MemberEpoch
		if req.MemberEpoch == LeftStatic && req.InstanceID != nil {
			// A static member leaving for now keeps its assignment until
			// its session expires; its next incarnation takes it over.
			m.Epoch, m.Sent, m.Revoking = LeftStatic, nil, false
			res.Events = append(res.Events, Event{Type: MemberLeft, Member: m.ID, Reason: "static member left for now (member epoch -2)"})
			return res
		}
		if req.Downgrade && cg.LastConsumerMember(m) {
			res.Downgrade = true // the caller turns the group classic
			res.Events = append(res.Events, Event{Type: MemberLeft, Member: m.ID, Reason: fmt.Sprintf("left (member epoch %d)", req.MemberEpoch)})
			return res
		}
		res.Events = append(res.Events, cg.Remove(m, topics)...)
		res.Events = append(res.Events, Event{Type: MemberLeft, Member: m.ID, Reason: fmt.Sprintf("left (member epoch %d)", req.MemberEpoch)})
		return res
	}

	switch {
	case req.MemberEpoch == 0:
		id := req.MemberID
		if id == "" {
			id = newMemberID()
		}
		if req.InstanceID != nil {
			if old := cg.StaticMember(*req.InstanceID); old != nil {
				// Replacing a consumer-protocol static member needs it to
				// have left with epoch -2; a classic one is replaced as
				// the classic protocol replaces static members.
				if old.Classic == nil && old.Epoch != LeftStatic {
					return heartbeatError(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", id, *req.InstanceID, old.ID)
				}
				m = cg.replaceStatic(old, id)
				m.Classic = nil
				m.Epoch = 0
				res.Events = append(res.Events, Event{Type: MemberJoined, Member: id, Detail: "consumer", Reason: "static member replaces " + old.ID})
			}
		}
		if m == nil {
			m = &ConsumerMember{ID: id, Assigned: Assignment{}, Owned: Assignment{}}
			cg.Members[id] = m
			res.Events = append(res.Events, Event{Type: MemberJoined, Member: id, Detail: "consumer"})
			cg.NextEpoch()
		}
		m.Epoch = 0
		m.Sent = nil
		m.Classic = nil
		if req.Owned == nil {
			m.Owned = Assignment{} // a joining member owns what it says, nothing if silent
		}
		m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	case m == nil:
		return heartbeatError(kerr.UnknownMemberID, "group %s has no member %s", req.Group, req.MemberID)
	case req.MemberEpoch != m.Epoch:
		return heartbeatError(kerr.FencedMemberEpoch, "member %s is at epoch %d, not %d", m.ID, m.Epoch, req.MemberEpoch)
	}
	m.Classic = nil // a member heartbeating this way speaks the consumer protocol now

	if req.SubscribedTopicNames != nil && !slices.Equal(sortedCopy(req.SubscribedTopicNames), m.Subscribed) {
		m.Subscribed = sortedCopy(req.SubscribedTopicNames)
		cg.NextEpoch()
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.Regex {
		m.Regex = *req.SubscribedTopicRegex
		m.RegexPrincipal, m.RegexHost = req.Principal, req.Host // its matches are what they may DESCRIBE
		cg.NextEpoch()
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != cg.Assignor {
		cg.Assignor = *req.ServerAssignor
		cg.NextEpoch()
	}
	if req.InstanceID != nil {
		m.InstanceID = req.InstanceID
	}
	if req.RackID != nil {
		m.RackID = req.RackID
	}
	if req.RebalanceTimeout > 0 {
		m.RebalanceTimeout = req.RebalanceTimeout
	}
	if req.Owned != nil {
		m.Owned = req.Owned
	}

	if cg.SubscriptionsMoved(topics) {
		cg.NextEpoch()
	}
	if cg.AssignmentEpoch < cg.Epoch {
		cg.ComputeTarget(topics)
		res.Events = append(res.Events, cg.groupEvent(RebalanceStarted, "new target assignment"))
	}
	settled := cg.Settled()
	cg.Reconcile(m)
	if !settled && cg.Settled() {
		res.Events = append(res.Events, cg.groupEvent(RebalanceCompleted, "every member has its target assignment"))
	}

	res.Member, res.MemberEpoch = m, m.Epoch
	if m.Sent == nil || !m.Assigned.Equal(m.Sent) {
		res.Assignment = m.Assigned.Clone()
		m.Sent = m.Assigned.Clone()
	}
	return res
}

// LastConsumerMember says whether m is the only member on the consumer
// protocol, with classic members beside it (Kafka's
// allMembersUseClassicProtocolExcept, on a group that stays non-empty).
func (cg *ConsumerGroup) LastConsumerMember(m *ConsumerMember) bool {
	return m.Classic == nil && len(cg.Members) > 1 && cg.ClassicMembers() == len(cg.Members)-1
}

// Remove drops m (stopping its timers) and bumps the group epoch; the
// target is recomputed for the members left.
func (cg *ConsumerGroup) Remove(m *ConsumerMember, topics Topics) []Event {
	cg.drop(m)
	cg.NextEpoch()
	if len(cg.Members) > 0 {
		cg.ComputeTarget(topics)
		return []Event{cg.groupEvent(RebalanceStarted, "member "+m.ID+" left")}
	}
	return nil
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
