package server

// OffsetForLeaderEpoch, versions 2-4.
//
// Consumers (ReplicaID -1, v3+) validating their position after a leader
// change (KIP-320) and followers finding where to truncate (KIP-101/279)
// both ask the leader; Kafka's ReplicaManager reads only from the leader
// whatever the ReplicaID, and so do we. Per partition: unknown topic or
// partition gets UNKNOWN_TOPIC_OR_PARTITION; then CurrentLeaderEpoch is
// checked (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), then leadership
// (NOT_LEADER_OR_FOLLOWER).
//
// The answer is the leader's LeaderEpochFileCache.endOffsetFor: the
// requested epoch and the LEO if it is the latest; else the largest known
// epoch at or below it with the start offset of the next one; -1/-1 when
// nothing fits (no error: the caller falls back on its own rules).

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleOffsetForLeaderEpoch(req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	resp.Topics = make([]kmsg.OffsetForLeaderEpochResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			if !cn.allowedTopic(authorizer.OpDescribe, rt.Topic) {
				sp.ErrorCode = errTopicAuth
				continue
			}
			p := c.partition(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			p.mu.Lock()
			if code := checkLeader(p.st, cn.b.id, rp.CurrentLeaderEpoch); code != 0 {
				sp.ErrorCode = code
			} else {
				sp.LeaderEpoch, sp.EndOffset = p.st.OffsetForLeaderEpoch(cn.b.id, rp.LeaderEpoch)
			}
			p.mu.Unlock()
		}
	}
	return resp, nil
}
