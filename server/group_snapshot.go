package server

// Consumer groups as the coordinators see them, for tests and the HTTP
// control API (GET /v1/groups, GET /v1/groups/{group}).

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Groups returns every group whose coordinator is up, sorted by id.
// Reading a group after a coordinator change restores it, as a request
// would.
func (c *Cluster) Groups() []GroupState {
	out := []GroupState{}
	if c.topic(offsetsTopic) == nil {
		return out
	}
	ss, err := c.shards()
	if err != nil {
		return out
	}
	for _, s := range ss {
		s.p.mu.Lock()
		leader, _, _ := s.p.st.View(-1)
		s.p.mu.Unlock()
		if b := c.broker(leader); b == nil || !b.up.Load() {
			continue
		}
		for _, g := range s.groupsOn(leader) {
			out = append(out, g.snapshot(leader))
		}
	}
	slices.SortFunc(out, func(a, b GroupState) int { return strings.Compare(a.Group, b.Group) })
	return out
}

// Group returns one group, or false when it is unknown or its coordinator
// is down.
func (c *Cluster) Group(id string) (GroupState, bool) {
	if c.topic(offsetsTopic) == nil {
		return GroupState{}, false
	}
	broker, code := c.coordinatorOf(id)
	if code != 0 {
		return GroupState{}, false
	}
	g, code := c.group(broker, id, false)
	if code != 0 || g == nil {
		return GroupState{}, false
	}
	return g.snapshot(broker), true
}

func (g *group) snapshot(broker int32) GroupState {
	c := g.s.c
	g.mu.Lock()
	gs := GroupState{Group: g.id, Coordinator: broker, Members: []GroupMemberState{}, Offsets: []GroupOffsetState{}}
	gs.Type, gs.State, gs.ProtocolType = g.kind()
	if cg := g.consumerProtocol(); cg != nil {
		gs.Protocol, gs.Generation = cg.assignor, cg.epoch
		ae := cg.assignmentEpoch
		gs.AssignmentEpoch = &ae
		for _, id := range slices.Sorted(maps.Keys(cg.members)) {
			m := cg.members[id]
			epoch := m.epoch
			ms := GroupMemberState{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
				RebalanceTimeoutMillis: m.rebalanceTimeout.Milliseconds(), Subscription: m.subscribed, Assignment: map[string][]int32{}, MemberEpoch: &epoch}
			for tid, ps := range m.assigned {
				if t := c.topicByID(tid); t != nil {
					ms.Assignment[t.name] = slices.Clone(ps)
				}
			}
			gs.Members = append(gs.Members, ms)
		}
	} else {
		gs.Protocol, gs.Generation, gs.Leader = g.protocol, g.generation, g.leader
		for _, m := range g.sortedMembers() {
			ms := GroupMemberState{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
				SessionTimeoutMillis: m.sessionTimeout.Milliseconds(), RebalanceTimeoutMillis: m.rebalanceTimeout.Milliseconds()}
			if g.protocolType == "consumer" {
				ms.Assignment = decodeAssignment(m.assignment)
				if len(m.protocols) > 0 {
					md := m.protocols[0].metadata
					if g.protocol != "" {
						md = m.metadataFor(g.protocol)
					}
					ms.Subscription, _ = subscription(md)
				}
			}
			gs.Members = append(gs.Members, ms)
		}
	}
	for tp, o := range g.offsets {
		gs.Offsets = append(gs.Offsets, GroupOffsetState{Topic: tp.Topic, Partition: tp.Partition, Offset: o.Offset,
			LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: o.Timestamp})
	}
	g.mu.Unlock()

	slices.SortFunc(gs.Offsets, func(a, b GroupOffsetState) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for i := range gs.Offsets {
		o := &gs.Offsets[i]
		o.HighWatermark = -1
		if p := c.partition(o.Topic, o.Partition); p != nil {
			p.mu.Lock()
			o.HighWatermark = p.st.HW()
			p.mu.Unlock()
			o.Lag = max(o.HighWatermark-o.Offset, 0)
		}
	}
	return gs
}
