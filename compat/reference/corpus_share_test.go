package reference

// The share-group APIs (KIP-932) in the request corpus: ShareGroupDescribe
// of an unknown group, a share member's join and heartbeat errors, and the
// share-session errors of ShareFetch and ShareAcknowledge, at the oldest
// and newest versions both clusters serve. (The data path, acquisition and
// acknowledgement, is the "share" scenario's.)

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const corpusShareHeartbeatGroup = "corpus-share-group"

func shareCorpusCases(versions map[int16][2]int16) []corpusCase {
	var out []corpusCase
	for _, v := range versionsOf(versions, kmsg.ShareGroupDescribe) {
		out = append(out, corpusCase{name: fmt.Sprintf("ShareGroupDescribe/v%d-unknown", v), group: "no-such-share-group",
			req: func(*corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrShareGroupDescribeRequest())
				req.GroupIDs = []string{"no-such-share-group"}
				return req
			}})
	}
	for _, v := range versionsOf(versions, kmsg.ShareGroupHeartbeat) {
		hb := func(epoch int32, topics []string) func(*corpusEnv) kmsg.Request {
			return func(*corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrShareGroupHeartbeatRequest())
				req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = corpusShareHeartbeatGroup, "AAAAAAAAAAAAAAAAAAAAAQ", epoch, topics
				return req
			}
		}
		out = append(out,
			corpusCase{name: fmt.Sprintf("ShareGroupHeartbeat/v%d-join-without-topics", v), group: corpusShareHeartbeatGroup, req: hb(0, nil)},
			corpusCase{name: fmt.Sprintf("ShareGroupHeartbeat/v%d-unknown-member", v), group: corpusShareHeartbeatGroup, req: hb(3, nil)},
			corpusCase{name: fmt.Sprintf("ShareGroupHeartbeat/v%d-bad-epoch", v), group: corpusShareHeartbeatGroup, req: hb(-2, nil)},
		)
	}
	for _, v := range versionsOf(versions, kmsg.ShareFetch) {
		out = append(out, corpusCase{name: fmt.Sprintf("ShareFetch/v%d-no-session", v),
			req: func(e *corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrShareFetchRequest())
				req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(corpusShareHeartbeatGroup), kmsg.StringPtr("AAAAAAAAAAAAAAAAAAAAAg"), 4
				req.MaxRecords, req.BatchSize, req.MaxBytes = 10, 10, 1<<20
				rt := kmsg.NewShareFetchRequestTopic()
				rt.TopicID = e.topicID
				rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			}})
	}
	// A member id the group does not know opens a share session: Kafka
	// 4.4's ShareFetch checks no membership (the group's own members
	// come from ShareGroupHeartbeat). Its own group, nothing produced to
	// fetch, so the answer is only the session's.
	for _, v := range versionsOf(versions, kmsg.ShareFetch) {
		out = append(out, corpusCase{name: fmt.Sprintf("ShareFetch/v%d-unknown-member", v),
			req: func(e *corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrShareFetchRequest())
				req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("corpus-share-unknown-member"), kmsg.StringPtr(fmt.Sprintf("AAAAAAAAAAAAAAAAAAAAB%d", v)), 0
				req.MaxRecords, req.BatchSize, req.MaxBytes, req.MaxWaitMillis = 10, 10, 1<<20, 0
				rt := kmsg.NewShareFetchRequestTopic()
				rt.TopicID = e.topicID
				rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			}})
	}
	for _, v := range versionsOf(versions, kmsg.ShareAcknowledge) {
		for _, epoch := range []int32{0, 5} {
			out = append(out, corpusCase{name: fmt.Sprintf("ShareAcknowledge/v%d-epoch-%d", v, epoch),
				req: func(e *corpusEnv) kmsg.Request {
					req := at(v, kmsg.NewPtrShareAcknowledgeRequest())
					req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(corpusShareHeartbeatGroup), kmsg.StringPtr("AAAAAAAAAAAAAAAAAAAAAg"), epoch
					rt := kmsg.NewShareAcknowledgeRequestTopic()
					rt.TopicID = e.topicID
					rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
					b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
					b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 0, []int8{1}
					rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
					rt.Partitions = append(rt.Partitions, rp)
					req.Topics = append(req.Topics, rt)
					return req
				}})
		}
	}
	return out
}
