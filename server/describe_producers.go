package server

// DescribeProducers, version 0: a partition leader's producer state, one
// entry per producer id in its log: epoch, last sequence, last timestamp,
// the coordinator epoch of its last marker and the first offset of its
// open transaction (-1 if none). Kafka 4.4 answers from the local log, so a
// follower answers with its own replica's state (what it has replicated);
// a broker without a replica NOT_LEADER_OR_FOLLOWER. An unknown topic is
// UNKNOWN_TOPIC_OR_PARTITION with Kafka's message, an unknown partition of
// a known topic the same code without one.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDescribeProducers(req *kmsg.DescribeProducersRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, index := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = index
			if !cn.allowedTopic(authorizer.OpRead, t.Topic) {
				rp.ErrorCode = errTopicAuth
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			p := c.partition(t.Topic, index)
			if p == nil {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				if c.topic(t.Topic) == nil {
					rp.ErrorMessage = kmsg.StringPtr(msgUnknownTopicOrPartition)
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			p.mu.Lock()
			if r := p.st.Replica(cn.b.id); r == nil {
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			} else {
				for _, s := range r.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = s.ProducerID, int32(s.ProducerEpoch), s.LastSequence
					ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = s.LastTimestamp, s.CoordinatorEpoch, s.TxnStartOffset
					rp.ActiveProducers = append(rp.ActiveProducers, ap)
				}
			}
			p.mu.Unlock()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
