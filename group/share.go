package group

// Share groups (KIP-932): members heartbeat with ShareGroupHeartbeat and
// the coordinator assigns partitions with the simple assignor, where
// several members may share one partition. There is no revocation step:
// a partition may be fetched by any member it is assigned to, since the
// partition leader hands each record to one member at a time. A member's
// epoch is the group epoch of the assignment it was last given.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ShareKind marks __consumer_offsets records holding a share group.
const ShareKind = "share"

// ShareGroup is a share group's state, guarded by its group's lock.
type ShareGroup struct {
	Epoch           int32 // group epoch
	AssignmentEpoch int32 // the epoch the target was computed at
	Members         map[string]*ShareMember
	Target          map[string]Assignment // member id → target partitions
	Persisted       []byte                // the last state written to the log
	// TopicsSeen are the subscribed topics' partition counts at the last
	// assignment.
	TopicsSeen map[[16]byte]int
}

// ShareMember is one member of a share group.
type ShareMember struct {
	ID, ClientID, ClientHost string
	RackID                   *string
	Epoch                    int32
	Subscribed               []string
	Assigned                 Assignment
	Sent                     Assignment // the last assignment sent
	Session                  *clock.Timer
}

// NewShareGroup is an empty share group.
func NewShareGroup() *ShareGroup {
	return &ShareGroup{Members: map[string]*ShareMember{}, Target: map[string]Assignment{}}
}

