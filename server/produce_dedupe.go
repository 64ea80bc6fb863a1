package server

// Two oddities of Kafka 4.4's Produce handler, kept as Kafka has them:
//
//   - Before anything else it peeks at each partition's first batch to see
//     whether the request is transactional (RequestUtils
//     .hasTransactionalRecords, stopping at the first transactional one); a
//     size below the smallest message or an unknown magic there fails the
//     whole request: CORRUPT_MESSAGE with the reason as ErrorMessage on
//     every partition (or, with acks=0, a closed connection).
//   - It keeps the request's partitions in maps keyed by topic partition, so
//     a partition named twice (in one topic entry or in two) gets one answer,
//     in one topic entry: the last entry's batch is the one appended (the
//     others are dropped unanswered), and if any entry's records fail the
//     request-level checks (no batch, magic v0/v1, zstd before v7) that
//     refusal is the answer, though the valid batch was appended anyway.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceCorruptFrame is the ErrorMessage of a request Kafka fails whole,
// or "".
func produceCorruptFrame(req *kmsg.ProduceRequest) string {
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			records := req.Topics[i].Partitions[j].Records
			if msg := corruptFrame(records); msg != "" {
				return msg
			}
			if len(records) > 22 && records[16] == 2 && records[22]&0x10 != 0 {
				return "" // transactional: Kafka's peek stops here
			}
		}
	}
	return ""
}

// produceFrameError answers every partition of req with CORRUPT_MESSAGE and
// msg, as Kafka's error response to a request it could not handle.
func produceFrameError(req *kmsg.ProduceRequest, msg string) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for i := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = req.Topics[i].Topic
		for j := range req.Topics[i].Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = req.Topics[i].Partitions[j].Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			sp.ErrorCode = kerr.CorruptMessage.Code
			sp.ErrorMessage = kmsg.StringPtr(msg)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	mergeProduceDuplicates(resp, nil)
	return resp
}

// produceDuplicates finds partitions named more than once. It returns nil
// when there are none (the usual case, without allocating); else, per
// partition entry in request order, whether it is a valid entry other
// than its partition's last (skip: not appended) and whether Kafka's
// request-level checks refuse it (invalid).
func (c *Cluster) produceDuplicates(req *kmsg.ProduceRequest) (skip, invalid []bool) {
	type tp struct {
		topic     string
		id        [16]byte // v13+ names topics by id
		partition int32
	}
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	if !hasDuplicatePartition(req, n) {
		return nil, nil
	}
	keys := make([]tp, 0, n)
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			keys = append(keys, tp{req.Topics[i].Topic, req.Topics[i].TopicID, req.Topics[i].Partitions[j].Partition})
		}
	}
	skip, invalid = make([]bool, n), make([]bool, n)
	lastValid := make(map[tp]int, n)
	k := 0
	for i := range req.Topics {
		t := c.topic(req.Topics[i].Topic)
		for j := range req.Topics[i].Partitions {
			rp := &req.Topics[i].Partitions[j]
			known := t != nil && rp.Partition >= 0 && int(rp.Partition) < len(t.partitions())
			invalid[k] = known && requestLevelRefusal(req.Version, rp.Records) != nil
			if !invalid[k] {
				if prev, ok := lastValid[keys[k]]; ok {
					skip[prev] = true
				}
				lastValid[keys[k]] = k
			}
			k++
		}
	}
	return skip, invalid
}

// hasDuplicatePartition says whether req (n partition entries) names a
// partition twice; without allocating for the usual small request.
func hasDuplicatePartition(req *kmsg.ProduceRequest, n int) bool {
	if n <= 1 {
		return false
	}
	if n <= 16 {
		for i := range req.Topics {
			for j := range req.Topics[i].Partitions {
				for k := i; k < len(req.Topics); k++ {
					if req.Topics[k].Topic != req.Topics[i].Topic || req.Topics[k].TopicID != req.Topics[i].TopicID {
						continue
					}
					from := 0
					if k == i {
						from = j + 1
					}
					for l := from; l < len(req.Topics[k].Partitions); l++ {
						if req.Topics[k].Partitions[l].Partition == req.Topics[i].Partitions[j].Partition {
							return true
						}
					}
				}
			}
		}
		return false
	}
	type tp struct {
		topic     string
		id        [16]byte
		partition int32
	}
	seen := make(map[tp]bool, n)
	for i := range req.Topics {
		for j := range req.Topics[i].Partitions {
			k := tp{req.Topics[i].Topic, req.Topics[i].TopicID, req.Topics[i].Partitions[j].Partition}
			if seen[k] {
				return true
			}
			seen[k] = true
		}
	}
	return false
}

// mergeProduceDuplicates leaves one answer per partition, at the place of
// its first entry and in the first topic entry of its name: the last
// refused-as-invalid entry's answer if there is one, else the last other
// (unskipped) entry's. With invalid nil the last entry answers.
func mergeProduceDuplicates(resp *kmsg.ProduceResponse, invalid []bool) {
	type tp struct {
		topic     string
		id        [16]byte // v13+ names topics by id
		partition int32
	}
	type choice struct {
		at      int // flat index of the chosen answer
		invalid bool
	}
	var flat []*kmsg.ProduceResponseTopicPartition
	var keys []tp
	chosen := map[tp]choice{}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			k := tp{resp.Topics[i].Topic, resp.Topics[i].TopicID, resp.Topics[i].Partitions[j].Partition}
			inv := invalid != nil && invalid[len(flat)]
			if c, ok := chosen[k]; !ok || inv || !c.invalid {
				chosen[k] = choice{len(flat), inv}
			}
			flat = append(flat, &resp.Topics[i].Partitions[j])
			keys = append(keys, k)
		}
	}
	type topicKey struct {
		name string
		id   [16]byte
	}
	var topics []kmsg.ProduceResponseTopic
	topicAt := map[topicKey]int{}
	done := map[tp]bool{}
	for _, k := range keys {
		if done[k] {
			continue
		}
		done[k] = true
		ti, ok := topicAt[topicKey{k.topic, k.id}]
		if !ok {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = k.topic, k.id
			topics = append(topics, st)
			ti = len(topics) - 1
			topicAt[topicKey{k.topic, k.id}] = ti
		}
		topics[ti].Partitions = append(topics[ti].Partitions, *flat[chosen[k].at])
	}
	resp.Topics = topics
}
