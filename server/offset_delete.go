package server

// OffsetDelete, version 0.
//
// Deletes a group's committed offsets for the given partitions by writing
// tombstones to __consumer_offsets with acks=all. A partition of a topic
// some member is subscribed to (read from the consumer protocol metadata
// the members joined with, or a KIP-848 subscription) is refused with
// GROUP_SUBSCRIBED_TO_TOPIC; a group with members of another protocol type
// is refused whole with NON_EMPTY_GROUP. A partition without a committed
// offset is fine (nothing to delete); one that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION.
//
// Group errors (top level): GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP,
// INVALID_GROUP_ID, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleOffsetDelete(req *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	fail := func(code int16) (kmsg.Response, error) {
		resp.ErrorCode = code
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpDelete, req.Group) {
		return fail(errGroupAuth)
	}
	g, code := c.existingGroup(cn.b.id, req.Group, kerr.GroupIDNotFound)
	if code != 0 {
		return fail(code)
	}

	g.Mu.Lock()
	g.Ready()
	typ, _, protocolType := groupKind(g)
	switch {
	case g.State == grp.Dead:
		g.Mu.Unlock()
		return fail(kerr.GroupIDNotFound.Code)
	case !g.NoMembers() && typ == "classic" && protocolType != "consumer":
		g.Mu.Unlock()
		return fail(kerr.NonEmptyGroup.Code)
	}
	subscribed, readable := g.SubscribedTopics()
	var recs []coordinatorRecord
	var written []*kmsg.OffsetDeleteResponseTopicPartition
	resp.Topics = make([]kmsg.OffsetDeleteResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.OffsetDeleteResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			sp.Partition = rp.Partition
			_, committed := g.Committed[grp.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}]
			switch {
			case !cn.allowedTopic(authorizer.OpRead, rt.Topic):
				sp.ErrorCode = errTopicAuth
			case c.partition(rt.Topic, rp.Partition) == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case !g.NoMembers() && (!readable || subscribed[rt.Topic]):
				sp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			case committed:
				recs = append(recs, coordinatorRecord{Key: recordKey{Group: g.ID, Topic: rt.Topic, Partition: rp.Partition}})
				written = append(written, sp)
			}
		}
	}
	g.Mu.Unlock()
	if len(recs) > 0 {
		code := g.Write(recs)
		for _, sp := range written {
			sp.ErrorCode = code
		}
	}
	return resp, nil
}
