package server

// Consumer groups as the coordinators see them, for tests and the HTTP
// control API (GET /v1/groups, GET /v1/groups/{group}).

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	grp "github.com/fakekafka/fakekafka/group"
)

// Groups returns every group whose coordinator is up, sorted by id.
// Reading a group after a coordinator change restores it, as a request
// would.
func (c *Cluster) Groups() []GroupState {
	out := []GroupState{}
	if c.topic(offsetsTopic) == nil {
		return out
	}
	ss, err := c.coord.Shards()
	if err != nil {
		return out
	}
	for _, sh := range ss {
		leader, code := sh.Coordinator()
		if code != 0 {
			continue
		}
		if s, _, code := sh.Acquire(leader); code == 0 {
			for _, g := range s.List() {
				out = append(out, c.groupSnapshot(g, leader))
			}
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
	return c.groupSnapshot(g, broker), true
}

func (c *Cluster) groupSnapshot(g *group, broker int32) GroupState {
	g.Mu.Lock()
	gs := GroupState{Group: g.ID, Coordinator: broker, Members: []GroupMemberState{}, Offsets: []GroupOffsetState{}}
	gs.Type, gs.State, gs.ProtocolType = groupKind(g)
	if sg := g.StreamsGroup(); sg != nil {
		streamsSnapshot(sg, &gs)
	} else if sg := g.ShareGroup(); sg != nil {
		c.shareGroupSnapshot(sg, &gs)
	} else if cg := g.ConsumerProtocol(); cg != nil {
		gs.Protocol, gs.Generation = cg.Assignor, cg.Epoch
		ae := cg.AssignmentEpoch
		gs.AssignmentEpoch = &ae
		for _, id := range slices.Sorted(maps.Keys(cg.Members)) {
			m := cg.Members[id]
			epoch := m.Epoch
			ms := GroupMemberState{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				RebalanceTimeoutMillis: m.RebalanceTimeout.Milliseconds(), Subscription: m.Subscribed, Assignment: map[string][]int32{}, MemberEpoch: &epoch}
			if m.Classic != nil { // a classic member inside the consumer group
				ms.SessionTimeoutMillis = m.Classic.SessionTimeout.Milliseconds()
			}
			for tid, ps := range m.Assigned {
				if t := c.topicByID(tid); t != nil {
					ms.Assignment[t.name] = slices.Clone(ps)
				}
			}
			gs.Members = append(gs.Members, ms)
		}
	} else {
		gs.Protocol, gs.Generation, gs.Leader = g.Protocol, g.Generation, g.Leader
		for _, m := range g.SortedMembers() {
			ms := GroupMemberState{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				SessionTimeoutMillis: m.SessionTimeout.Milliseconds(), RebalanceTimeoutMillis: m.RebalanceTimeout.Milliseconds()}
			if g.ProtocolType == "consumer" {
				ms.Assignment = grp.DecodeAssignment(m.Assignment)
				if len(m.Protocols) > 0 {
					md := m.Protocols[0].Metadata
					if g.Protocol != "" {
						md = m.MetadataFor(g.Protocol)
					}
					ms.Subscription, _ = grp.Subscription(md)
				}
			}
			gs.Members = append(gs.Members, ms)
		}
	}
	for tp, o := range g.Committed {
		gs.Offsets = append(gs.Offsets, GroupOffsetState{Topic: tp.Topic, Partition: tp.Partition, Offset: o.Offset,
			LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: o.Timestamp})
	}
	g.Mu.Unlock()
	if gs.Type == "share" {
		gs.SharePartitions = c.sharePartitionStates(g.ID)
	}

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