// State is the group state as ShareGroupDescribe and ListGroups name it.
func (sg *ShareGroup) State() string {
	if len(sg.Members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// ShareHeartbeatRequest is a ShareGroupHeartbeat as the step sees it.
type ShareHeartbeatRequest struct {
	Group       string
	MemberID    string
	MemberEpoch int32
	RackID      *string
	// SubscribedTopicNames nil means unchanged.
	SubscribedTopicNames []string
	ClientID, ClientHost string
	MaxSize              int // group.share.max.size
}

// ShareHeartbeatResult is the step's answer.
type ShareHeartbeatResult struct {
	Code        int16
	Message     string
	Member      *ShareMember // nil on error
	Left        bool
	MemberEpoch int32
	Assignment  Assignment // when it changed since the last one sent
	Events      []Event
}

func shareError(err *kerr.Error, format string, args ...any) ShareHeartbeatResult {
	return ShareHeartbeatResult{Code: err.Code, Message: fmt.Sprintf(format, args...)}
}

// Heartbeat applies one heartbeat of a member: epoch 0 joins, -1 leaves,
// any other must be the member's epoch.
func (sg *ShareGroup) Heartbeat(req ShareHeartbeatRequest, topics Topics) ShareHeartbeatResult {
	var res ShareHeartbeatResult
	bump := false // one heartbeat moves the group epoch at most once
	m := sg.Members[req.MemberID]
	if req.MemberEpoch == -1 {
		if m == nil {
			return shareError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
		}
		res.Events = append(sg.Remove(m, topics), Event{Type: MemberLeft, Member: m.ID, Reason: "left (member epoch -1)"})
		res.Member, res.Left, res.MemberEpoch = m, true, -1
		return res
	}
	switch {
	case req.MemberEpoch == 0 && m == nil:
		if req.MaxSize > 0 && len(sg.Members) >= req.MaxSize {
			return shareError(kerr.GroupMaxSizeReached, "The share group has reached its maximum capacity of %d members.", req.MaxSize)
		}
		m = &ShareMember{ID: req.MemberID, Assigned: Assignment{}}
		sg.Members[m.ID] = m
		res.Events = append(res.Events, Event{Type: MemberJoined, Member: m.ID, Detail: "share"})
		bump = true
	case req.MemberEpoch == 0:
		m.Sent = nil // a rejoin gets its assignment again
	case m == nil:
		return shareError(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, req.Group)
	case req.MemberEpoch != m.Epoch:
		return shareError(kerr.FencedMemberEpoch, "The share group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.Epoch)
	}
	m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.RackID = req.RackID
	}
	if req.SubscribedTopicNames != nil && !slices.Equal(sortedCopy(req.SubscribedTopicNames), m.Subscribed) {
		m.Subscribed = sortedCopy(req.SubscribedTopicNames)
		bump = true
	}
	if bump || sg.topicsMoved(topics) {
		sg.Epoch++
	}
	if sg.AssignmentEpoch < sg.Epoch {
		sg.assign(topics)
		res.Events = append(res.Events, Event{Type: RebalanceCompleted, Group: true, Epoch: sg.Epoch,
			Reason: "new target assignment", Detail: fmt.Sprintf("%d members", len(sg.Members))})
	}
	// No revocation step: the member takes its target at once.
	if m.Epoch != sg.AssignmentEpoch {
		m.Assigned, m.Epoch = sg.Target[m.ID].Clone(), sg.AssignmentEpoch
	}
	res.Member, res.MemberEpoch = m, m.Epoch
	if m.Sent == nil || !m.Assigned.Equal(m.Sent) {
		res.Assignment = m.Assigned.Clone()
		m.Sent = m.Assigned.Clone()
	}
	return res
}

// Remove drops m (stopping its session timer), bumps the group epoch and
// reassigns the members left.
func (sg *ShareGroup) Remove(m *ShareMember, topics Topics) []Event {
	if m.Session != nil {
		m.Session.Stop()
	}
	delete(sg.Members, m.ID)
	delete(sg.Target, m.ID)
	sg.Epoch++
	if len(sg.Members) > 0 {
		sg.assign(topics)
		return []Event{{Type: RebalanceCompleted, Group: true, Epoch: sg.Epoch, Reason: "member " + m.ID + " left",
			Detail: fmt.Sprintf("%d members", len(sg.Members))}}
	}
	return nil
}

// topicsMoved says whether the subscribed topics' partitions changed
// since the last assignment (created, deleted, more partitions).
func (sg *ShareGroup) topicsMoved(topics Topics) bool {
	return !maps.Equal(sg.subscribedPartitions(topics), sg.TopicsSeen)
}

// subscribedPartitions is the partition count of every topic a member
// subscribes to.
func (sg *ShareGroup) subscribedPartitions(topics Topics) map[[16]byte]int {
	out := map[[16]byte]int{}
	for _, m := range sg.Members {
		for _, t := range topics.ByNames(m.Subscribed) {
			out[t.ID] = t.Partitions
		}
	}
	return out
}

// assign computes the target assignment at the group epoch with the
// simple assignor. Members take it on their next heartbeat.
func (sg *ShareGroup) assign(topics Topics) {
	sg.TopicsSeen = sg.subscribedPartitions(topics)
	sg.Target = SimpleAssign(sg.Members, sg.Target, topics)
	sg.AssignmentEpoch = sg.Epoch
}

// SimpleAssign is Kafka's share-group SimpleAssignor in its homogeneous
// form, over the members' subscriptions: with P partitions and M members,
// each partition is shared by ceil(M/P) members and member i of the
// sorted ids gets ceil(d*(i+1))-ceil(d*i) of them, d = sharing*P/M.
// Assignments members hold are kept where the counts allow (sticky); the
// rest are handed out partition by partition, round-robin over the members
// still short of their count and subscribed to the topic.
func SimpleAssign(members map[string]*ShareMember, current map[string]Assignment, topics Topics) map[string]Assignment {
	ids := slices.Sorted(maps.Keys(members))
	out := make(map[string]Assignment, len(ids))
	for _, id := range ids {
		out[id] = Assignment{}
	}
	type tp struct {
		id [16]byte
		p  int32
	}
	subs := map[string]map[[16]byte]bool{}
	var parts []tp
	seen := map[[16]byte]bool{}
	var all []Topic
	for _, id := range ids {
		subs[id] = map[[16]byte]bool{}
		for _, t := range topics.ByNames(members[id].Subscribed) {
			subs[id][t.ID] = true
			if !seen[t.ID] {
				seen[t.ID] = true
				all = append(all, t)
			}
		}
	}
	slices.SortFunc(all, func(a, b Topic) int { return compareName(a.Name, b.Name) })
	for _, t := range all {
		for p := 0; p < t.Partitions; p++ {
			parts = append(parts, tp{t.ID, int32(p)})
		}
	}
	if len(parts) == 0 || len(ids) == 0 {
		return out
	}
	sharing := (len(ids) + len(parts) - 1) / len(parts)
	d := float64(sharing*len(parts)) / float64(len(ids))
	desired := map[string]int{}
	for i, id := range ids {
		desired[id] = int(ceil(d*float64(i+1)) - ceil(d*float64(i)))
	}
	shared := map[tp]int{}
	count := map[string]int{}
	give := func(id string, x tp) {
		out[id].Add(x.id, x.p)
		shared[x]++
		count[id]++
	}
	// Sticky: what members hold stays while the counts allow.
	for _, id := range ids {
		for _, x := range parts {
			if current[id].Has(x.id, x.p) && subs[id][x.id] && count[id] < desired[id] && shared[x] < sharing {
				give(id, x)
			}
		}
	}
	next := 0
	for _, x := range parts {
		for tries := 0; shared[x] < sharing && tries < len(ids); tries++ {
			id := ids[next%len(ids)]
			next++
			if count[id] < desired[id] && subs[id][x.id] && !out[id].Has(x.id, x.p) {
				give(id, x)
				tries = -1
			}
		}
	}
	// Members with different subscriptions may leave a partition nobody
	// took: give it to the least loaded subscriber.
	for _, x := range parts {
		if shared[x] > 0 {
			continue
		}
		best := ""
		for _, id := range ids {
			if subs[id][x.id] && (best == "" || count[id] < count[best]) {
				best = id
			}
		}
		if best != "" {
			give(best, x)
		}
	}
	return out
}

func ceil(f float64) float64 {
	i := float64(int64(f))
	if f > i+1e-9 {
		return i + 1
	}
	return i
}

func compareName(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ShareGroupRecord is a share group's state written to __consumer_offsets
// after every change (JSON), so a new coordinator carries on with the same
// epochs and assignments.
type ShareGroupRecord struct {
	Epoch           int32              `json:"epoch"`
	AssignmentEpoch int32              `json:"assignment_epoch"`
	Members         []ShareMemberState `json:"members"`
}

// ShareMemberState is one member in a ShareGroupRecord.
type ShareMemberState struct {
	ID         string             `json:"id"`
	ClientID   string             `json:"client_id"`
	ClientHost string             `json:"client_host"`
	RackID     *string            `json:"rack_id,omitempty"`
	Epoch      int32              `json:"epoch"`
	Subscribed []string           `json:"subscribed,omitempty"`
	Assigned   map[string][]int32 `json:"assigned"`
	Target     map[string][]int32 `json:"target"`
}

// Record is the group's state as its record holds it.
func (sg *ShareGroup) Record() ShareGroupRecord {
	r := ShareGroupRecord{Epoch: sg.Epoch, AssignmentEpoch: sg.AssignmentEpoch}
	for _, id := range slices.Sorted(maps.Keys(sg.Members)) {
		m := sg.Members[id]
		r.Members = append(r.Members, ShareMemberState{ID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			RackID: m.RackID, Epoch: m.Epoch, Subscribed: m.Subscribed, Assigned: m.Assigned.record(), Target: sg.Target[id].record()})
	}
	return r
}

// RestoreShareGroup rebuilds a share group from its record; the members'
// session timers are the coordinator's to arm.
func RestoreShareGroup(r ShareGroupRecord) *ShareGroup {
	sg := NewShareGroup()
	sg.Epoch, sg.AssignmentEpoch = r.Epoch, r.AssignmentEpoch
	for _, ms := range r.Members {
		m := &ShareMember{ID: ms.ID, ClientID: ms.ClientID, ClientHost: ms.ClientHost, RackID: ms.RackID,
			Epoch: ms.Epoch, Subscribed: ms.Subscribed, Assigned: assignmentFromRecord(ms.Assigned)}
		m.Sent = m.Assigned.Clone()
		sg.Members[m.ID] = m
		sg.Target[m.ID] = assignmentFromRecord(ms.Target)
	}
	return sg
}
