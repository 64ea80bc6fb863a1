package server

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group's metadata record (what __consumer_offsets keeps of the
// membership) and reading the consumer protocol's subscriptions and
// assignments.

// snapshotMeta captures the group metadata record, with assignments in
// place of the members' own when given (the leader's SyncGroup). Callers
// hold g.mu.
func (g *group) snapshotMeta(assignments map[string][]byte) metaSnapshot {
	g.metaSeq++
	md := groupMeta{ProtocolType: g.protocolType, Protocol: g.protocol, Generation: g.generation, Leader: g.leader,
		Timestamp: g.s.c.now().UnixMilli(), Members: []memberMeta{}}
	for _, m := range g.sortedMembers() {
		a := m.assignment
		if assignments != nil {
			a = assignments[m.id]
		}
		md.Members = append(md.Members, memberMeta{
			ID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			SessionTimeoutMs: m.sessionTimeout.Milliseconds(), RebalanceTimeoutMs: m.rebalanceTimeout.Milliseconds(),
			Subscription: m.metadataFor(g.protocol), Assignment: a,
		})
	}
	return metaSnapshot{seq: g.metaSeq, meta: md}
}

// storeMeta writes a snapshot to __consumer_offsets and waits until it is
// committed, unless a later snapshot was written already. Callers must not
// hold g.mu.
func (g *group) storeMeta(snap metaSnapshot) int16 {
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	if snap.seq <= g.writtenSeq {
		return 0
	}
	if !g.current() {
		return kerr.NotCoordinator.Code
	}
	code := g.write([]coordinatorRecord{{key: recordKey{Group: g.id}, value: snap.meta}})
	if code == 0 {
		g.writtenSeq = snap.seq
	}
	return code
}

// persistAsync writes the group's metadata in the background (a timer or
// a leave ended a rebalance). Callers hold g.mu.
func (g *group) persistAsync() {
	snap := g.snapshotMeta(nil)
	g.goLocked(func() {
		if code := g.storeMeta(snap); code != 0 {
			g.s.c.log.Warn("writing group metadata failed", "group", g.id, "error", errorName(code))
		}
	})
}

// subscribedTopics is the union of the members' subscriptions under the
// consumer protocol; ok is false when one cannot be read. Callers hold
// g.mu.
func (g *group) subscribedTopics() (topics map[string]bool, ok bool) {
	topics = map[string]bool{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if g.protocol != "" && p.name != g.protocol {
				continue
			}
			ts, ok := subscription(p.metadata)
			if !ok {
				return nil, false
			}
			for _, t := range ts {
				topics[t] = true
			}
		}
	}
	if cg := g.s.c.consumerGroupOf(g); cg != nil {
		for _, m := range cg.Members {
			for _, t := range m.Subscribed {
				topics[t] = true
			}
			if m.Regex != "" {
				for _, t := range g.s.c.subscribedTopics(m) {
					topics[t.name] = true
				}
			}
		}
	}
	return topics, true
}

// subscription reads the topics of a consumer protocol subscription.
func subscription(metadata []byte) ([]string, bool) {
	var md kmsg.ConsumerMemberMetadata
	if md.ReadFrom(metadata) != nil {
		return nil, false
	}
	return md.Topics, true
}

// decodeAssignment reads a consumer protocol assignment as topic →
// partitions, nil if it is not one.
func decodeAssignment(b []byte) map[string][]int32 {
	if len(b) == 0 {
		return map[string][]int32{}
	}
	var a kmsg.ConsumerMemberAssignment
	if a.ReadFrom(b) != nil {
		return nil
	}
	out := map[string][]int32{}
	for _, t := range a.Topics {
		out[t.Topic] = append(out[t.Topic], t.Partitions...)
		slices.Sort(out[t.Topic])
	}
	return out
}

// clientHost is how Kafka shows a member's address: "/" and the IP.
