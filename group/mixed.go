package group

// Classic members inside a KIP-848 consumer group (a "mixed" group, as
// Kafka 4.x runs it while a group moves between protocols): a member
// speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup is a member of the
// consumer group like any other. The coordinator assigns; its JoinGroup
// is answered at once with its member epoch as the generation (nobody
// leads), its SyncGroup with its current assignment in the consumer
// protocol's encoding, and its Heartbeat with REBALANCE_IN_PROGRESS
// whenever the group epoch moved past it, it must revoke partitions or
// partitions it waits for were released: that is how it learns to rejoin.

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClassicMember is what a classic member brings that a consumer-protocol
// member does not: its session timeout and the protocols of its join.
type ClassicMember struct {
	SessionTimeout time.Duration
	Protocols      []Protocol
}

// ClassicMemberState is a ClassicMember in the group's record.
type ClassicMemberState struct {
	SessionTimeoutMs int64           `json:"session_timeout_ms"`
	Protocols        []ProtocolState `json:"protocols"`
}

// ProtocolState is one protocol of a classic member in a record.
type ProtocolState struct {
	Name     string `json:"name"`
	Metadata []byte `json:"metadata"`
}

func (c *ClassicMember) state() *ClassicMemberState {
	if c == nil {
		return nil
	}
	s := &ClassicMemberState{SessionTimeoutMs: c.SessionTimeout.Milliseconds()}
	for _, p := range c.Protocols {
		s.Protocols = append(s.Protocols, ProtocolState{Name: p.Name, Metadata: p.Metadata})
	}
	return s
}

