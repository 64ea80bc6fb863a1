package replication

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Partition reassignment (KIP-455), as Kafka's KRaft controller runs it:
// the replica set becomes target ∪ original; the adding replicas start
// with empty logs, fetch from the leader like any follower and join the ISR
// once caught up; when every target replica is in the ISR the removing
// replicas leave (their logs are deleted), the replica order becomes the
// target's, leadership moves to the first target replica in the ISR if
// the leader is being removed, and the leader epoch is bumped. A
// cancellation reverts to the original replicas, deleting the adding ones.

// Reassignment is an ongoing reassignment: Replicas is the current
// (widened) replica set, Adding and Removing its difference from the
// original and target sets, in replica order.
type Reassignment struct {
	Replicas, Adding, Removing []int32
}

// Changes a reassignment records, and the reason of its ISR changes.
const (
	// ReassignmentCompleted: the replicas are now Replicas (the target).
	ReassignmentCompleted ChangeKind = iota + 100
	// ReassignmentCancelled: the replicas reverted to Replicas.
	ReassignmentCancelled
	// ReasonReassignment: a reassignment removed the replica.
	ReasonReassignment = "reassignment"
)

type reassignment struct {
	target, original []int32
}

// Reassignment returns the ongoing reassignment, if any.
func (p *Partition) Reassignment() (Reassignment, bool) {
	if p.reassign == nil {
		return Reassignment{}, false
	}
	ra := Reassignment{Replicas: p.replicaIDs()}
	for _, id := range ra.Replicas {
		switch {
		case !slices.Contains(p.reassign.original, id):
			ra.Adding = append(ra.Adding, id)
		case !slices.Contains(p.reassign.target, id):
			ra.Removing = append(ra.Removing, id)
		}
	}
	return ra, true
}

func (p *Partition) replicaIDs() []int32 {
	out := make([]int32, len(p.replicas))
	for i, r := range p.replicas {
		out[i] = r.Broker
	}
	return out
}

// Reassign starts moving the partition to target, a non-empty list of
// distinct brokers, or replaces the target of an ongoing reassignment
// (replicas the new target no longer wants that were still being added
// are deleted at once). online says whether a broker is up: an adding
// replica on a stopped broker stays empty, and the reassignment pending,
// until its broker returns. A target that needs no new replica completes
// at once if its replicas are all in the ISR (a reorder or a shrink).
// It returns INVALID_REPLICA_ASSIGNMENT for an empty target or a broker
// listed twice.
func (p *Partition) Reassign(target []int32, online func(int32) bool, now time.Time) int16 {
	if len(target) == 0 {
		return kerr.InvalidReplicaAssignment.Code
	}
	for i, id := range target {
		if slices.Contains(target[:i], id) {
			return kerr.InvalidReplicaAssignment.Code
		}
	}
	original := p.replicaIDs()
	if p.reassign != nil {
		original = p.reassign.original
	}
	if p.reassign == nil && slices.Equal(target, original) {
		return 0 // nothing to move
	}
	p.extras().reassign = &reassignment{target: slices.Clone(target), original: slices.Clone(original)}
	// Replicas: the target's, then the originals leaving; an earlier
	// target's additions that are no longer wanted go now.
	want := slices.Clone(target)
	for _, id := range original {
		if !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	p.setReplicas(want, online, now)
	p.maybeCompleteReassignment(now)
	return 0
}

// CancelReassignment reverts an ongoing reassignment to the original
// replicas: the adding ones are deleted, with their logs. It reports
// whether there was one (Kafka answers NO_REASSIGNMENT_IN_PROGRESS
// otherwise).
func (p *Partition) CancelReassignment(now time.Time) bool {
	if p.reassign == nil {
		return false
	}
	original := p.reassign.original
	p.extras().reassign = nil
	p.setReplicas(original, func(int32) bool { return true }, now)
	p.note(Change{Kind: ReassignmentCancelled, Replicas: slices.Clone(original)})
	return true
}

// setReplicas makes ids the replica set in that order: replicas kept keep
// their state, new ones start empty (offline if their broker is not up),
// removed ones are dropped from the ISR (which keeps its order) and
// deleted. If the leader was
// removed, the first replica left that is online and in the ISR leads;
// with none, the partition is leaderless.
func (p *Partition) setReplicas(ids []int32, online func(int32) bool, now time.Time) {
	next := make([]*Replica, 0, len(ids))
	for _, id := range ids {
		r := p.Replica(id)
		if r == nil {
			r = newReplica(id, online(id))
			r.remote = followerState{leo: -1, lastFetchLeaderLEO: -1}
		}
		next = append(next, r)
	}
	p.replicas = next // a new slice: callers may hold the old one
	prevISR := p.isr
	// The ISR keeps its order, less the replicas removed, as KRaft's
	// PartitionChangeBuilder does: a reorder leaves it as it was.
	p.isr = slices.DeleteFunc(slices.Clone(p.isr), func(id int32) bool { return !slices.Contains(ids, id) })
	p.noteISRDiff(prevISR, ReasonReassignment)
	if p.leader >= 0 && !slices.Contains(ids, p.leader) {
		old := p.leader
		p.leader = -1
		if id, unclean := p.ChooseLeader(-1); id >= 0 {
			p.leader = old // so the election records the change from it
			p.Elect(id, unclean, now)
		} else {
			p.leader = old
			p.MakeLeaderless()
		}
	}
}

// maybeCompleteReassignment finishes the reassignment once every target
// replica is in the ISR: the removing replicas go, the order becomes the
// target's, and the leader epoch is bumped (KRaft does so whenever a
// reassignment removes replicas), moving leadership if the leader left.
func (p *Partition) maybeCompleteReassignment(now time.Time) {
	ra := p.reassign
	if ra == nil {
		return
	}
	for _, id := range ra.target {
		if !p.InISR(id) {
			return
		}
	}
	p.extras().reassign = nil
	leader, removes := p.leader, len(p.replicas) > len(ra.target)
	p.setReplicas(ra.target, func(int32) bool { return true }, now)
	if removes && p.leader == leader && leader >= 0 {
		p.becomeLeader(leader, now) // same leader, new epoch
	}
	p.note(Change{Kind: ReassignmentCompleted, Replicas: slices.Clone(ra.target)})
	p.maybeIncrementHW(now)
}
