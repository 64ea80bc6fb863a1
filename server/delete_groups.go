package server

// DeleteGroups, versions 0-3 (v3 adds a message, null in every answer as
// Kafka 4.4 gives it).
//
// Only a group without members (Empty) can be deleted (a share group's
// share-partition state goes with it): it turns Dead,
// tombstones for its metadata and every committed offset are written to
// __consumer_offsets with acks=all, and the coordinator forgets it, so it
// stays gone after a failover. Requests still holding the Dead group get
// COORDINATOR_NOT_AVAILABLE and retry against a fresh group.
//
// Errors per group: GROUP_ID_NOT_FOUND (unknown or already Dead),
// NON_EMPTY_GROUP, NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE (also when the tombstones could not be
// replicated).

import (
	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDeleteGroups(req *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group, dg.ErrorCode = id, cn.deleteGroup(id)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp, nil
}

func (cn *conn) deleteGroup(id string) int16 {
	if !cn.allowedGroup(authorizer.OpDelete, id) {
		return errGroupAuth
	}
	// An empty group id is looked up like any other, as Kafka 4.4 does
	// (GROUP_ID_NOT_FOUND on its coordinator).
	g, code := cn.b.c.group(cn.b.id, id, false)
	switch {
	case code != 0:
		return code
	case g == nil:
		return kerr.GroupIDNotFound.Code
	}
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	g.Ready()
	switch {
	case g.State == grp.Dead:
		g.Mu.Unlock()
		return kerr.GroupIDNotFound.Code
	case !g.NoMembers(), streamsMembers(g) > 0, g.ShareGroup() != nil && len(g.Share.Members) > 0:
		g.Mu.Unlock()
		return kerr.NonEmptyGroup.Code
	}
	share := g.Share != nil
	if share {
		// Kafka deletes the share partitions' state first, and keeps the
		// group when that fails.
		g.Mu.Unlock()
		if code := cn.b.c.deleteShareGroupState(id); code != 0 {
			return code
		}
		g.Mu.Lock()
		if len(g.Share.Members) > 0 { // joined meanwhile
			g.Mu.Unlock()
			return kerr.NonEmptyGroup.Code
		}
	}
	g.State = grp.Dead
	g.Stop(kerr.CoordinatorNotAvailable.Code)
	recs := []coordinatorRecord{{Key: recordKey{Group: id}}}
	if g.ConsumerMeta != nil {
		recs = append(recs, coordinatorRecord{Key: recordKey{Kind: consumerKind, Group: id}})
	}
	if g.StreamsMeta != nil {
		recs = append(recs, coordinatorRecord{Key: recordKey{Kind: grp.StreamsKind, Group: id}})
	}
	if g.ShareMeta != nil {
		recs = append(recs, coordinatorRecord{Key: recordKey{Kind: grp.ShareKind, Group: id}})
	}
	for tp := range g.Committed {
		recs = append(recs, coordinatorRecord{Key: recordKey{Group: id, Topic: tp.Topic, Partition: tp.Partition}})
	}
	g.Mu.Unlock()

	code = g.Write(recs)
	g.Shard().Forget(g)
	if share && code == 0 {
		cn.b.c.forgetSharePartitions(id) // and their state in the share coordinator
	}
	cn.b.c.log.Info("group deleted", "group", id, "code", code)
	return code
}
