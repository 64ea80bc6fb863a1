package server

// The TestACLEveryAPI rows of the share coordinator's APIs (83-87: the
// cluster's CLUSTER_ACTION, as KafkaApis checks for inter-broker calls)
// and of the share-group offset admin APIs (90-92).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func shareCoordACLCases() []aclCase {
	return []aclCase{
		{name: "InitializeShareGroupState", key: 83, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrInitializeShareGroupStateRequest()
				req.GroupID = "g"
				req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: e.topicID, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "ReadShareGroupState", key: 84, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrReadShareGroupStateRequest()
				req.GroupID = "g"
				req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: e.topicID, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "WriteShareGroupState", key: 85, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrWriteShareGroupStateRequest()
				req.GroupID = "g"
				req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: e.topicID, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DeleteShareGroupState", key: 86, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteShareGroupStateRequest()
				req.GroupID = "g"
				req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: e.topicID, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DeleteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "ReadShareGroupStateSummary", key: 87, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
				req.GroupID = "g"
				req.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: e.topicID, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeShareGroupOffsets/group", key: 90, want: errGroupAuth, grants: slices.Concat(onGroup(opDescribe), onTopic(opDescribe)),
			req: describeShareOffsetsReq, code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0].ErrorCode }},
		{name: "DescribeShareGroupOffsets/topic", key: 90, want: errTopicAuth, base: onGroup(opDescribe), grants: onTopic(opDescribe),
			req: describeShareOffsetsReq, code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0].Topics[0].Partitions[0].ErrorCode
			}},
		{name: "AlterShareGroupOffsets/group", key: 91, want: errGroupAuth, grants: slices.Concat(onGroup(opRead), onTopic(opRead)),
			req: alterShareOffsetsReq, code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterShareGroupOffsetsResponse).ErrorCode }},
		{name: "AlterShareGroupOffsets/topic", key: 91, want: errTopicAuth, base: onGroup(opRead), grants: onTopic(opRead),
			req: alterShareOffsetsReq, code: func(r kmsg.Response) int16 {
				return r.(*kmsg.AlterShareGroupOffsetsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DeleteShareGroupOffsets/group", key: 92, want: errGroupAuth, grants: slices.Concat(onGroup(opDelete), onTopic(opRead)),
			req: deleteShareOffsetsReq, code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode }},
		{name: "DeleteShareGroupOffsets/topic", key: 92, want: errTopicAuth, base: onGroup(opDelete), grants: onTopic(opRead),
			req: deleteShareOffsetsReq, code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DeleteShareGroupOffsetsResponse).Topics[0].ErrorCode
			}},
	}
}

func describeShareOffsetsReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "g", Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}}}
	return req
}

func alterShareOffsetsReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = "g"
	req.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 0}}}}
	return req
}

func deleteShareOffsetsReq(e *aclEnv) kmsg.Request {
	// An existing, empty share group "g", so that the topic's check shows.
	e.c.sc.groupHook = func(string) (bool, int, int32) { return true, 0, 0 }
	req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	req.GroupID = "g"
	req.Topics = []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "t"}}
	return req
}
