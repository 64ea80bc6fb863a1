package server

// TestACLEveryAPI's rows for the share-group APIs (76-79), as Kafka 4.4's
// KafkaApis checks them: the group (READ; DESCRIBE to describe) before
// anything else, then READ on each fetched or acknowledged topic and
// DESCRIBE on each subscribed one.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func shareACLCases() []aclCase {
	heartbeat := func(*aclEnv) kmsg.Request {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = "g", "m", 0, []string{"t"}
		return req
	}
	heartbeatCode := func(r kmsg.Response) int16 { return r.(*kmsg.ShareGroupHeartbeatResponse).ErrorCode }
	fetch := func(e *aclEnv) kmsg.Request {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes = kmsg.StringPtr("g"), kmsg.StringPtr("m"), 10, 1<<20
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = e.topicID
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		return req
	}
	fetchCode := func(r kmsg.Response) int16 {
		fr := r.(*kmsg.ShareFetchResponse)
		if fr.ErrorCode != 0 || len(fr.Topics) == 0 {
			return fr.ErrorCode
		}
		return fr.Topics[0].Partitions[0].ErrorCode
	}
	return []aclCase{
		{name: "ShareGroupHeartbeat/group", key: 76, want: errGroupAuth, grants: slices.Concat(onGroup(opRead), onTopic(opDescribe)),
			req: heartbeat, code: heartbeatCode},
		{name: "ShareGroupHeartbeat/topic", key: 76, want: errTopicAuth, base: onGroup(opRead), grants: onTopic(opDescribe),
			req: heartbeat, code: heartbeatCode},
		{name: "ShareGroupDescribe", key: 77, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrShareGroupDescribeRequest()
				req.GroupIDs = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode }},
		{name: "ShareFetch/group", key: 78, want: errGroupAuth, grants: slices.Concat(onGroup(opRead), onTopic(opRead)),
			req: fetch, code: fetchCode},
		{name: "ShareFetch/topic", key: 78, want: errTopicAuth, base: onGroup(opRead), grants: onTopic(opRead),
			req: fetch, code: fetchCode},
		{name: "ShareAcknowledge", key: 79, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrShareAcknowledgeRequest()
				req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr("m"), 0
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ShareAcknowledgeResponse).ErrorCode }},
	}
}
