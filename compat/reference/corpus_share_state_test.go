package reference

// The request corpus of the share coordinator (KIP-932): FindCoordinator
// key type SHARE, the five share-state APIs (83-87) on the coordinator of
// their key with their error answers (uninitialized, fenced epochs,
// unknown topic id, negative numbers), and the share-group offset admin
// APIs (90-92). Stateful: each sees what the earlier ones wrote.

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	corpusShareGroup = "corpus-share"
	corpusSG         = "corpus-sg" // the admin APIs' share group
)

// shareKey is the FindCoordinator SHARE key of group's share partition of
// topic "corpus" (or of id, when set).
func shareKey(e *corpusEnv, group string, partition int32, id *[16]byte) string {
	t := e.topicID
	if id != nil {
		t = *id
	}
	return fmt.Sprintf("%s:%s:%d", group, base64.RawURLEncoding.EncodeToString(t[:]), partition)
}

// unknownTopicID is a topic id neither cluster has.
var unknownTopicID = [16]byte{0x7e, 0x57, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}

// shareCoordinator is the broker coordinating key once its share
// coordinator answers (Kafka creates __share_group_state on the first
// FindCoordinator and loads a partition before it answers).
func (r *run) shareCoordinator(key string) int32 {
	r.Helper()
	var node int32
	var last string
	// Kafka creates __share_group_state (50 partitions, rf 3) on the first
	// FindCoordinator SHARE and loads it afterwards: on a loaded machine,
	// after scenarios that crashed brokers, that took over a minute once.
	ok := r.poll(150*time.Second, func() bool {
		req := at(6, kmsg.NewPtrFindCoordinatorRequest())
		req.CoordinatorType, req.CoordinatorKeys = 2, []string{key}
		c := r.do(0, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
		node = c.NodeID
		last = fmt.Sprintf("FindCoordinator %q: node %d, %s", key, node, errName(c.ErrorCode))
		if c.ErrorCode != 0 || r.down[node] {
			return false
		}
		// A summary of the key's own share partition (it writes nothing)
		// answers once the coordinator has loaded its partition.
		group, id, partition := splitShareKey(key)
		sum := at(0, kmsg.NewPtrReadShareGroupStateSummaryRequest())
		sum.GroupID = group
		sum.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: id, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: partition}}}}
		resp := r.do(node, sum).(*kmsg.ReadShareGroupStateSummaryResponse)
		if len(resp.Topics) != 1 {
			last += fmt.Sprintf("; summary: %d topics", len(resp.Topics))
			return false
		}
		last += "; summary: " + errName(resp.Topics[0].Partitions[0].ErrorCode)
		return !retriable(resp.Topics[0].Partitions[0].ErrorCode)
	})
	if !ok {
		r.Fatalf("%s: timed out waiting for a share coordinator: %s", r.tg.Name(), last)
	}
	return node
}

// splitShareKey is the group, topic id and partition of a share key
// "group:topicId:partition".
func splitShareKey(key string) (string, [16]byte, int32) {
	var id [16]byte
	parts := strings.Split(key, ":")
	n := len(parts)
	b, _ := base64.RawURLEncoding.DecodeString(parts[n-2])
	copy(id[:], b)
	p, _ := strconv.Atoi(parts[n-1])
	return strings.Join(parts[:n-2], ":"), id, int32(p)
}

func shareInit(v int16, group string, id [16]byte, partition, stateEpoch int32, start int64) *kmsg.InitializeShareGroupStateRequest {
	req := at(v, kmsg.NewPtrInitializeShareGroupStateRequest())
	req.GroupID = group
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: id,
		Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: partition, StateEpoch: stateEpoch, StartOffset: start}}}}
	return req
}

func shareRead(v int16, group string, id [16]byte, partition, leaderEpoch int32) *kmsg.ReadShareGroupStateRequest {
	req := at(v, kmsg.NewPtrReadShareGroupStateRequest())
	req.GroupID = group
	req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: id,
		Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: partition, LeaderEpoch: leaderEpoch}}}}
	return req
}

