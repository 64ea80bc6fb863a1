package group

// The StreamsGroupHeartbeat step. Member epoch 0 joins (with the
// topology), -1 leaves, -2 leaves a static member for now (its tasks wait
// for it until its session ends); any other epoch must be the member's
// current one, or its previous one while it owns nothing new
// (FENCED_MEMBER_EPOCH otherwise, UNKNOWN_MEMBER_ID for an unknown
// member). A member joining or leaving, a change of its process, rack or
// client tags, the first topology and a change of the topology's topics
// bump the group epoch; the target assignment is then recomputed by the
// sticky assignor, after streams.initial.rebalance.delay.ms for a new
// group. Members reconcile toward it: tasks they must give up are revoked
// first (their epoch stays), and a task is handed out only once no other
// member owns it.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StreamsHeartbeatRequest is a StreamsGroupHeartbeat as the step sees it.
// Nil fields mean unchanged.
type StreamsHeartbeatRequest struct {
	Group, MemberID  string
	MemberEpoch      int32
	EndpointEpoch    int32
	InstanceID       *string
	RackID           *string
	RebalanceTimeout time.Duration // 0: unchanged
	Topology         *Topology
	Owned            *TaskSet
	ProcessID        *string
	Endpoint         *Endpoint
	ClientTags       map[string]string
	Shutdown         bool

	ClientID, ClientHost string
}

// StreamsSettings are the group configs the step reads.
type StreamsSettings struct {
	NumStandbyReplicas    int
	InitialRebalanceDelay time.Duration
	Now                   time.Time
}

// StreamsHeartbeatResult is the step's answer.
type StreamsHeartbeatResult struct {
	Code    int16
	Message string
	// Member is the member the heartbeat was for; nil on error.
	Member      *StreamsMember
	Left        bool
	MemberEpoch int32
	// Assignment is the member's tasks when they changed since the last
	// answer (else nil).
	Assignment *TaskSet
	Statuses   []Status
	// Endpoints is set when the member's endpoint information is older
	// than the group's: the answer carries the map.
	Endpoints bool
	// Create are internal topics the broker is to create.
	Create []TopicInfo
	Events []Event
}

func streamsError(err *kerr.Error, format string, args ...any) StreamsHeartbeatResult {
	return StreamsHeartbeatResult{Code: err.Code, Message: fmt.Sprintf(format, args...)}
}

// StreamsLeaveStaticEpoch is the member epoch of a static member that left
// for now (-2).
const StreamsLeaveStaticEpoch = -2

