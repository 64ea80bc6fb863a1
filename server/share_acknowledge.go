package server

// ShareAcknowledge, versions 1-2 (KIP-932; v2 adds renew
// acknowledgements): acknowledgements alone, in the member's share
// session, which it may continue or close (-1) but never open
// (INVALID_SHARE_SESSION_EPOCH for 0). Per partition the
// acknowledgement's error: INVALID_RECORD_STATE for records the member
// does not hold (its lock expired, another member's), UNKNOWN_TOPIC_ID,
// NOT_LEADER_OR_FOLLOWER with the current leader.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleShareAcknowledge(req *kmsg.ShareAcknowledgeRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	fail := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp, nil
	}
	group, member := derefOr(req.GroupID), derefOr(req.MemberID)
	switch {
	case group == "":
		return fail(kerr.InvalidRequest.Code, "Group ID is required.")
	case member == "":
		return fail(kerr.InvalidRequest.Code, "Member ID is required.")
	case !cn.allowedGroup(authorizer.OpRead, group):
		return fail(errGroupAuth, "")
	}
	s, closing, code := cn.updateShareSession(group, member, req.ShareSessionEpoch, sessionAck)
	if code != 0 {
		return fail(code, "") // Kafka: no lock timeout with an error
	}
	if req.Version >= 2 {
		resp.AcquisitionLockTimeoutMillis = int32(c.groupConfig(group).ShareRecordLockDuration.Milliseconds())
	}
	leaders := map[int32]bool{}
	for _, rt := range req.Topics {
		st := kmsg.NewShareAcknowledgeResponseTopic()
		st.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = -1, -1
			batches := make([]share.AckBatch, len(rp.AcknowledgementBatches))
			for i, b := range rp.AcknowledgementBatches {
				batches[i] = share.AckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: ackTypes(b.AcknowledgeTypes)}
			}
			code, hint := cn.shareAcknowledge(group, member, rt.TopicID, rp.Partition, batches, req.Version >= 2 && req.IsRenewAck)
			sp.ErrorCode = code
			if code != 0 {
				msg := kerr.ErrorForCode(code).Error()
				sp.ErrorMessage = &msg
			}
			if hint.LeaderID >= 0 {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = hint.LeaderID, hint.LeaderEpoch
				leaders[hint.LeaderID] = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if closing {
		c.releaseShareMember(group, member, s.keys())
	}
	for id := range leaders {
		if b := c.broker(id); b != nil {
			ne := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
			ne.NodeID = b.id
			ne.Host, ne.Port = cn.advertisedOf(b)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
	}
	return resp, nil
}
