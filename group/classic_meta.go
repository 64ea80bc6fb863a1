package group

// The classic group's metadata record, and reading the consumer protocol's
// subscriptions and assignments.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// snapshotMeta captures the group metadata record, with assignments in
// place of the members' own when given (the leader's SyncGroup). Callers
// hold g.mu.
func (g *Classic) SnapshotMeta(assignments map[string][]byte) MetaSnapshot {
	g.metaSeq++
	md := Meta{ProtocolType: g.ProtocolType, Protocol: g.Protocol, Generation: g.Generation, Leader: g.Leader,
		Timestamp: g.host.Now().UnixMilli(), Members: []MemberMeta{}}
	for _, m := range g.SortedMembers() {
		a := m.Assignment
		if assignments != nil {
			a = assignments[m.ID]
		}
		md.Members = append(md.Members, MemberMeta{
			ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			SessionTimeoutMs: m.SessionTimeout.Milliseconds(), RebalanceTimeoutMs: m.RebalanceTimeout.Milliseconds(),
			Subscription: m.MetadataFor(g.Protocol), Assignment: a,
		})
	}
	return MetaSnapshot{Seq: g.metaSeq, Meta: md}
}

// subscription reads the topics of a consumer protocol subscription.
func Subscription(metadata []byte) ([]string, bool) {
	var md kmsg.ConsumerMemberMetadata
	if md.ReadFrom(metadata) != nil {
		return nil, false
	}
	return md.Topics, true
}

// decodeAssignment reads a consumer protocol assignment as topic →
// partitions, nil if it is not one.
func DecodeAssignment(b []byte) map[string][]int32 {
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
