package server

// What Kafka's broker checks in OffsetCommit and TxnOffsetCommit before
// the group coordinator sees them, for every version, and the topic ids
// of OffsetCommit v10, OffsetFetch v10 and TxnOffsetCommit v6 (KIP-848's
// follow-up: topics named by id instead of name; nothing else changed, so
// each is answered by the name-based handler after the ids are resolved).
//
// Once the request may touch the group (READ on it, and WRITE on the
// transactional id for TxnOffsetCommit), the broker takes out, topic by
// topic in request order: the partitions of an id no topic has
// (UNKNOWN_TOPIC_ID), of a topic it may not READ
// (TOPIC_AUTHORIZATION_FAILED) and partitions that do not exist
// (UNKNOWN_TOPIC_OR_PARTITION). These answers come first, whatever the
// group's state; the coordinator's answers for the rest are merged after
// them (into a topic already answered, or as a new topic at the end), and
// a request with nothing left is answered without the coordinator.
//
// OffsetFetch v10 lists an unknown id's partitions with offset -1 and
// UNKNOWN_TOPIC_ID; asked for all offsets, it lists only topics that
// still exist (a deleted topic has no id to give); a group answered with
// an error lists no topics.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicIDName resolves a live topic's id to its name, or "".
func (c *Cluster) topicIDName(id [16]byte) string {
	if t := c.topicByID(id); t != nil && !t.deleted.Load() {
		return t.name
	}
	return ""
}

// topicNameID is a live topic's id, and whether there is one.
func (c *Cluster) topicNameID(name string) ([16]byte, bool) {
	if t := c.topic(name); t != nil && !t.deleted.Load() {
		return t.id, true
	}
	return [16]byte{}, false
}

// commitTopic is one topic of a commit request as the broker sees it.
type commitTopic struct {
	name string
	id   [16]byte
}

// commitAnswers builds a commit answer in Kafka's order: topics in the
// order of their first answer, partitions in answer order within a topic.
type commitAnswers struct {
	order []commitTopic
	parts map[commitTopic][][2]int32 // partition, error code
}

func (a *commitAnswers) add(t commitTopic, partition int32, code int16) {
	if a.parts == nil {
		a.parts = map[commitTopic][][2]int32{}
	}
	if _, ok := a.parts[t]; !ok {
		a.order = append(a.order, t)
	}
	a.parts[t] = append(a.parts[t], [2]int32{partition, int32(code)})
}

// precheckCommit is the broker's filter of one topic's partitions: it
// answers those it refuses in a and returns the partitions left. byID says
// the request names topics by id, so an empty name is an unknown id.
func (cn *conn) precheckCommit(a *commitAnswers, t commitTopic, byID bool, partitions []int32) []int32 {
	c := cn.b.c
	var left []int32
	for _, p := range partitions {
		switch {
		case byID && t.name == "":
			a.add(t, p, kerr.UnknownTopicID.Code)
		case !cn.allowedTopic(authorizer.OpRead, t.name):
			a.add(t, p, errTopicAuth)
		case c.partition(t.name, p) == nil:
			a.add(t, p, kerr.UnknownTopicOrPartition.Code)
		default:
			left = append(left, p)
		}
	}
	return left
}

