package server

// OffsetFetch, versions 1-10 (several groups per request from v8; v10 names
// topics by id: offsets_topic_ids.go; Kafka 4.0 removed v0, KIP-896).
//
// Answers the committed offset, leader epoch (v5+) and metadata of each
// requested partition, or of every partition the group committed when the
// topic list is null (v2+); a partition without a commit gets offset -1.
// Group errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) go on the
// group (v8+), the response (v2-7) or every partition (v0-1); a group the
// principal may not DESCRIBE lists no partitions from v2 on. With
// require_stable (v7+) a partition a transaction still holds a pending
// TxnOffsetCommit for answers UNSTABLE_OFFSET_COMMIT (the client retries
// until the marker); without it the last committed offset. The empty group
// id is a group like any other, as Kafka keeps it for compatibility.

import (
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleOffsetFetch(req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var topics []kmsg.OffsetFetchRequestTopic
			if rg.Topics != nil {
				topics = []kmsg.OffsetFetchRequestTopic{}
				for _, t := range rg.Topics {
					topics = append(topics, kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
				}
			}
			got, code := cn.fetchOffsets(rg.Group, topics, req.RequireStable)
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group, sg.ErrorCode = rg.Group, code
			if code != 0 {
				got = nil // a group-level error lists no topics (Kafka 4.4)
			}
			for _, t := range got {
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic = t.Topic
				for _, p := range t.Partitions {
					gt.Partitions = append(gt.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{
						Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode,
					})
				}
				sg.Topics = append(sg.Topics, gt)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return resp, nil
	}
	topics := req.Topics
	if req.Version < 2 && topics == nil {
		topics = []kmsg.OffsetFetchRequestTopic{}
	}
	got, code := cn.fetchOffsets(req.Group, topics, req.Version >= 7 && req.RequireStable)
	resp.Topics = got
	if req.Version >= 2 {
		resp.ErrorCode = code
		if code == errGroupAuth {
			resp.Topics = nil // Kafka's error answer for a denied group lists nothing (v1 lists each partition)
		}
	} else if code != 0 {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
	return resp, nil
}

// fetchOffsets reads one group's committed offsets; topics nil means all.
func (cn *conn) fetchOffsets(groupID string, topics []kmsg.OffsetFetchRequestTopic, requireStable bool) ([]kmsg.OffsetFetchResponseTopic, int16) {
	var g *group
	partition := func(topic string, p int32, o committedOffset, ok bool) kmsg.OffsetFetchResponseTopicPartition {
		sp := kmsg.NewOffsetFetchResponseTopicPartition()
		sp.Partition, sp.Offset, sp.LeaderEpoch = p, -1, -1
		md := ""
		if requireStable && g != nil && g.Unstable(grp.TopicPartition{Topic: topic, Partition: p}) {
			sp.ErrorCode, ok = kerr.UnstableOffsetCommit.Code, false
		}
		if ok {
			sp.Offset, sp.LeaderEpoch, md = o.Offset, o.LeaderEpoch, o.Metadata
		}
		sp.Metadata = &md
		return sp
	}
	// Errors still list the requested partitions, as Kafka does.
	requested := func(code int16) []kmsg.OffsetFetchResponseTopic {
		var out []kmsg.OffsetFetchResponseTopic
		for _, rt := range topics {
			st := kmsg.NewOffsetFetchResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := partition(rt.Topic, p, committedOffset{}, false)
				st.Partitions = append(st.Partitions, sp)
			}
			out = append(out, st)
		}
		return out
	}
	if !cn.allowedGroup(authorizer.OpDescribe, groupID) {
		return requested(0), errGroupAuth
	}
	var code int16
	g, code = cn.b.c.group(cn.b.id, groupID, false)
	if code != 0 {
		return requested(0), code
	}
	if g == nil { // no offsets, but still no peeking at topics it may not describe
		out := requested(0)
		for i := range out {
			if !cn.allowedTopic(authorizer.OpDescribe, out[i].Topic) {
				for j := range out[i].Partitions {
					out[i].Partitions[j].ErrorCode = errTopicAuth
				}
			}
		}
		return out, 0
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if topics != nil {
		out := requested(0)
		for i, rt := range topics {
			denied := !cn.allowedTopic(authorizer.OpDescribe, rt.Topic)
			for j, p := range rt.Partitions {
				if denied {
					out[i].Partitions[j].ErrorCode = errTopicAuth
					continue
				}
				o, ok := g.Committed[grp.TopicPartition{Topic: rt.Topic, Partition: p}]
				out[i].Partitions[j] = partition(rt.Topic, p, o, ok)
			}
		}
		return out, 0
	}
	byTopic := map[string][]int32{}
	for tp := range g.Committed {
		if !cn.allowedTopic(authorizer.OpDescribe, tp.Topic) {
			continue // all offsets: only those of topics it may describe
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	var out []kmsg.OffsetFetchResponseTopic
	for topic, ps := range byTopic {
		slices.Sort(ps)
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = topic
		for _, p := range ps {
			st.Partitions = append(st.Partitions, partition(topic, p, g.Committed[grp.TopicPartition{Topic: topic, Partition: p}], true))
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b kmsg.OffsetFetchResponseTopic) int { return strings.Compare(a.Topic, b.Topic) })
	return out, 0
}
