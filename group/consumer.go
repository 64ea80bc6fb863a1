package group

// KIP-848 consumer groups: the coordinator assigns partitions itself
// ("uniform" or "range"), and each member converges on its target
// assignment through heartbeats. A partition moves only after its previous
// owner has revoked it (the owner heartbeats without it), so no partition
// is ever consumed by two members of one group epoch.
//
// The group epoch moves on every membership or subscription change; the
// target assignment is recomputed for it; a member's epoch reaches the
// target's once it holds no partition outside its target.

import (
	"encoding/hex"
	"maps"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ConsumerGroup is a KIP-848 group's state, guarded by its group's lock.
type ConsumerGroup struct {
	Epoch           int32 // group epoch
	AssignmentEpoch int32 // epoch the target assignment was computed at
	Assignor        string
	Members         map[string]*ConsumerMember
	Target          map[string]Assignment // member id → target partitions
	TopicsSeen      map[[16]byte]int      // subscribed topics' partition counts at the target's computation
	Persisted       []byte                // the last state written to the log
}

// ConsumerMember is one member of a KIP-848 group.
type ConsumerMember struct {
	ID, ClientID, ClientHost string
	InstanceID, RackID       *string
	Epoch                    int32
	Subscribed               []string
	Regex                    string
	RegexPrincipal           string // who set the regex (not kept across restarts: then "")
	RegexHost                string
	RebalanceTimeout         time.Duration

	Assigned Assignment // what the member was told to own
	Owned    Assignment // what it last said it owns (revocations acked)
	Sent     Assignment // the last assignment sent, to send only changes
	// Revoking is set while the member must still give up partitions
	// outside its target (Kafka's UNREVOKED_PARTITIONS).
	Revoking bool
	// Classic is set for a member that speaks the classic protocol
	// (JoinGroup/SyncGroup/Heartbeat) inside the consumer group.
	Classic *ClassicMember
	// Session is the member's session timer, armed by the coordinator;
	// Rejoin bounds a classic member's rejoin or sync (its rebalance
	// timeout).
	Session, Rejoin *clock.Timer
}

// LeftStatic is the member epoch of a static member that left for now
// (epoch -2): it keeps its assignment until its session expires.
const LeftStatic = -2

// NewConsumerGroup is an empty KIP-848 group with the default assignor.
func NewConsumerGroup() *ConsumerGroup {
	return &ConsumerGroup{Members: map[string]*ConsumerMember{}, Target: map[string]Assignment{}, Assignor: "uniform"}
}

// State is the group state as ConsumerGroupDescribe and ListGroups name it.
func (cg *ConsumerGroup) State() string {
	switch {
	case len(cg.Members) == 0:
		return "Empty"
	case cg.AssignmentEpoch < cg.Epoch:
		return "Assigning"
	}
	for _, m := range cg.Members {
		if m.Epoch != cg.AssignmentEpoch {
			return "Reconciling"
		}
	}
	return "Stable"
}

// Settled reports whether every member is at the target assignment's
// epoch with exactly its target partitions.
func (cg *ConsumerGroup) Settled() bool {
	for id, m := range cg.Members {
		if m.Epoch != cg.AssignmentEpoch || !m.Assigned.Equal(cg.Target[id]) {
			return false
		}
	}
	return len(cg.Members) > 0
}

// NextEpoch bumps the group epoch after a membership or subscription
// change.
func (cg *ConsumerGroup) NextEpoch() { cg.Epoch++ }

// Reconcile moves member m toward its target: while it holds partitions
// outside the target it is told to keep only the rest (and stays at its
// epoch); once it has revoked them it gets the target partitions no other
// member still holds, and the target's epoch.
func (cg *ConsumerGroup) Reconcile(m *ConsumerMember) {
	target := cg.Target[m.ID]
	if target == nil {
		target = Assignment{}
	}
	outside := func(a Assignment) bool {
		for id, ps := range a {
			for _, p := range ps {
				if !target.Has(id, p) {
					return true
				}
			}
		}
		return false
	}
	// A member joining (epoch 0) or a classic member rejoining owns only
	// what it reports; others may still hold what they were assigned.
	mustRevoke := outside(m.Owned) || m.Epoch != 0 && m.Classic == nil && outside(m.Assigned)
	m.Assigned = m.Assigned.Filter(target.Has)
	if mustRevoke {
		m.Revoking = true
		return
	}
	m.Revoking = false
	heldByOthers := func(id [16]byte, p int32) bool {
		for _, o := range cg.Members {
			if o != m && (o.Assigned.Has(id, p) || o.Owned.Has(id, p)) {
				return true
			}
		}
		return false
	}
	next := m.Assigned.Clone()
	for id, ps := range target {
		for _, p := range ps {
			if !heldByOthers(id, p) {
				next.Add(id, p)
			}
		}
	}
	m.Assigned = next
	m.Epoch = cg.AssignmentEpoch
}

// CheckMemberEpoch validates a KIP-848 member's OffsetCommit: the epoch
// it sends must be its current one; an older one is STALE_MEMBER_EPOCH
// (the member may retry after its next heartbeat), a newer one FENCED.
func CheckMemberEpoch(m *ConsumerMember, epoch int32) int16 {
	switch {
	case m.Classic != nil && epoch != m.Epoch:
		return kerr.IllegalGeneration.Code // a classic member commits with its generation
	case epoch < m.Epoch:
		return kerr.StaleMemberEpoch.Code
	case epoch > m.Epoch:
		return kerr.FencedMemberEpoch.Code
	}
	return 0
}

// ConsumerGroupRecord is the KIP-848 state written to __consumer_offsets
// after every change (JSON), so a new coordinator carries on with the same
// epochs and assignments after a failover.
type ConsumerGroupRecord struct {
	Epoch           int32                 `json:"epoch"`
	AssignmentEpoch int32                 `json:"assignment_epoch"`
	Assignor        string                `json:"assignor"`
	Members         []ConsumerMemberState `json:"members"`
}

// ConsumerMemberState is one member in a ConsumerGroupRecord.
type ConsumerMemberState struct {
	ID               string              `json:"id"`
	ClientID         string              `json:"client_id"`
	ClientHost       string              `json:"client_host"`
	InstanceID       *string             `json:"instance_id,omitempty"`
	RackID           *string             `json:"rack_id,omitempty"`
	Epoch            int32               `json:"epoch"`
	Subscribed       []string            `json:"subscribed,omitempty"`
	Regex            string              `json:"regex,omitempty"`
	RebalanceTimeout int64               `json:"rebalance_timeout_ms"`
	Assigned         map[string][]int32  `json:"assigned"`
	Owned            map[string][]int32  `json:"owned"`
	Target           map[string][]int32  `json:"target"`
	Revoking         bool                `json:"revoking,omitempty"`
	Classic          *ClassicMemberState `json:"classic,omitempty"`
}

func (a Assignment) record() map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for id, ps := range a {
		out[hex.EncodeToString(id[:])] = ps
	}
	return out
}

