package server

// DescribeGroups, versions 0-6.
//
// Each group's state, protocol type and members (id, instance id, client
// id and host). As in Kafka, a Stable group also shows its protocol and
// each member's metadata for it and assignment; other states show neither.
// An unknown group, a KIP-848 group (which ConsumerGroupDescribe
// describes) and a share group (ShareGroupDescribe's) are Dead with no error, as Kafka answers before v6; from v6 (KIP-1043)
// they are Dead with GROUP_ID_NOT_FOUND and a message (groupNotFoundV6). With
// include_authorized_operations (v3+) the group operations (READ, DELETE,
// DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) the ACLs allow, all of them
// without the authorizer, on a group described without error only. A group
// the principal may not DESCRIBE gets GROUP_AUTHORIZATION_FAILED and no
// state. A group another broker coordinates gets NOT_COORDINATOR and an
// empty state; many groups are answered in Kafka's order, the denied ones
// first (group_batch_order.go).

import (
	"math"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDescribeGroups(req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	var denied, allowed []int // Kafka answers the denied ones first
	for i, id := range req.Groups {
		if cn.allowedGroup(authorizer.OpDescribe, id) {
			allowed = append(allowed, i)
		} else {
			denied = append(denied, i)
		}
	}
	for _, i := range append(denied, c.groupsInKafkaOrder(req.Groups, allowed, func(string) bool { return false })...) {
		id := req.Groups[i]
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.State = id, grp.Dead
		if req.IncludeAuthorizedOperations {
			dg.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceGroup, id)
		}
		if !cn.allowedGroup(authorizer.OpDescribe, id) {
			// Kafka's groupError: nothing else about the group.
			dg.State, dg.AuthorizedOperations, dg.ErrorCode = "", math.MinInt32, errGroupAuth
		} else if g, code := c.group(cn.b.id, id, false); code != 0 {
			// Kafka describes nothing of a group it cannot look up:
			// no state either.
			dg.ErrorCode, dg.State = code, ""
		} else if g != nil {
			g.Mu.Lock()
			describeGroup(g, &dg)
			groupNotFoundV6(req.Version, g, &dg)
			g.Mu.Unlock()
		} else {
			groupNotFoundV6(req.Version, nil, &dg)
		}
		if dg.ErrorCode != 0 { // Kafka reports operations only for groups it describes
			dg.AuthorizedOperations = math.MinInt32
		}
		if dg.ErrorCode != 0 { // Kafka reports them on a described group only
			dg.AuthorizedOperations = math.MinInt32
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp, nil
}

// describe fills a classic group's description. Callers hold g.Mu.
func describeGroup(g *group, dg *kmsg.DescribeGroupsResponseGroup) {
	if g.ConsumerProtocol() != nil || g.StreamsGroup() != nil || g.ShareGroup() != nil {
		return // not a classic group: Dead
	}
	dg.State, dg.ProtocolType = g.State, g.ProtocolType
	stable := g.State == grp.Stable
	if stable {
		dg.Protocol = g.Protocol
	}
	for _, m := range g.SortedMembers() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.ID, m.InstanceID, m.ClientID, m.ClientHost
		if stable {
			dm.ProtocolMetadata, dm.MemberAssignment = m.MetadataFor(g.Protocol), m.Assignment
		}
		dg.Members = append(dg.Members, dm)
	}
}