func (s *ClassicMemberState) member() *ClassicMember {
	if s == nil {
		return nil
	}
	c := &ClassicMember{SessionTimeout: time.Duration(s.SessionTimeoutMs) * time.Millisecond}
	for _, p := range s.Protocols {
		c.Protocols = append(c.Protocols, Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	return c
}

// protocol is the protocol a classic member's join was answered with: its
// first.
func (c *ClassicMember) protocol() Protocol {
	if len(c.Protocols) == 0 {
		return Protocol{}
	}
	return c.Protocols[0]
}

// ClassicMembers counts the members speaking the classic protocol.
func (cg *ConsumerGroup) ClassicMembers() int {
	n := 0
	for _, m := range cg.Members {
		if m.Classic != nil {
			n++
		}
	}
	return n
}

// StaticMember is the member with instance id, or nil.
func (cg *ConsumerGroup) StaticMember(instanceID string) *ConsumerMember {
	for _, m := range cg.Members {
		if m.InstanceID != nil && *m.InstanceID == instanceID {
			return m
		}
	}
	return nil
}

// supportsClassic says whether a classic member with these protocols may
// join: the consumer protocol type and, once classic members are in, a
// protocol every one of them supports (Kafka's supportsClassicProtocols).
func (cg *ConsumerGroup) supportsClassic(protocolType string, protocols []Protocol) bool {
	if protocolType != "consumer" || len(protocols) == 0 {
		return false
	}
	n := cg.ClassicMembers()
	if n == 0 {
		return true
	}
	return slices.ContainsFunc(protocols, func(p Protocol) bool {
		k := 0
		for _, m := range cg.Members {
			if m.Classic != nil && slices.ContainsFunc(m.Classic.Protocols, func(q Protocol) bool { return q.Name == p.Name }) {
				k++
			}
		}
		return k == n
	})
}

// ClassicJoinResult is a classic JoinGroup's outcome in a consumer group.
type ClassicJoinResult struct {
	JoinResult
	Message string
	Member  *ConsumerMember // nil on error or MEMBER_ID_REQUIRED
	// Replaced is the static member the join replaced, if any.
	Replaced *ConsumerMember
	// Downgrade says the join replaced the last consumer-protocol member:
	// the caller turns the group classic (DowngradeJoined).
	Downgrade bool
	Events    []Event
}

// NewClassicMemberID is the member id the consumer group gives a classic
// member: a UUID, as Kafka's Uuid.randomUuid().
func NewClassicMemberID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ClassicJoin applies a classic member's JoinGroup to the consumer group:
// it joins (or rejoins) like a consumer-protocol member with epoch 0 would,
// reporting the partitions its subscription says it owns, and is answered
// at once with its member epoch as the generation.
func (cg *ConsumerGroup) ClassicJoin(r JoinRequest, topics Topics) ClassicJoinResult {
	fail := func(err *kerr.Error, format string, args ...any) ClassicJoinResult {
		return ClassicJoinResult{JoinResult: JoinError(err.Code, r.MemberID), Message: fmt.Sprintf(format, args...)}
	}
	id := r.MemberID
	unknown := id == ""
	if unknown {
		id = NewClassicMemberID()
	}
	if !cg.supportsClassic(r.ProtocolType, r.Protocols) {
		return fail(kerr.InconsistentGroupProtocol, "Member %s's protocols are not supported.", id)
	}
	if unknown && r.InstanceID == nil && r.Version >= 4 {
		return ClassicJoinResult{JoinResult: JoinError(kerr.MemberIDRequired.Code, id)}
	}
	var res ClassicJoinResult
	m := cg.Members[id]
	if r.InstanceID != nil {
		old := cg.StaticMember(*r.InstanceID)
		switch {
		case old != nil && unknown:
			// A classic static member replaces its previous incarnation
			// whatever state it is in, taking over its assignment.
			m = cg.replaceStatic(old, id)
			res.Replaced = old
		case old != nil && old.ID != id:
			return fail(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", id, *r.InstanceID, old.ID)
		case old == nil && !unknown && m == nil:
			return fail(kerr.UnknownMemberID, "Instance id %s is unknown.", *r.InstanceID)
		}
	}
	if m == nil {
		m = &ConsumerMember{ID: id, Assigned: Assignment{}, Owned: Assignment{}}
		cg.Members[id] = m
		res.Events = append(res.Events, Event{Type: MemberJoined, Member: id, Detail: "classic"})
	}
	subscribed, owned := classicSubscription(r.Protocols, topics)
	if !slices.Equal(sortedCopy(subscribed), m.Subscribed) {
		m.Subscribed = sortedCopy(subscribed)
		cg.NextEpoch()
	}
	m.Classic = &ClassicMember{SessionTimeout: r.Session, Protocols: r.Protocols}
	m.InstanceID = r.InstanceID
	m.ClientID, m.ClientHost, m.RebalanceTimeout = r.ClientID, r.Host, r.Rebalance
	m.Owned = owned
	res.Events = append(res.Events, cg.settle(m, topics)...)
	res.Member = m
	res.JoinResult = JoinResult{MemberID: m.ID, Generation: m.Epoch, ProtocolType: "consumer", Protocol: m.Classic.protocol().Name}
	res.Downgrade = r.Downgrade && res.Replaced != nil && res.Replaced.Classic == nil && cg.ClassicMembers() == len(cg.Members)
	return res
}

// settle recomputes the target if the group epoch moved and reconciles m.
func (cg *ConsumerGroup) settle(m *ConsumerMember, topics Topics) []Event {
	var evs []Event
	if cg.SubscriptionsMoved(topics) {
		cg.NextEpoch()
	}
	if cg.AssignmentEpoch < cg.Epoch {
		cg.ComputeTarget(topics)
		evs = append(evs, cg.groupEvent(RebalanceStarted, "new target assignment"))
	}
	settled := cg.Settled()
	cg.Reconcile(m)
	if !settled && cg.Settled() {
		evs = append(evs, cg.groupEvent(RebalanceCompleted, "every member has its target assignment"))
	}
	return evs
}

// replaceStatic moves static member old's place, assignment and target to
// a new member id, at epoch 0 (Kafka's replaceMember).
func (cg *ConsumerGroup) replaceStatic(old *ConsumerMember, id string) *ConsumerMember {
	if old.Session != nil {
		old.Session.Stop()
	}
	if old.Rejoin != nil {
		old.Rejoin.Stop()
	}
	m := &ConsumerMember{ID: id, ClientID: old.ClientID, ClientHost: old.ClientHost, InstanceID: old.InstanceID, RackID: old.RackID,
		Subscribed: old.Subscribed, Regex: old.Regex, RegexPrincipal: old.RegexPrincipal, RegexHost: old.RegexHost,
		RebalanceTimeout: old.RebalanceTimeout, Assigned: old.Assigned.Clone(), Owned: old.Owned.Clone(), Classic: old.Classic}
	target := cg.Target[old.ID]
	delete(cg.Members, old.ID)
	delete(cg.Target, old.ID)
	cg.Members[id] = m
	cg.Target[id] = target
	return m
}

// classicSubscription reads the topics and owned partitions of a classic
// member's consumer protocol subscription (the first protocol that reads).
func classicSubscription(protocols []Protocol, topics Topics) ([]string, Assignment) {
	owned := Assignment{}
	for _, p := range protocols {
		var md kmsg.ConsumerMemberMetadata
		if md.ReadFrom(p.Metadata) != nil {
			continue
		}
		for _, o := range md.OwnedPartitions {
			if t, ok := topics.Lookup(o.Topic); ok {
				for _, part := range o.Partitions {
					owned.Add(t.ID, part)
				}
			}
		}
		return md.Topics, owned
	}
	return nil, owned
}

// classicMember finds the member a classic request names: by instance id
// for a static member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), else by id;
// it must speak the classic protocol.
func (cg *ConsumerGroup) classicMember(memberID string, instanceID *string) (*ConsumerMember, int16) {
	var m *ConsumerMember
	if instanceID != nil {
		m = cg.StaticMember(*instanceID)
		switch {
		case m == nil:
			return nil, kerr.UnknownMemberID.Code
		case m.ID != memberID:
			return nil, kerr.FencedInstanceID.Code
		}
	} else if m = cg.Members[memberID]; m == nil {
		return nil, kerr.UnknownMemberID.Code
	}
	if m.Classic == nil {
		return nil, kerr.UnknownMemberID.Code
	}
	return m, 0
}

// ClassicSync answers a classic member's SyncGroup with its current
// assignment in the consumer protocol (the version of its subscription).
// A member behind the group epoch that has nothing to revoke must rejoin
// first: REBALANCE_IN_PROGRESS.
func (cg *ConsumerGroup) ClassicSync(req SyncRequest, topics Topics) (*ConsumerMember, []byte, int16) {
	m, code := cg.classicMember(req.MemberID, req.InstanceID)
	switch {
	case code != 0:
	case req.Generation != m.Epoch:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != "consumer",
		req.Protocol != nil && *req.Protocol != m.Classic.protocol().Name:
		code = kerr.InconsistentGroupProtocol.Code
	case cg.Epoch > m.Epoch && !m.Revoking:
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		return m, nil, code
	}
	return m, EncodeAssignment(m.Assigned, m.Classic.protocol().Metadata, topics), 0
}

// ClassicHeartbeat answers a classic member's Heartbeat: the member must
// rejoin (REBALANCE_IN_PROGRESS) when the group epoch moved past it, it
// has partitions to revoke, or partitions of its target it waited for are
// free now.
func (cg *ConsumerGroup) ClassicHeartbeat(memberID string, instanceID *string, generation int32) (*ConsumerMember, int16) {
	m, code := cg.classicMember(memberID, instanceID)
	switch {
	case code != 0:
		return nil, code
	case generation != m.Epoch:
		return nil, kerr.IllegalGeneration.Code
	case m.Epoch < cg.Epoch || m.Revoking || cg.releasedFor(m):
		return m, kerr.RebalanceInProgress.Code
	}
	return m, 0
}

// releasedFor says whether a partition of m's target that m lacks is no
// longer held by anyone (its previous owner revoked it).
func (cg *ConsumerGroup) releasedFor(m *ConsumerMember) bool {
	for id, ps := range cg.Target[m.ID] {
		for _, p := range ps {
			if m.Assigned.Has(id, p) {
				continue
			}
			held := false
			for _, o := range cg.Members {
				if o != m && (o.Assigned.Has(id, p) || o.Owned.Has(id, p)) {
					held = true
				}
			}
			if !held {
				return true
			}
		}
	}
	return false
}

// ClassicLeave removes the classic members a LeaveGroup names (by id, or
// by instance id), each with its own error; the group epoch moves once if
// any left.
func (cg *ConsumerGroup) ClassicLeave(leaving []LeaveMember, topics Topics) ([]int16, []Event) {
	codes := make([]int16, len(leaving))
	var evs []Event
	var gone []*ConsumerMember
	for i, l := range leaving {
		var m *ConsumerMember
		if l.InstanceID == nil {
			m = cg.Members[l.MemberID]
		} else if m = cg.StaticMember(*l.InstanceID); m != nil && l.MemberID != "" && m.ID != l.MemberID {
			codes[i] = kerr.FencedInstanceID.Code
			continue
		}
		if m == nil || m.Classic == nil {
			codes[i] = kerr.UnknownMemberID.Code
			continue
		}
		gone = append(gone, m)
		cg.drop(m)
		evs = append(evs, Event{Type: MemberLeft, Member: m.ID, Reason: "left (LeaveGroup)"})
	}
	if len(gone) > 0 {
		cg.NextEpoch()
		if len(cg.Members) > 0 {
			cg.ComputeTarget(topics)
			evs = append(evs, cg.groupEvent(RebalanceStarted, "classic members left"))
		}
	}
	return codes, evs
}

// LeaveMember is one member a LeaveGroup names.
type LeaveMember struct {
	MemberID   string
	InstanceID *string
}

// drop removes m and stops its timers, without moving the epoch.
func (cg *ConsumerGroup) drop(m *ConsumerMember) {
	if m.Session != nil {
		m.Session.Stop()
	}
	if m.Rejoin != nil {
		m.Rejoin.Stop()
	}
	delete(cg.Members, m.ID)
	delete(cg.Target, m.ID)
}

// EncodeAssignment is a consumer protocol assignment of a, by topic name,
// in the version of the subscription metadata md.
func EncodeAssignment(a Assignment, md []byte, topics Topics) []byte {
	var sub kmsg.ConsumerMemberMetadata
	version := int16(0)
	if sub.ReadFrom(md) == nil {
		version = min(sub.Version, 3)
	}
	out := kmsg.ConsumerMemberAssignment{Version: version}
	for _, id := range a.TopicIDs() {
		t, ok := topics.ByID(id)
		if !ok {
			continue
		}
		out.Topics = append(out.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: t.Name, Partitions: slices.Clone(a[id])})
	}
	slices.SortFunc(out.Topics, func(x, y kmsg.ConsumerMemberAssignmentTopic) int {
		switch {
		case x.Topic < y.Topic:
			return -1
		case x.Topic > y.Topic:
			return 1
		}
		return 0
	})
	return out.AppendTo(nil)
}
