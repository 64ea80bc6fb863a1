package server

// ListGroups, versions 0-5 (a states filter from v4, a types filter from
// v5).
//
// Each broker lists the groups it coordinates, that is the groups of the
// __consumer_offsets partitions it leads, as Kafka does; clients ask every
// broker. A group that only has committed offsets is an Empty classic
// group with no protocol type. KIP-848 groups are listed with type
// "consumer" and their own states (Empty, Assigning, Reconciling, Stable),
// share groups with type and protocol type "share" (Empty, Stable).
// Both filters match case-insensitively.

import (
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleListGroups(req *kmsg.ListGroupsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	match := func(filter []string, v string) bool {
		return len(filter) == 0 || slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, v) })
	}
	all := cn.allowedCluster(authorizer.OpDescribe)
	for _, g := range cn.b.c.groupsOn(cn.b.id) {
		if !all && !cn.allowedQuiet(authorizer.OpDescribe, authorizer.ResourceGroup, g.ID) {
			continue // Kafka lists only the groups one may describe
		}
		g.Mu.Lock()
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = g.ID
		lg.GroupType, lg.GroupState, lg.ProtocolType = groupKind(g)
		g.Mu.Unlock()
		if match(req.StatesFilter, lg.GroupState) && match(req.TypesFilter, lg.GroupType) {
			resp.Groups = append(resp.Groups, lg)
		}
	}
	return resp, nil
}

// groupsOn returns the groups broker coordinates, loading the shards it
// newly leads, sorted by id.
func (c *Cluster) groupsOn(broker int32) []*group {
	if c.topic(offsetsTopic) == nil {
		return nil // no group has ever been used
	}
	ss, err := c.coord.Shards()
	if err != nil {
		return nil
	}
	var out []*group
	for _, sh := range ss {
		if s, _, code := sh.Acquire(broker); code == 0 { // else not the coordinator of this shard
			out = append(out, s.List()...)
		}
	}
	slices.SortFunc(out, func(a, b *group) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// kind is the group's type ("classic" or "consumer"), state and protocol
// type. Callers hold g.Mu.
func groupKind(g *group) (typ, state, protocolType string) {
	if sg := g.StreamsGroup(); sg != nil {
		return "streams", sg.State(), "streams"
	}
	if sg := g.ShareGroup(); sg != nil {
		return "share", sg.State(), "share"
	}
	if cg := g.ConsumerProtocol(); cg != nil {
		return "consumer", cg.State(), "consumer"
	}
	return "classic", g.State, g.ProtocolType
}