func shareWrite(v int16, group string, id [16]byte, partition, stateEpoch, leaderEpoch int32, start int64, dcc int32) *kmsg.WriteShareGroupStateRequest {
	req := at(v, kmsg.NewPtrWriteShareGroupStateRequest())
	req.GroupID = group
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset, p.DeliveryCompleteCount = partition, stateEpoch, leaderEpoch, start, dcc
	p.StateBatches = []kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{
		{FirstOffset: start, LastOffset: start + 3, DeliveryState: 0, DeliveryCount: 1},
		{FirstOffset: start + 1, LastOffset: start + 1, DeliveryState: 2, DeliveryCount: 1},
	}
	req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{p}}}
	return req
}

func shareSummary(v int16, group string, id [16]byte, partition int32) *kmsg.ReadShareGroupStateSummaryRequest {
	req := at(v, kmsg.NewPtrReadShareGroupStateSummaryRequest())
	req.GroupID = group
	req.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: id,
		Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: partition}}}}
	return req
}

func shareDelete(v int16, group string, id [16]byte, partition int32) *kmsg.DeleteShareGroupStateRequest {
	req := at(v, kmsg.NewPtrDeleteShareGroupStateRequest())
	req.GroupID = group
	req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: partition}}}}
	return req
}

// shareCase is a case sent to the share coordinator of group's share
// partition (of the corpus topic, or of id).
func shareCase(name, group string, partition int32, id *[16]byte, req func(e *corpusEnv) kmsg.Request) corpusCase {
	return corpusCase{name: name, req: req, shareKey: func(e *corpusEnv) string { return shareKey(e, group, partition, id) }}
}

