package server

// DescribeProducers, version 0: a partition leader's producer state, one
// entry per producer id in its log: epoch, last sequence, last timestamp,
// the coordinator epoch of its last marker and the first offset of its
// open transaction (-1 if none). Not the leader: NOT_LEADER_OR_FOLLOWER;
// unknown: UNKNOWN_TOPIC_OR_PARTITION.

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
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			p.mu.Lock()
			if code := checkLeader(p.st, cn.b.id, -1); code != 0 {
				rp.ErrorCode = code
			} else {
				for _, s := range p.st.Replica(cn.b.id).Producers() {
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
