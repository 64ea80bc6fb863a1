package server

// Consumer groups as the coordinators see them, for tests and the HTTP
// control API (GET /v1/groups, GET /v1/groups/{group}).

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strings"

	grp "github.com/fakekafka/fakekafka/group"
)

// GroupState is one consumer group on its coordinator.
type GroupState struct {
	Group string `json:"group"`
	// Coordinator is the broker leading the group's __consumer_offsets
	// partition.
	Coordinator int32 `json:"coordinator"`
	// Type is "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848).
	Type string `json:"type"`
	// State is Kafka's name: Empty, PreparingRebalance,
	// CompletingRebalance, Stable or Dead for classic groups; Empty,
	// Assigning, Reconciling or Stable for KIP-848 groups.
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	// Protocol is the chosen protocol (the assignor, e.g. "range" or
	// "cooperative-sticky"); for KIP-848 groups the server-side assignor.
	Protocol string `json:"protocol"`
	// Generation is the generation id; for KIP-848 groups the group epoch.
	Generation int32 `json:"generation"`
	// AssignmentEpoch is a KIP-848 group's target assignment epoch: members
	// whose epoch is below it are still reconciling.
	AssignmentEpoch *int32             `json:"assignment_epoch,omitempty"`
	Leader          string             `json:"leader,omitempty"`
	Members         []GroupMemberState `json:"members"`
	// Offsets are the committed offsets, sorted by topic and partition.
	Offsets []GroupOffsetState `json:"offsets"`
}

// GroupMemberState is one member.
type GroupMemberState struct {
	MemberID               string  `json:"member_id"`
	InstanceID             *string `json:"instance_id,omitempty"`
	ClientID               string  `json:"client_id"`
	ClientHost             string  `json:"client_host"`
	SessionTimeoutMillis   int64   `json:"session_timeout_ms,omitempty"`
	RebalanceTimeoutMillis int64   `json:"rebalance_timeout_ms"`
	// Subscription is the topics the member subscribes to, when its
	// metadata is the consumer protocol's.
	Subscription []string `json:"subscription,omitempty"`
	// Assignment is the member's partitions by topic as of the last
	// completed rebalance (decoded from the consumer protocol's assignment),
	// nil when the protocol type is not "consumer".
	Assignment map[string][]int32 `json:"assignment"`
	// KIP-848 members only: the member epoch.
	MemberEpoch *int32 `json:"member_epoch,omitempty"`
}

// GroupOffsetState is one committed offset and how far behind the
// partition's high watermark it is.
type GroupOffsetState struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	LeaderEpoch     int32  `json:"leader_epoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	HighWatermark   int64  `json:"high_watermark"` // -1 for a partition that is gone
	Lag             int64  `json:"lag"`
}

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
			for _, g := range s.list() {
				out = append(out, g.snapshot(leader))
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
	return g.snapshot(broker), true
}

func (g *group) snapshot(broker int32) GroupState {
	c := g.s.c
	g.mu.Lock()
	gs := GroupState{Group: g.id, Coordinator: broker, Members: []GroupMemberState{}, Offsets: []GroupOffsetState{}}
	gs.Type, gs.State, gs.ProtocolType = g.kind()
	if cg := g.consumerProtocol(); cg != nil {
		gs.Protocol, gs.Generation = cg.Assignor, cg.Epoch
		ae := cg.AssignmentEpoch
		gs.AssignmentEpoch = &ae
		for _, id := range slices.Sorted(maps.Keys(cg.Members)) {
			m := cg.Members[id]
			epoch := m.Epoch
			ms := GroupMemberState{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
				RebalanceTimeoutMillis: m.RebalanceTimeout.Milliseconds(), Subscription: m.Subscribed, Assignment: map[string][]int32{}, MemberEpoch: &epoch}
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

// registerGroupRoutes adds the group endpoints to the control API:
//
//	GET /v1/groups          {"groups":[GroupState...]}
//	GET /v1/groups/{group}  GroupState; 404 for an unknown group
func (c *Cluster) registerGroupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/groups", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Groups []GroupState `json:"groups"`
		}{c.Groups()})
	})
	mux.HandleFunc("GET /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		gs, ok := c.Group(r.PathValue("group"))
		if !ok {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown group %q (or its coordinator is down)", r.PathValue("group")))
			return
		}
		httpJSON(w, http.StatusOK, gs)
	})
}