func shareCases(versions map[int16][2]int16) []corpusCase {
	served := func(k int16) bool { vr, ok := versions[k]; return ok && vr[0] <= vr[1] }
	if !served(83) {
		return nil
	}
	lo := func(k int16) int16 { return versions[k][0] }
	hi := func(k int16) int16 { return versions[k][1] }
	g := corpusShareGroup
	out := []corpusCase{
		{name: "FindCoordinator/share-v6", shareKey: func(e *corpusEnv) string { return shareKey(e, g, 0, nil) },
			req: func(e *corpusEnv) kmsg.Request {
				req := at(6, kmsg.NewPtrFindCoordinatorRequest())
				req.CoordinatorType, req.CoordinatorKeys = 2, []string{shareKey(e, g, 0, nil)}
				return req
			}},
		{name: "FindCoordinator/share-v5", req: func(e *corpusEnv) kmsg.Request {
			req := at(5, kmsg.NewPtrFindCoordinatorRequest())
			req.CoordinatorType, req.CoordinatorKeys = 2, []string{shareKey(e, g, 0, nil)}
			return req
		}},
		{name: "FindCoordinator/share-bad-key", req: func(*corpusEnv) kmsg.Request {
			req := at(6, kmsg.NewPtrFindCoordinatorRequest())
			req.CoordinatorType, req.CoordinatorKeys = 2, []string{"no-colons", "g:not-a-uuid:0"}
			return req
		}},
		shareCase("ReadShareGroupState/uninitialized", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(hi(84), g, e.topicID, 0, 1) }),
		shareCase("WriteShareGroupState/uninitialized", g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(hi(85), g, e.topicID, 0, 1, 1, 0, -1)
		}),
		shareCase("ReadShareGroupStateSummary/uninitialized", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareSummary(hi(87), g, e.topicID, 0) }),
		shareCase(fmt.Sprintf("InitializeShareGroupState/v%d", lo(83)), g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareInit(lo(83), g, e.topicID, 0, 1, 0) }),
		shareCase(fmt.Sprintf("ReadShareGroupState/v%d", lo(84)), g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(lo(84), g, e.topicID, 0, 3) }),
		shareCase(fmt.Sprintf("WriteShareGroupState/v%d", lo(85)), g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(lo(85), g, e.topicID, 0, 1, 3, 0, -1)
		}),
		shareCase(fmt.Sprintf("WriteShareGroupState/v%d", hi(85)), g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(hi(85), g, e.topicID, 0, 1, 3, 2, 1)
		}),
		shareCase("ReadShareGroupState/after-writes", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(hi(84), g, e.topicID, 0, 3) }),
		shareCase(fmt.Sprintf("ReadShareGroupStateSummary/v%d", lo(87)), g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareSummary(lo(87), g, e.topicID, 0) }),
		shareCase(fmt.Sprintf("ReadShareGroupStateSummary/v%d", hi(87)), g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareSummary(hi(87), g, e.topicID, 0) }),
		shareCase("WriteShareGroupState/stale-leader-epoch", g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(hi(85), g, e.topicID, 0, 1, 2, 2, -1)
		}),
		shareCase("ReadShareGroupState/stale-leader-epoch", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(hi(84), g, e.topicID, 0, 2) }),
		shareCase("WriteShareGroupState/stale-state-epoch", g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(hi(85), g, e.topicID, 0, 0, 3, 2, -1)
		}),
		shareCase("InitializeShareGroupState/stale-state-epoch", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareInit(hi(83), g, e.topicID, 0, 0, 0) }),
		shareCase("WriteShareGroupState/negative-leader-epoch", g, 0, nil, func(e *corpusEnv) kmsg.Request {
			return shareWrite(hi(85), g, e.topicID, 0, 1, -1, 2, -1)
		}),
		shareCase("InitializeShareGroupState/unknown-topic-id", g, 0, &unknownTopicID, func(*corpusEnv) kmsg.Request {
			return shareInit(hi(83), g, unknownTopicID, 0, 0, 0)
		}),
		shareCase("InitializeShareGroupState/negative-state-epoch", g, 1, nil, func(e *corpusEnv) kmsg.Request { return shareInit(hi(83), g, e.topicID, 1, -1, 0) }),
		shareCase("ReadShareGroupState/empty-group-id", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(hi(84), "", e.topicID, 0, 3) }),
		shareCase(fmt.Sprintf("DeleteShareGroupState/v%d", lo(86)), g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareDelete(lo(86), g, e.topicID, 0) }),
		shareCase("DeleteShareGroupState/missing", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareDelete(hi(86), g, e.topicID, 0) }),
		shareCase("ReadShareGroupState/after-delete", g, 0, nil, func(e *corpusEnv) kmsg.Request { return shareRead(hi(84), g, e.topicID, 0, 3) }),
	}
	if !served(90) {
		return out
	}
	alter := func(v int16) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrAlterShareGroupOffsetsRequest())
			req.GroupID = corpusSG
			req.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{
				{Topic: "corpus", Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 1}, {Partition: 9, StartOffset: 0}}},
				{Topic: "no-such-topic", Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 0}}},
			}
			return req
		}
	}
	describe := func(v int16, all bool) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeShareGroupOffsetsRequest())
			rg := kmsg.DescribeShareGroupOffsetsRequestGroup{GroupID: corpusSG}
			if !all {
				rg.Topics = []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "corpus", Partitions: []int32{0, 1}}, {Topic: "no-such-topic", Partitions: []int32{0}}}
			}
			req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{rg}
			return req
		}
	}
	deleteOffsets := func(group string) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(hi(92), kmsg.NewPtrDeleteShareGroupOffsetsRequest())
			req.GroupID = group
			req.Topics = []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "corpus"}}
			return req
		}
	}
	// Kafka's group coordinator records the initialized partitions after
	// the persister answered: wait until a describe of all shows them.
	initialized := func(r *run, _ *corpusEnv) {
		r.waitFor("the altered partitions initialized", func() bool {
			resp := r.do(r.coordinator(corpusSG), describe(hi(90), true)(nil)).(*kmsg.DescribeShareGroupOffsetsResponse)
			return len(resp.Groups) == 1 && len(resp.Groups[0].Topics) == 1
		})
	}
	return append(out,
		corpusCase{name: fmt.Sprintf("AlterShareGroupOffsets/v%d", lo(91)), group: corpusSG, req: alter(lo(91))},
		corpusCase{name: fmt.Sprintf("DescribeShareGroupOffsets/v%d", lo(90)), req: describe(lo(90), false), settle: initialized},
		corpusCase{name: fmt.Sprintf("DescribeShareGroupOffsets/v%d", hi(90)), req: describe(hi(90), false)},
		corpusCase{name: "DescribeShareGroupOffsets/all", group: corpusSG, req: describe(hi(90), true)},
		corpusCase{name: "DeleteShareGroupOffsets/no-such-group", group: "corpus-sg-none", req: deleteOffsets("corpus-sg-none")},
		corpusCase{name: fmt.Sprintf("DeleteShareGroupOffsets/v%d", hi(92)), group: corpusSG, req: deleteOffsets(corpusSG)},
		corpusCase{name: "DescribeShareGroupOffsets/after-delete", req: describe(hi(90), false)},
	)
}
