package server

// DeleteRecords, versions 0-2.
//
// Only the leader answers (NOT_LEADER_OR_FOLLOWER elsewhere, a zombie
// included: it cannot reach the followers). Offset -1 means the HW; an
// offset beyond the HW or below -1 gets OFFSET_OUT_OF_RANGE. The log start
// offset of every replica moves up to the offset at once (Kafka's followers
// follow on their next fetch and the leader waits for them, so the answer
// is the same), whole batches below it are dropped, and LowWatermark is the
// new log start offset; one already past the offset stays. A topic whose
// cleanup.policy is compact alone gets POLICY_VIOLATION, as in Kafka. An
// unknown partition gets UNKNOWN_TOPIC_OR_PARTITION; LowWatermark is -1 on
// every error. TimeoutMillis does not matter.

import (
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDeleteRecords(req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		t := c.topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			if !cn.allowedTopic(authorizer.OpDelete, rt.Topic) {
				sp.LowWatermark, sp.ErrorCode = -1, errTopicAuth
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			sp.LowWatermark, sp.ErrorCode = cn.deleteRecords(t, rp.Partition, rp.Offset)
			if sp.ErrorCode != 0 {
				sp.LowWatermark = -1
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (cn *conn) deleteRecords(t *topic, index int32, offset int64) (int64, int16) {
	if t == nil || index < 0 || int(index) >= len(t.partitions()) {
		return -1, kerr.UnknownTopicOrPartition.Code
	}
	if policy := t.cfg().configs["cleanup.policy"]; policy != "" && !strings.Contains(policy, "delete") {
		return -1, kerr.PolicyViolation.Code
	}
	p := t.partitions()[index]
	p.mu.Lock()
	defer p.mu.Unlock()
	if code := checkLeader(p.st, cn.b.id, -1); code != 0 {
		return -1, code
	}
	if p.st.Leader() != cn.b.id {
		return -1, kerr.NotLeaderForPartition.Code // a zombie
	}
	var low int64
	var code int16
	p.mutate(func() { low, code = p.st.DeleteRecords(offset) })
	if code == 0 {
		cn.b.c.log.Info("records deleted", "topic", t.name, "partition", index, "log_start_offset", low)
	}
	return low, code
}
