package server

// What the share-group offset admin APIs (share_group_offsets.go) and
// DeleteGroups need of a share group: its existence, members and epoch
// from the group coordinator, and its initialized share partitions from
// the share coordinators' state. Tests set sc.groupHook to play a group
// with members.

import (
	"slices"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareGroupHook stands in for a share group in tests: exists, members,
// group epoch.
type shareGroupHook func(group string) (exists bool, members int, epoch int32)

// shareGroupLookup is what the offset admin APIs need of share group
// group, as coordinated by broker: whether it exists, its members and its
// group epoch (the state epoch AlterShareGroupOffsets initializes share
// partitions at). Tests may play a group with sc.groupHook.
func (c *Cluster) shareGroupLookup(broker int32, group string) (exists bool, members int, epoch int32) {
	if h := c.sc.groupHook; h != nil {
		return h(group)
	}
	g, code := c.group(broker, group, false)
	if code != 0 || g == nil {
		return false, 0, 0
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.Ready()
	sg := g.ShareGroup()
	if sg == nil {
		return false, 0, 0
	}
	return true, len(sg.Members), sg.Epoch
}

// shareGroupOtherType says whether a group of another type (classic,
// consumer, streams) holds the id, as coordinated by broker:
// GROUP_ID_NOT_FOUND "Group %s is not a share group." then.
func (c *Cluster) shareGroupOtherType(broker int32, group string) bool {
	g, code := c.group(broker, group, false)
	if code != 0 || g == nil {
		return false
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	g.Ready()
	if g.ShareGroup() != nil {
		return false
	}
	return g.State != grp.Dead || g.ConsumerProtocol() != nil || g.StreamsGroup() != nil
}

// shareGroupInitialized lists a share group's initialized share
// partitions by topic id (Kafka's initializedShareGroupPartitions from the
// group's ShareGroupStatePartitionMetadata). The partitions the share
// coordinators hold state for.
func (c *Cluster) shareGroupInitialized(group string) map[[16]byte][]int32 {
	out := map[[16]byte][]int32{}
	for _, k := range c.shareGroupStateKeys(group) {
		out[k.TopicID] = append(out[k.TopicID], k.Partition)
	}
	for id := range out {
		slices.Sort(out[id])
	}
	return out
}

// deleteShareGroupState deletes every share partition's state of group,
// as Kafka's DeleteGroups does for a share group before it deletes the
// group: the first error, 0 when all went. DeleteGroups calls it for a
// share group before it deletes the group.
func (c *Cluster) deleteShareGroupState(group string) int16 {
	p := c.sc.persister
	for id, parts := range c.shareGroupInitialized(group) {
		for _, part := range parts {
			if code := p.Delete(share.Key{Group: group, TopicID: id, Partition: part}); code != 0 {
				return code
			}
		}
	}
	return 0
}

// shareGroupForAlter checks a share group for an offset change as Kafka's
// group coordinator does: the group's epoch, or the top-level error and
// message (GROUP_ID_NOT_FOUND for another type's group, NON_EMPTY_GROUP
// while it has members). A group that does not exist is made by the
// change (mustExist false) or GROUP_ID_NOT_FOUND (true).
func (c *Cluster) shareGroupForAlter(broker int32, group string, mustExist bool) (int32, int16, string) {
	if c.shareGroupOtherType(broker, group) {
		return 0, kerr.GroupIDNotFound.Code, "Group " + group + " is not a share group."
	}
	exists, members, epoch := c.shareGroupLookup(broker, group)
	switch {
	case !exists && mustExist:
		return 0, kerr.GroupIDNotFound.Code, "Group " + group + " not found."
	case !exists && c.sc.groupHook == nil:
		// Kafka's AlterShareGroupOffsets makes the (empty) group.
		if code := c.createShareGroup(broker, group); code != 0 {
			return 0, code, ""
		}
	case members > 0:
		return 0, kerr.NonEmptyGroup.Code, "The group is not empty."
	}
	return epoch, 0, ""
}

// createShareGroup makes an empty share group group, as Kafka's
// AlterShareGroupOffsets does for a group that does not exist, and waits
// until its record is committed.
func (c *Cluster) createShareGroup(broker int32, group string) int16 {
	g, code := c.group(broker, group, true)
	if code != 0 {
		return code
	}
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	g.Ready()
	if g.ShareGroup() == nil {
		g.Share = grp.NewShareGroup()
	}
	g.Mu.Unlock()
	if code := g.PersistShare(); code != 0 {
		g.Mu.Lock()
		g.RevertShare()
		g.Mu.Unlock()
		return code
	}
	return 0
}