// Heartbeat applies one heartbeat of a member to the group.
func (sg *StreamsGroup) Heartbeat(req StreamsHeartbeatRequest, topics StreamsTopics, set StreamsSettings) StreamsHeartbeatResult {
	var res StreamsHeartbeatResult
	m := sg.Members[req.MemberID]
	if req.MemberEpoch < 0 {
		if m == nil {
			return streamsError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
		}
		res.Member, res.Left, res.MemberEpoch = m, true, req.MemberEpoch
		if req.MemberEpoch == StreamsLeaveStaticEpoch && m.InstanceID != nil {
			// A static member leaving for now keeps its tasks until its
			// session ends or it comes back.
			m.Epoch = StreamsLeaveStaticEpoch
			res.Events = append(res.Events, Event{Type: MemberLeft, Member: m.ID, Reason: "static member left for now (member epoch -2)"})
			return res
		}
		sg.Remove(m)
		res.Events = append(res.Events, Event{Type: MemberLeft, Member: m.ID, Reason: "left (member epoch -1)"})
		return res
	}

	if req.Topology != nil && sg.Topology != nil && sg.Topology.Epoch <= req.Topology.Epoch && !sg.Topology.equal(req.Topology) {
		return streamsError(kerr.InvalidRequest, "Topology updates are not supported yet.")
	}
	bump := false // the group epoch moves once per heartbeat
	switch {
	case req.MemberEpoch == 0:
		if m == nil && req.InstanceID != nil {
			old := sg.staticMember(*req.InstanceID)
			if old != nil && old.Epoch != StreamsLeaveStaticEpoch {
				return streamsError(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by member %s.",
					req.MemberID, *req.InstanceID, old.ID)
			}
			if old != nil { // the static member is back under a new id: it takes its place
				m = &StreamsMember{ID: req.MemberID, Epoch: old.Epoch, PreviousEpoch: old.PreviousEpoch, State: old.State,
					Assigned: old.Assigned.Clone(), Revoking: old.Revoking.Clone(), ProcessID: old.ProcessID}
				if old.Session != nil {
					old.Session.Stop()
				}
				delete(sg.Members, old.ID)
				sg.Target[m.ID] = sg.Target[old.ID]
				delete(sg.Target, old.ID)
				sg.Members[m.ID] = m
				res.Events = append(res.Events, Event{Type: MemberJoined, Member: m.ID, Detail: "streams", Reason: "replaces static member " + old.ID})
			}
		}
		if m == nil {
			m = &StreamsMember{ID: req.MemberID, State: MemberStable, Assigned: emptyTaskSet(), Revoking: emptyTaskSet()}
			sg.Members[m.ID] = m
			res.Events = append(res.Events, Event{Type: MemberJoined, Member: m.ID, Detail: "streams"})
			bump = true
		}
		if m.Epoch == StreamsLeaveStaticEpoch {
			m.Epoch = 0
		}
		m.Sent = nil
		m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	case m == nil:
		return streamsError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
	case req.MemberEpoch > m.Epoch:
		return streamsError(kerr.FencedMemberEpoch, "The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its tasks and rejoin.", req.MemberEpoch, m.Epoch)
	case req.MemberEpoch < m.Epoch && (req.MemberEpoch != m.PreviousEpoch || req.Owned != nil && !containedIn(*req.Owned, m.Assigned)):
		return streamsError(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its tasks and rejoin.", req.MemberEpoch, m.Epoch)
	}

	if req.Topology != nil {
		switch {
		case sg.Topology == nil:
			sg.Topology = req.Topology
			sg.Configured = nil
			bump = true
		case sg.Topology.Epoch > req.Topology.Epoch:
			// a stale member: it is told so below
		}
		m.TopologyEpoch = req.Topology.Epoch
	}
	relevant := false
	if req.ProcessID != nil && *req.ProcessID != m.ProcessID {
		m.ProcessID, relevant = *req.ProcessID, true
	}
	if req.RackID != nil && (m.RackID == nil || *m.RackID != *req.RackID) {
		m.RackID, relevant = req.RackID, true
	}
	if req.ClientTags != nil && !maps.Equal(req.ClientTags, m.ClientTags) {
		m.ClientTags, relevant = req.ClientTags, true
	}
	if req.InstanceID != nil {
		m.InstanceID = req.InstanceID
	}
	if req.RebalanceTimeout > 0 {
		m.RebalanceTimeout = req.RebalanceTimeout
	}
	if req.Endpoint != nil && (m.Endpoint == nil || *m.Endpoint != *req.Endpoint) {
		m.Endpoint = req.Endpoint
		sg.bumpEndpoints()
	}
	if relevant {
		bump = true
	}
	if req.Shutdown && !sg.Shutdown {
		sg.Shutdown = true
		res.Events = append(res.Events, Event{Type: RebalanceStarted, Group: true, Epoch: sg.Epoch, Member: m.ID, Reason: "shutdown requested",
			Detail: fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", m.ID)})
	}

	// The topology against the topics: a change of them bumps the epoch.
	if sg.Topology != nil {
		seen := sg.Topology.TopicsSeen(topics)
		if sg.Configured == nil || !maps.Equal(seen, sg.TopicsSeen) {
			if sg.Configured != nil {
				bump = true // the topics changed (Kafka's metadata hash)
			}
			sg.TopicsSeen = seen
			sg.Configured = Configure(sg.Topology, topics)
		}
		res.Create = slices.Clone(sg.Configured.Create)
	}
	// A new group's first epoch starts streams.initial.rebalance.delay.ms:
	// its target is empty until the delay passes, then computed at a new
	// epoch (Kafka's delayed target assignment), whatever came meanwhile.
	if bump {
		sg.NextEpoch()
		if sg.AssignmentEpoch == 0 && set.InitialRebalanceDelay > 0 && sg.DelayUntil.IsZero() {
			sg.DelayPending, sg.DelayUntil = true, set.Now.Add(set.InitialRebalanceDelay)
			sg.Target = map[string]TaskSet{}
			for id := range sg.Members {
				sg.Target[id] = emptyTaskSet()
			}
			sg.AssignmentEpoch = sg.Epoch
		}
	}
	delayed := sg.DelayPending && set.Now.Before(sg.DelayUntil)
	if sg.DelayPending && !delayed {
		sg.DelayPending = false
		sg.NextEpoch()
	}
	if !delayed && sg.AssignmentEpoch < sg.Epoch {
		sg.ComputeTarget(set.NumStandbyReplicas)
		res.Events = append(res.Events, sg.groupEvent(RebalanceStarted, "new target assignment"))
	}
	settled := sg.Settled()
	sg.Reconcile(m, req.Owned)
	if !settled && sg.Settled() {
		res.Events = append(res.Events, sg.groupEvent(RebalanceCompleted, "every member has its target assignment"))
	}

	if delayed {
		res.Statuses = append(res.Statuses, Status{StatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."})
	}
	if sg.Shutdown {
		res.Statuses = append(res.Statuses, Status{StatusShutdownApplication, "A client requested the shutdown of the whole application."})
	}
	if sg.Configured != nil && sg.Configured.Status != nil {
		res.Statuses = append(res.Statuses, *sg.Configured.Status)
	}
	if sg.Topology != nil && m.TopologyEpoch < sg.Topology.Epoch {
		res.Statuses = append(res.Statuses, Status{StatusStaleTopology, fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", m.TopologyEpoch, sg.Topology.Epoch)})
	}

	res.Member, res.MemberEpoch = m, m.Epoch
	res.Endpoints = req.EndpointEpoch < sg.EndpointEpoch
	if m.Sent == nil || !m.Sent.Equal(m.Assigned) {
		a := m.Assigned.Clone()
		res.Assignment = &a
		sent := m.Assigned.Clone()
		m.Sent = &sent
	}
	return res
}

func emptyTaskSet() TaskSet { return TaskSet{Active: Tasks{}, Standby: Tasks{}, Warmup: Tasks{}} }

func containedIn(owned, assigned TaskSet) bool {
	return owned.Active.Minus(assigned.Active).Len() == 0 && owned.Standby.Minus(assigned.Standby).Len() == 0 &&
		owned.Warmup.Minus(assigned.Warmup).Len() == 0
}

func (sg *StreamsGroup) staticMember(instanceID string) *StreamsMember {
	for _, m := range sg.SortedMembers() {
		if m.InstanceID != nil && *m.InstanceID == instanceID {
			return m
		}
	}
	return nil
}

// NextEpoch bumps the group epoch.
func (sg *StreamsGroup) NextEpoch() { sg.Epoch++ }

// Remove drops m (stopping its session timer) and bumps the group epoch;
// the target is recomputed at the next heartbeat.
func (sg *StreamsGroup) Remove(m *StreamsMember) {
	if m.Session != nil {
		m.Session.Stop()
	}
	if m.Revocation != nil {
		m.Revocation.Stop()
	}
	delete(sg.Members, m.ID)
	delete(sg.Target, m.ID)
	sg.bumpEndpoints()
	sg.NextEpoch()
}

// ComputeTarget runs the sticky assignor for the current group epoch; a
// topology that is not ready assigns nothing.
func (sg *StreamsGroup) ComputeTarget(numStandby int) {
	var ms []AssignMember
	for _, m := range sg.SortedMembers() {
		ms = append(ms, AssignMember{ID: m.ID, ProcessID: m.ProcessID, Prev: sg.Target[m.ID]})
	}
	next := AssignStreamsTasks(ms, sg.Configured, numStandby)
	sg.Target = next
	sg.AssignmentEpoch = sg.Epoch
	sg.bumpEndpoints()
}

// bumpEndpoints moves the endpoint information epoch, when some member has
// a user endpoint (without one there is no map to send).
func (sg *StreamsGroup) bumpEndpoints() {
	for _, m := range sg.Members {
		if m.Endpoint != nil {
			sg.EndpointEpoch++
			return
		}
	}
}

// Settled reports whether every member is at the target assignment's
// epoch with exactly its target tasks.
func (sg *StreamsGroup) Settled() bool {
	for id, m := range sg.Members {
		if m.Epoch != sg.AssignmentEpoch || m.State != MemberStable || !m.Assigned.Equal(sg.Target[id]) {
			return false
		}
	}
	return len(sg.Members) > 0
}

// Reconcile moves m toward its target. While it must revoke tasks it is
// told to keep only the rest and stays at its epoch; once its heartbeat
// shows them gone (owned, when sent) it gets the target's epoch and the
// target tasks no other member still owns: an active task another member
// owns, and any task another member of its process holds, are held back
// (UNRELEASED_TASKS) until released.
func (sg *StreamsGroup) Reconcile(m *StreamsMember, owned *TaskSet) {
	if m.Epoch == StreamsLeaveStaticEpoch {
		return
	}

	if m.State == MemberUnrevokedTasks {
		if owned == nil || ownsAny(*owned, m.Revoking) {
			return
		}
		m.Revoking = emptyTaskSet()
	}
	if m.State == MemberStable && m.Epoch == sg.AssignmentEpoch {
		return
	}
	target := sg.Target[m.ID]
	kept := TaskSet{
		Active:  m.Assigned.Active.Filter(target.Active.Has),
		Standby: m.Assigned.Standby.Filter(target.Standby.Has),
		Warmup:  m.Assigned.Warmup.Filter(target.Warmup.Has),
	}
	revoke := TaskSet{
		Active:  m.Assigned.Active.Minus(target.Active),
		Standby: m.Assigned.Standby.Minus(target.Standby),
		Warmup:  m.Assigned.Warmup.Minus(target.Warmup),
	}
	if !revoke.Empty() {
		m.Assigned, m.Revoking = kept, revoke
		m.State = MemberUnrevokedTasks
		return
	}
	unreleased := false
	activeElsewhere := func(sub string, p int32) bool {
		for _, o := range sg.Members {
			if o != m && o.ownsActive(sub, p) {
				return true
			}
		}
		return false
	}
	inProcess := func(sub string, p int32) bool {
		for _, o := range sg.Members {
			if o != m && o.ProcessID == m.ProcessID && o.holds(sub, p) {
				return true
			}
		}
		return false
	}
	add := func(from Tasks, into Tasks, held func(string, int32) bool) {
		for sub, ps := range from {
			for _, p := range ps {
				if into.Has(sub, p) {
					continue
				}
				if held(sub, p) {
					unreleased = true
					continue
				}
				into.Add(sub, p)
			}
		}
	}
	add(target.Active, kept.Active, func(s string, p int32) bool { return activeElsewhere(s, p) || inProcess(s, p) })
	add(target.Standby, kept.Standby, inProcess)
	add(target.Warmup, kept.Warmup, inProcess)
	m.Assigned = kept
	if m.Epoch != sg.AssignmentEpoch {
		m.PreviousEpoch, m.Epoch = m.Epoch, sg.AssignmentEpoch
	}
	m.State = MemberStable
	if unreleased {
		m.State = MemberUnreleasedTasks
	}
}

func ownsAny(owned, ts TaskSet) bool {
	return owned.Active.Filter(ts.Active.Has).Len() > 0 || owned.Standby.Filter(ts.Standby.Has).Len() > 0 ||
		owned.Warmup.Filter(ts.Warmup.Has).Len() > 0
}

// groupEvent is a group event of sg as it is now.
func (sg *StreamsGroup) groupEvent(t EventType, reason string) Event {
	return Event{Type: t, Group: true, Epoch: sg.Epoch, Reason: reason,
		Detail: fmt.Sprintf("%d members, assignment epoch %d", len(sg.Members), sg.AssignmentEpoch)}
}

func (t *Topology) equal(o *Topology) bool {
	a, b := t.record(), o.record()
	return string(a) == string(b)
}
