package group

// Streams groups (KIP-1071, group.protocol=streams): the coordinator owns
// the Kafka Streams topology a group runs, checks its topics, creates its
// internal ones and assigns tasks (a subtopology and a partition) to the
// members itself — active, standby and warm-up tasks — with Kafka's sticky
// task assignor. Members converge on their target through heartbeats as
// KIP-848 consumers do: a task moves only after its previous owner has
// revoked it, so no task is ever owned by two members at once.

import (
	"maps"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// StreamsKind marks __consumer_offsets records holding a streams group.
const StreamsKind = "streams"

// Tasks are task partitions by subtopology id, each list sorted.
type Tasks map[string][]int32

// Clone is a deep copy.
func (t Tasks) Clone() Tasks {
	out := make(Tasks, len(t))
	for s, ps := range t {
		out[s] = slices.Clone(ps)
	}
	return out
}

// Has says whether t holds task (sub, p).
func (t Tasks) Has(sub string, p int32) bool {
	_, ok := slices.BinarySearch(t[sub], p)
	return ok
}

// Add adds task (sub, p), keeping the list sorted.
func (t Tasks) Add(sub string, p int32) {
	ps := t[sub]
	if i, ok := slices.BinarySearch(ps, p); !ok {
		t[sub] = slices.Insert(ps, i, p)
	}
}

// Filter keeps the tasks keep accepts.
func (t Tasks) Filter(keep func(sub string, p int32) bool) Tasks {
	out := Tasks{}
	for s, ps := range t {
		for _, p := range ps {
			if keep(s, p) {
				out.Add(s, p)
			}
		}
	}
	return out
}

// Minus is t without the tasks of o.
func (t Tasks) Minus(o Tasks) Tasks {
	return t.Filter(func(s string, p int32) bool { return !o.Has(s, p) })
}

// Len is the number of tasks.
func (t Tasks) Len() int {
	n := 0
	for _, ps := range t {
		n += len(ps)
	}
	return n
}

// Equal says whether t and o hold the same tasks.
func (t Tasks) Equal(o Tasks) bool {
	if t.Len() != o.Len() {
		return false
	}
	for s, ps := range t {
		if !slices.Equal(ps, o[s]) {
			return false
		}
	}
	return true
}

// Subtopologies are t's subtopology ids, sorted.
func (t Tasks) Subtopologies() []string {
	var out []string
	for s, ps := range t {
		if len(ps) > 0 {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TaskSet is one member's active, standby and warm-up tasks.
type TaskSet struct {
	Active  Tasks `json:"active,omitempty"`
	Standby Tasks `json:"standby,omitempty"`
	Warmup  Tasks `json:"warmup,omitempty"`
}

// Clone is a deep copy with no nil maps.
func (ts TaskSet) Clone() TaskSet {
	return TaskSet{Active: ts.Active.Clone(), Standby: ts.Standby.Clone(), Warmup: ts.Warmup.Clone()}
}

// Equal says whether both hold the same tasks of each kind.
func (ts TaskSet) Equal(o TaskSet) bool {
	return ts.Active.Equal(o.Active) && ts.Standby.Equal(o.Standby) && ts.Warmup.Equal(o.Warmup)
}

// Empty says whether ts holds no task.
func (ts TaskSet) Empty() bool {
	return ts.Active.Len() == 0 && ts.Standby.Len() == 0 && ts.Warmup.Len() == 0
}

// Holds says whether ts holds task (sub, p) of any kind.
func (ts TaskSet) Holds(sub string, p int32) bool {
	return ts.Active.Has(sub, p) || ts.Standby.Has(sub, p) || ts.Warmup.Has(sub, p)
}

// Member states of a streams member's reconciliation, as Kafka names them.
const (
	MemberStable          = "STABLE"
	MemberUnrevokedTasks  = "UNREVOKED_TASKS"
	MemberUnreleasedTasks = "UNRELEASED_TASKS"
)

// Endpoint is a member's user endpoint (application.server), where its
// interactive queries are served.
type Endpoint struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

// StreamsMember is one member (one Kafka Streams client, a
// StreamThread's consumer) of a streams group.
type StreamsMember struct {
	ID, ClientID, ClientHost string
	InstanceID, RackID       *string
	ProcessID                string
	Endpoint                 *Endpoint
	ClientTags               map[string]string
	TopologyEpoch            int32
	RebalanceTimeout         time.Duration

	Epoch, PreviousEpoch int32
	State                string
	// Assigned are the tasks the member was told to own; Revoking the
	// ones it must still give up (it owns them until it says it does not).
	Assigned, Revoking TaskSet
	// Sent is the assignment last sent, to send only changes; nil makes
	// the next answer carry it.
	Sent *TaskSet
	// Session is the member's session timer, armed by the coordinator;
	// Revocation its rebalance timeout while it has tasks to revoke.
	Session, Revocation *clock.Timer
}

// ownsActive says whether m still owns task (sub, p) as an active task.
func (m *StreamsMember) ownsActive(sub string, p int32) bool {
	return m.Assigned.Active.Has(sub, p) || m.Revoking.Active.Has(sub, p)
}

// holds says whether m still holds task (sub, p) of any kind.
func (m *StreamsMember) holds(sub string, p int32) bool {
	return m.Assigned.Holds(sub, p) || m.Revoking.Holds(sub, p)
}

// StreamsGroup is a streams group's state, guarded by its group's lock.
type StreamsGroup struct {
	Epoch           int32 // group epoch
	AssignmentEpoch int32 // epoch the target assignment was computed at
	Topology        *Topology
	Members         map[string]*StreamsMember
	Target          map[string]TaskSet // member id → target tasks
	// EndpointEpoch moves whenever the endpoint-to-partitions map may have
	// changed; members asking with an older one get the map.
	EndpointEpoch int32
	// Shutdown is set once a member asked the application to shut down.
	Shutdown bool
	// DelayPending is set while a new group waits for its first
	// assignment, until DelayUntil (streams.initial.rebalance.delay.ms
	// after its first epoch).
	DelayPending bool
	DelayUntil   time.Time

	// Configured is the topology validated against the topics as of
	// TopicsSeen (not persisted: recomputed after a load).
	Configured *ConfiguredTopology
	TopicsSeen map[string]int
	Persisted  []byte
}

// NewStreamsGroup is an empty streams group.
func NewStreamsGroup() *StreamsGroup {
	return &StreamsGroup{Members: map[string]*StreamsMember{}, Target: map[string]TaskSet{}}
}

// State is the group state as StreamsGroupDescribe and ListGroups name it:
// Empty, NotReady (the topology's topics are not in place), Assigning,
// Reconciling or Stable.
func (sg *StreamsGroup) State() string {
	switch {
	case len(sg.Members) == 0:
		return "Empty"
	case sg.Configured == nil || !sg.Configured.Ready():
		return "NotReady"
	case sg.AssignmentEpoch < sg.Epoch:
		return "Assigning"
	}
	for _, m := range sg.Members {
		if m.Epoch != sg.AssignmentEpoch || m.State != MemberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// SortedMembers are the members by id.
func (sg *StreamsGroup) SortedMembers() []*StreamsMember {
	out := make([]*StreamsMember, 0, len(sg.Members))
	for _, id := range slices.Sorted(maps.Keys(sg.Members)) {
		out = append(out, sg.Members[id])
	}
	return out
}

// CheckStreamsMemberEpoch validates a streams member's OffsetCommit or
// TxnOffsetCommit: the epoch must be its current one, any other is
// STALE_MEMBER_EPOCH (Kafka 4.4 answers that for a newer epoch too, as the
// reference corpus showed).
func CheckStreamsMemberEpoch(m *StreamsMember, epoch int32) int16 {
	if epoch != m.Epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}