func assignmentFromRecord(m map[string][]int32) Assignment {
	out := Assignment{}
	for k, ps := range m {
		var id [16]byte
		if b, err := hex.DecodeString(k); err == nil && len(b) == 16 {
			copy(id[:], b)
			out[id] = slices.Clone(ps)
		}
	}
	return out
}

// Record is the group's state as its record holds it.
func (cg *ConsumerGroup) Record() ConsumerGroupRecord {
	r := ConsumerGroupRecord{Epoch: cg.Epoch, AssignmentEpoch: cg.AssignmentEpoch, Assignor: cg.Assignor}
	for _, id := range slices.Sorted(maps.Keys(cg.Members)) {
		m := cg.Members[id]
		r.Members = append(r.Members, ConsumerMemberState{
			ID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID, RackID: m.RackID,
			Epoch: m.Epoch, Subscribed: m.Subscribed, Regex: m.Regex, RebalanceTimeout: m.RebalanceTimeout.Milliseconds(),
			Assigned: m.Assigned.record(), Owned: m.Owned.record(), Target: cg.Target[id].record(),
			Revoking: m.Revoking, Classic: m.Classic.state(),
		})
	}
	return r
}

// RestoreConsumerGroup rebuilds a group from its record, as a new
// coordinator does; members' session timers are the coordinator's to arm,
// and the assignment each was last sent counts as sent.
func RestoreConsumerGroup(r ConsumerGroupRecord) *ConsumerGroup {
	cg := NewConsumerGroup()
	cg.Epoch, cg.AssignmentEpoch, cg.Assignor = r.Epoch, r.AssignmentEpoch, r.Assignor
	for _, ms := range r.Members {
		m := &ConsumerMember{
			ID: ms.ID, ClientID: ms.ClientID, ClientHost: ms.ClientHost, InstanceID: ms.InstanceID, RackID: ms.RackID,
			Epoch: ms.Epoch, Subscribed: ms.Subscribed, Regex: ms.Regex, RebalanceTimeout: time.Duration(ms.RebalanceTimeout) * time.Millisecond,
			Assigned: assignmentFromRecord(ms.Assigned), Owned: assignmentFromRecord(ms.Owned),
			Revoking: ms.Revoking, Classic: ms.Classic.member(),
		}
		m.Sent = m.Assigned.Clone()
		cg.Members[m.ID] = m
		cg.Target[m.ID] = assignmentFromRecord(ms.Target)
	}
	return cg
}
