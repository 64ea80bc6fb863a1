package server

// Partition reassignment (KIP-455): the cluster side of
// replication.Partition.Reassign. The state machine decides when adding
// replicas have caught up and when removing ones leave; this file checks
// requests, starts and cancels reassignments, wakes the fetchers of the
// new replicas, reports events, and lists what is in progress.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ReassignPartition moves topic/partition to replicas (KIP-455), as
// AlterPartitionReassignments does: the new replicas start empty, fetch from
// the leader and join the ISR, then the replicas not in the target leave
// and leadership moves if the leader was one of them. It returns at once;
// watch Reassignments, the reassignment_completed event or the partition's
// replicas. A target broker that is down keeps the reassignment pending
// until it is back. Errors carry Kafka's error code.
func (c *Cluster) ReassignPartition(topic string, partition int32, replicas []int32) error {
	if replicas == nil {
		replicas = []int32{} // nil would cancel
	}
	return kafkaError(c.reassign(topic, partition, replicas, true))
}

// CancelReassignment reverts an ongoing reassignment of topic/partition
// to the original replicas, deleting the ones being added.
func (c *Cluster) CancelReassignment(topic string, partition int32) error {
	return kafkaError(c.reassign(topic, partition, nil, true))
}

// Reassignments lists the ongoing reassignments by topic and partition.
func (c *Cluster) Reassignments() []ReassignmentState {
	var out []ReassignmentState
	byName := c.topics.Load().byName
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		for _, p := range byName[name].partitions() {
			if rs, ok := p.reassignment(); ok {
				out = append(out, rs)
			}
		}
	}
	return out
}

func (p *partition) reassignment() (ReassignmentState, bool) {
	p.mu.Lock()
	ra, ok := p.st.Reassignment()
	p.mu.Unlock()
	if !ok {
		return ReassignmentState{}, false
	}
	return ReassignmentState{Topic: p.t.name, Partition: p.index, Replicas: ra.Replicas,
		AddingReplicas: orEmpty(ra.Adding), RemovingReplicas: orEmpty(ra.Removing)}, true
}

func orEmpty(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// reassign starts (target not nil) or cancels (nil) a reassignment, with
// Kafka's checks: the partition exists, the target lists known brokers
// once each, a cancellation has something to cancel; with keepRF false
// (AlterPartitionReassignments v1, KIP-860) the replication factor may not
// change.
func (c *Cluster) reassign(topic string, index int32, target []int32, allowRFChange bool) (*kerr.Error, string) {
	p := c.partition(topic, index)
	if p == nil || p.t.deleted.Load() {
		if t := c.topic(topic); t == nil || t.deleted.Load() {
			return kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find a topic named %s.", topic)
		}
		return kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", topic, index)
	}
	if target != nil {
		if e, msg := c.checkReplicaList(target); e != nil {
			return e, msg
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var e *kerr.Error
	var msg string
	p.mutate(func() { e, msg = c.reassignLocked(p, target, allowRFChange) })
	return e, msg
}

// reassignLocked is reassign's change of p. Callers hold p.mu.
func (c *Cluster) reassignLocked(p *partition, target []int32, allowRFChange bool) (*kerr.Error, string) {
	topic, index := p.t.name, p.index
	now := c.now()
	if target == nil {
		if !p.st.CancelReassignment(now) {
			return kerr.NoReassignmentInProgress, "" // Kafka gives no message
		}
		c.log.Info("reassignment cancelled", "topic", topic, "partition", index)
		return nil, ""
	}
	from := replicaList(p.st)
	if ra, ok := p.st.Reassignment(); ok {
		from = slices.DeleteFunc(slices.Clone(ra.Replicas), func(id int32) bool { return slices.Contains(ra.Adding, id) })
	}
	if !allowRFChange && len(target) != len(from) {
		return kerr.InvalidReplicationFactor, fmt.Sprintf("The replication factor is changed from %d to %d", len(from), len(target))
	}
	if code := p.st.Reassign(target, func(id int32) bool { return c.broker(id).up.Load() }, now); code != 0 {
		return kerr.ErrorForCode(code).(*kerr.Error), "invalid target replicas"
	}
	if ra, ok := p.st.Reassignment(); ok {
		c.log.Info("reassignment started", "topic", topic, "partition", index, "replicas", ra.Replicas, "adding", ra.Adding, "removing", ra.Removing)
		c.emit(EventReassignmentStarted, func(e *Event) {
			e.Topic, e.Partition, e.Detail = topic, index, fmt.Sprintf("replicas %s → %s", ids(from), ids(target))
		})
	}
	p.markFollowers() // the new replicas start fetching
	return nil, ""
}

func replicaList(st *replication.Partition) []int32 {
	var out []int32
	for _, r := range st.Replicas() {
		out = append(out, r.Broker)
	}
	return out
}

// ids formats a broker list as [1,2,3].
func ids(xs []int32) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// emitReassignmentChange reports a reassignment the state machine
// completed or cancelled, and forgets pauses of replicas that are gone.
// Callers hold p.mu.
func (c *Cluster) emitReassignmentChange(p *partition, ch replication.Change) {
	t := EventReassignmentCompleted
	switch ch.Kind {
	case replication.ReassignmentCompleted:
	case replication.ReassignmentCancelled:
		t = EventReassignmentCancelled
	default:
		return
	}
	if len(p.paused) > 0 {
		x := p.extras()
		x.paused = slices.DeleteFunc(x.paused, func(id int32) bool { return !slices.Contains(ch.Replicas, id) })
	}
	c.log.Info(string(t), "topic", p.t.name, "partition", p.index, "replicas", ch.Replicas)
	c.emit(t, func(e *Event) {
		e.Topic, e.Partition, e.Epoch, e.ISR, e.Detail = p.t.name, p.index, ch.Epoch, ch.ISR, "replicas "+ids(ch.Replicas)
	})
}