func (cn *conn) handleOffsetCommitIDs(req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	c := cn.b.c
	byID := req.Version >= 10
	topics := make([]commitTopic, len(req.Topics))
	for i, rt := range req.Topics {
		topics[i] = commitTopic{name: rt.Topic}
		if byID {
			topics[i] = commitTopic{name: c.topicIDName(rt.TopicID), id: rt.TopicID}
		}
	}
	byName := *req
	byName.Topics = nil
	var a commitAnswers
	if !cn.allowedGroup(authorizer.OpRead, req.Group) || req.Group == "" {
		// The whole request fails, every topic as the request named it.
		for i, rt := range req.Topics {
			rt.Topic = topics[i].name
			byName.Topics = append(byName.Topics, rt)
		}
		r, err := cn.handleOffsetCommit(&byName)
		if err != nil || r == nil {
			return r, err
		}
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Topics = r.(*kmsg.OffsetCommitResponse).Topics
		for i := range min(len(resp.Topics), len(req.Topics)) {
			resp.Topics[i].TopicID = req.Topics[i].TopicID
		}
		return resp, nil
	}
	for i, rt := range req.Topics {
		rt.Topic = topics[i].name
		if rt.Partitions = prechecked(cn, &a, topics[i], byID, rt.Partitions, func(p kmsg.OffsetCommitRequestTopicPartition) int32 { return p.Partition }); len(rt.Partitions) > 0 {
			byName.Topics = append(byName.Topics, rt)
		}
	}
	if len(byName.Topics) > 0 || len(req.Topics) == 0 {
		r, err := cn.handleOffsetCommit(&byName)
		if err != nil || r == nil {
			return r, err
		}
		for _, st := range r.(*kmsg.OffsetCommitResponse).Topics {
			t := commitTopic{name: st.Topic}
			if byID {
				t.id, _ = c.topicNameID(st.Topic)
			}
			for _, sp := range st.Partitions {
				a.add(t, sp.Partition, sp.ErrorCode)
			}
		}
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range a.order {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic, st.TopicID = t.name, t.id
		for _, pc := range a.parts[t] {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = pc[0], int16(pc[1])
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (cn *conn) handleTxnOffsetCommitIDs(req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	c := cn.b.c
	byID := req.Version >= 6
	topics := make([]commitTopic, len(req.Topics))
	for i, rt := range req.Topics {
		topics[i] = commitTopic{name: rt.Topic}
		if byID {
			topics[i] = commitTopic{name: c.topicIDName(rt.TopicID), id: rt.TopicID}
		}
	}
	byName := *req
	byName.Version = min(req.Version, 5)
	byName.Topics = nil
	var a commitAnswers
	if !cn.allowedTxn(authorizer.OpWrite, req.TransactionalID) || !cn.allowedGroup(authorizer.OpRead, req.Group) ||
		req.Group == "" || req.TransactionalID == "" {
		// The whole request fails, every topic as the request named it.
		for i, rt := range req.Topics {
			rt.Topic = topics[i].name
			byName.Topics = append(byName.Topics, rt)
		}
		r, err := cn.handleTxnOffsetCommit(&byName)
		if err != nil || r == nil {
			return r, err
		}
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = r.(*kmsg.TxnOffsetCommitResponse).Topics
		for i := range min(len(resp.Topics), len(req.Topics)) {
			resp.Topics[i].TopicID = req.Topics[i].TopicID
		}
		return resp, nil
	}
	for i, rt := range req.Topics {
		rt.Topic = topics[i].name
		if rt.Partitions = prechecked(cn, &a, topics[i], byID, rt.Partitions, func(p kmsg.TxnOffsetCommitRequestTopicPartition) int32 { return p.Partition }); len(rt.Partitions) > 0 {
			byName.Topics = append(byName.Topics, rt)
		}
	}
	if len(byName.Topics) > 0 || len(req.Topics) == 0 {
		r, err := cn.handleTxnOffsetCommit(&byName)
		if err != nil || r == nil {
			return r, err
		}
		for _, st := range r.(*kmsg.TxnOffsetCommitResponse).Topics {
			t := commitTopic{name: st.Topic}
			if byID {
				t.id, _ = c.topicNameID(st.Topic)
			}
			for _, sp := range st.Partitions {
				a.add(t, sp.Partition, sp.ErrorCode)
			}
		}
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range a.order {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic, st.TopicID = t.name, t.id
		for _, pc := range a.parts[t] {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = pc[0], int16(pc[1])
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// prechecked runs precheckCommit on parts (a commit request's partitions
// of topic t) and returns those left for the group coordinator, in order.
func prechecked[P any](cn *conn, a *commitAnswers, t commitTopic, byID bool, parts []P, partition func(P) int32) []P {
	ps := make([]int32, len(parts))
	for i, p := range parts {
		ps[i] = partition(p)
	}
	left := cn.precheckCommit(a, t, byID, ps)
	if len(left) == 0 {
		return nil
	}
	keep := make([]P, 0, len(left))
	for _, p := range parts {
		if containsPartition(left, partition(p)) {
			keep = append(keep, p)
		}
	}
	return keep
}

func containsPartition(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func (cn *conn) handleOffsetFetchIDs(req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	if req.Version < 10 {
		return cn.handleOffsetFetch(req)
	}
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	for _, rg := range req.Groups {
		byName := *req
		byName.Version = 9
		g := rg
		g.Topics = nil
		unknown := map[int]bool{}
		if rg.Topics != nil {
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for i, rt := range rg.Topics {
				name := c.topicIDName(rt.TopicID)
				if name == "" {
					unknown[i] = true
					continue
				}
				rt.Topic = name
				g.Topics = append(g.Topics, rt)
			}
		}
		byName.Groups = []kmsg.OffsetFetchRequestGroup{g}
		r, err := cn.handleOffsetFetch(&byName)
		if err != nil || r == nil {
			return r, err
		}
		sg := r.(*kmsg.OffsetFetchResponse).Groups[0]
		got := sg.Topics
		sg.Topics = nil
		if sg.ErrorCode != 0 {
			// A group error (NOT_COORDINATOR, GROUP_AUTHORIZATION_FAILED,
			// a loading coordinator) lists no topics in Kafka 4.4.
		} else if rg.Topics == nil { // all offsets: the topics that have ids
			for _, t := range got {
				if id, ok := c.topicNameID(t.Topic); ok {
					t.TopicID = id
					sg.Topics = append(sg.Topics, t)
				}
			}
		} else {
			for i, rt := range rg.Topics {
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.TopicID = rt.TopicID
				if unknown[i] {
					for _, p := range rt.Partitions {
						sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
						sp.Partition, sp.Offset, sp.LeaderEpoch = p, -1, -1
						sp.Metadata, sp.ErrorCode = kmsg.StringPtr(""), kerr.UnknownTopicID.Code
						gt.Partitions = append(gt.Partitions, sp)
					}
				} else if len(got) > 0 {
					gt.Partitions, got = got[0].Partitions, got[1:]
				}
				sg.Topics = append(sg.Topics, gt)
			}
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return resp, nil
}
