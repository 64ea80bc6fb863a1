package server

// Share groups as GET /v1/groups shows them: the members with their
// epochs and assignments, and per share partition the records in flight
// with their delivery counts.

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/api"
	grp "github.com/fakekafka/fakekafka/group"
)

// shareGroupSnapshot fills a share group's part of gs. Callers hold g.Mu.
func (c *Cluster) shareGroupSnapshot(sg *grp.ShareGroup, gs *GroupState) {
	gs.Protocol, gs.Generation = "simple", sg.Epoch
	ae := sg.AssignmentEpoch
	gs.AssignmentEpoch = &ae
	for _, id := range slices.Sorted(maps.Keys(sg.Members)) {
		m := sg.Members[id]
		epoch := m.Epoch
		ms := GroupMemberState{MemberID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			Subscription: m.Subscribed, Assignment: map[string][]int32{}, MemberEpoch: &epoch}
		for tid, ps := range m.Assigned {
			if t := c.topicByID(tid); t != nil {
				ms.Assignment[t.name] = slices.Clone(ps)
			}
		}
		gs.Members = append(gs.Members, ms)
	}
}

// sharePartitionStates lists group's loaded share partitions.
func (c *Cluster) sharePartitionStates(group string) []api.SharePartitionState {
	var out []api.SharePartitionState
	for _, sp := range c.shareSnapshot(group) {
		sp.mu.Lock()
		if sp.sm == nil {
			sp.mu.Unlock()
			continue
		}
		sp.expire(c.now()) // what a fetch would see now
		ps := api.SharePartitionState{Topic: sp.p.t.name, Partition: sp.p.index, Leader: sp.broker, LeaderEpoch: sp.leaderEpoch,
			StartOffset: sp.sm.StartOffset(), EndOffset: sp.sm.EndOffset(), WaitingFetches: len(sp.waiters), InFlight: []api.ShareRecordState{}}
		for _, r := range sp.sm.InFlightRecords() {
			rs := api.ShareRecordState{Offset: r.Offset, State: r.State.String(), DeliveryCount: r.DeliveryCount, Member: r.Member}
			if !r.Deadline.IsZero() {
				d := r.Deadline
				rs.LockDeadline = &d
			}
			ps.InFlight = append(ps.InFlight, rs)
		}
		sp.mu.Unlock()
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b api.SharePartitionState) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
