package reference

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A streams group member's life in the request corpus
// (StreamsGroupHeartbeat, StreamsGroupDescribe, KIP-1071): the join with a
// topology reading "corpus", a heartbeat, the error paths and a leave.

const corpusStreamsGroup = "cg-streams"

func corpusStreamsTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID, s0.SourceTopics, s0.RepartitionSinkTopics = "0", []string{"corpus"}, []string{"cg-streams-rekey-repartition"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	rp := kmsg.NewTopicInfo()
	rp.Topic = "cg-streams-rekey-repartition"
	cl := kmsg.NewTopicInfo()
	cl.Topic = "cg-streams-counts-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	s1.RepartitionSourceTopics, s1.StateChangelogTopics = []kmsg.TopicInfo{rp}, []kmsg.TopicInfo{cl}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

func streamsGroupCases(versions map[int16][2]int16) []corpusCase {
	hv := versionsOf(versions, kmsg.StreamsGroupHeartbeat)
	if len(hv) == 0 {
		return nil
	}
	first, newest := hv[0], hv[len(hv)-1]
	const member = "streams-member-1"
	heartbeat := func(v int16, edit func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest)) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrStreamsGroupHeartbeatRequest())
			req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = corpusStreamsGroup, member, e.streamsEpoch, -1
			edit(e, req)
			return req
		}
	}
	join := func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) {
		req.MemberEpoch, req.RebalanceTimeoutMillis, req.Topology = 0, 60000, corpusStreamsTopology()
		req.ProcessID = kmsg.StringPtr("process-1")
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	keep := func(e *corpusEnv, resp kmsg.Response) {
		if r := resp.(*kmsg.StreamsGroupHeartbeatResponse); r.ErrorCode == 0 {
			e.streamsEpoch = r.MemberEpoch
		}
	}
	describe := func(v int16) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrStreamsGroupDescribeRequest())
			req.Groups = []string{corpusStreamsGroup}
			return req
		}
	}
	g := corpusStreamsGroup
	out := []corpusCase{
		{name: fmt.Sprintf("StreamsGroupHeartbeat/v%d-join", first), group: g, req: heartbeat(first, join), after: keep},
		{name: fmt.Sprintf("StreamsGroupHeartbeat/v%d-heartbeat", newest), group: g, after: keep,
			req: heartbeat(newest, func(*corpusEnv, *kmsg.StreamsGroupHeartbeatRequest) {})},
		{name: "StreamsGroupHeartbeat/fenced-member-epoch", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) { req.MemberEpoch = e.streamsEpoch + 10 })},
		{name: "StreamsGroupHeartbeat/unknown-member-id", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) { req.MemberID = "no-such-member" })},
		{name: "StreamsGroupHeartbeat/empty-member-id", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) { req.MemberID = "" })},
		{name: "StreamsGroupHeartbeat/join-changelog-with-partitions", group: g,
			req: heartbeat(first, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) {
				join(e, req)
				req.MemberID = "streams-member-2"
				req.Topology.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 3
			})},
		{name: "StreamsGroupHeartbeat/topology-after-join", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) { req.Topology = corpusStreamsTopology() })},
		{name: "StreamsGroupHeartbeat/consumer-group-id", group: corpusGroup,
			req: func(e *corpusEnv) kmsg.Request {
				req := heartbeat(newest, join)(e).(*kmsg.StreamsGroupHeartbeatRequest)
				req.Group = corpusGroup
				return req
			}},
	}
	for _, v := range versionsOf(versions, kmsg.StreamsGroupDescribe) {
		out = append(out, corpusCase{name: fmt.Sprintf("StreamsGroupDescribe/v%d-one-member", v), group: g, req: describe(v)})
	}
	commit := func(delta int32) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(9, kmsg.NewPtrOffsetCommitRequest())
			req.Group, req.MemberID, req.Generation = g, member, e.streamsEpoch+delta
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = 1, 3
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}
	}
	out = append(out,
		corpusCase{name: "DescribeGroups/streams-group", group: g, req: func(*corpusEnv) kmsg.Request {
			req := at(5, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{g}
			return req
		}},
		corpusCase{name: "ListGroups/streams-type", group: g, req: func(*corpusEnv) kmsg.Request {
			req := at(5, kmsg.NewPtrListGroupsRequest())
			req.TypesFilter = []string{"streams"}
			return req
		}},
		corpusCase{name: "JoinGroup/streams-group-id", group: g, req: func(*corpusEnv) kmsg.Request {
			req := at(9, kmsg.NewPtrJoinGroupRequest())
			req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = g, 10000, 10000, "consumer"
			req.MemberID = "classic-member"
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = "range", []byte{0, 3, 0, 0, 0, 0, 0, 0, 0, 0}
			req.Protocols = append(req.Protocols, p)
			return req
		}},
		corpusCase{name: "ConsumerGroupHeartbeat/streams-group-id", group: g, req: func(*corpusEnv) kmsg.Request {
			req := at(1, kmsg.NewPtrConsumerGroupHeartbeatRequest())
			req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = g, "AAAAAAAAAAAAAAAAAAAAAA", 0, 6000
			req.SubscribedTopicNames, req.Topics = []string{"corpus"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			return req
		}},
		corpusCase{name: "OffsetCommit/streams-member-epoch-ahead", group: g, req: commit(1)},
		corpusCase{name: "OffsetCommit/streams-member-epoch-behind", group: g, req: commit(-1)},
		corpusCase{name: "OffsetCommit/streams-member", group: g, req: commit(0)},
	)
	return append(out,
		corpusCase{name: "StreamsGroupHeartbeat/leave", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.StreamsGroupHeartbeatRequest) { req.MemberEpoch = -1 })},
		corpusCase{name: "StreamsGroupHeartbeat/after-leave", group: g,
			req: heartbeat(newest, func(*corpusEnv, *kmsg.StreamsGroupHeartbeatRequest) {})},
	)
}
