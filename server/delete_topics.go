package server

// DeleteTopics, versions 1-6.
//
// Any broker answers; deletion is synchronous, so TimeoutMillis does not
// matter. Topics are named by TopicNames (v1-5) or by Topics (v6), each
// entry with either a name or a TopicID, not both, as KRaft's controller
// requires (INVALID_REQUEST otherwise). A name or ID given more than once
// gets one INVALID_REQUEST result. Unknown names get
// UNKNOWN_TOPIC_OR_PARTITION, unknown IDs UNKNOWN_TOPIC_ID.
//
// The result names the topic (resolved from the ID when asked by ID),
// carries the TopicID on v6 and an ErrorMessage on v5+. Deleting wakes
// every request parked on the topic's partitions. Under a
// controller_mutation_rate quota a deleted topic's partitions are taken
// from it; from v5 a topic over the quota is THROTTLING_QUOTA_EXCEEDED.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDeleteTopics(req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)

	entries := req.Topics
	if req.Version < 6 {
		entries = make([]kmsg.DeleteTopicsRequestTopic, len(req.TopicNames))
		for i := range req.TopicNames {
			entries[i].Topic = &req.TopicNames[i]
		}
	}

	names := map[string]int{}
	ids := map[[16]byte]int{}
	for _, e := range entries {
		switch byID := e.TopicID != [16]byte{}; {
		case byID && e.Topic == nil:
			ids[e.TopicID]++
		case !byID && e.Topic != nil:
			names[*e.Topic]++
		}
	}
	reported := map[any]bool{}
	clusterDelete := cn.allowedCluster(authorizer.OpDelete) // KRaft: DELETE on the cluster deletes any topic
	q := cn.mutationQuota(req.Version >= 5)
	defer q.done()
	for _, e := range entries {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = e.Topic, e.TopicID
		fail := func(err *kerr.Error, msg string) {
			st.ErrorCode = err.Code
			if req.Version >= 5 {
				st.ErrorMessage = &msg
			}
			resp.Topics = append(resp.Topics, st)
		}

		byID := e.TopicID != [16]byte{}
		switch {
		case byID && e.Topic != nil:
			fail(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
			continue
		case !byID && e.Topic == nil:
			fail(kerr.InvalidRequest, "Neither topic name nor id were specified.")
			continue
		case byID && ids[e.TopicID] > 1:
			if !reported[e.TopicID] {
				reported[e.TopicID] = true
				fail(kerr.InvalidRequest, "Duplicate topic id.")
			}
			continue
		case !byID && names[*e.Topic] > 1:
			if !reported[*e.Topic] {
				reported[*e.Topic] = true
				fail(kerr.InvalidRequest, "Duplicate topic name.")
			}
			continue
		}

		var t *topic
		if byID {
			if t = c.topicByID(e.TopicID); t == nil {
				fail(kerr.UnknownTopicID, "This server does not host this topic ID.")
				continue
			}
		} else if !clusterDelete && !cn.allowedTopic(authorizer.OpDescribe, *e.Topic) {
			fail(kerr.TopicAuthorizationFailed, "Authorization failed.") // existence not disclosed
			continue
		} else if t = c.topic(*e.Topic); t == nil {
			fail(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
			continue
		}
		name := t.name
		st.Topic, st.TopicID = &name, t.id
		if !clusterDelete && !cn.allowedTopic(authorizer.OpDelete, name) {
			if byID && !cn.allowedTopic(authorizer.OpDescribe, name) {
				st.Topic = nil // not even its name
			}
			fail(kerr.TopicAuthorizationFailed, "Authorization failed.")
			continue
		}
		if !q.record(len(t.partitions())) {
			fail(errThrottlingQuota, errThrottlingQuota.Description)
			continue
		}
		if !c.deleteTopic(t) {
			fail(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
			continue
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
