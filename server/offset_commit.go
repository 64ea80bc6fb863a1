package server

// OffsetCommit, versions 2-10 (v10 names topics by id: offsets_topic_ids.go;
// Kafka 4.0 removed v0-1, KIP-896).
//
// The commit is checked against the group's membership (generation and
// member id: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS,
// FENCED_INSTANCE_ID; a commit with generation -1 is accepted only while
// the group has no members; a generation for a group that does not exist
// is ILLEGAL_GENERATION, GROUP_ID_NOT_FOUND from v9), each partition must exist
// (UNKNOWN_TOPIC_OR_PARTITION) and its metadata fit offset.metadata.max.bytes
// (OFFSET_METADATA_TOO_LARGE). The offsets are written to the group's
// __consumer_offsets partition with acks=all and answered once committed,
// so they survive a coordinator crash; a failed write answers
// NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE as Kafka's coordinator does.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetMetadataMaxBytes is offset.metadata.max.bytes.
const offsetMetadataMaxBytes = 4096

func (cn *conn) handleOffsetCommit(req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	fail := func(code int16) (kmsg.Response, error) {
		for _, rt := range req.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		return fail(errGroupAuth)
	}
	if req.Group == "" {
		return fail(kerr.InvalidGroupID.Code)
	}
	generation := int32(-1)
	if req.Version >= 1 {
		generation = req.Generation
	}
	g, code := c.group(cn.b.id, req.Group, generation < 0)
	if code == 0 && g == nil { // a member of a group that does not exist
		code = kerr.IllegalGeneration.Code // as Kafka answers before v9
		if req.Version >= 9 {
			code = kerr.GroupIDNotFound.Code
		}
	}
	if code == 0 {
		g.Mu.Lock()
		if m := g.ConsumerMember(req.MemberID); m != nil {
			code = grp.CheckMemberEpoch(m, generation)
		} else if sc, ok := streamsCommit(g, req.MemberID, generation); ok {
			code = sc
		} else {
			code = g.CheckCommit(req.MemberID, generation, req.InstanceID)
		}
		g.Mu.Unlock()
	}
	if code != 0 {
		return fail(code)
	}

	now := c.now().UnixMilli()
	var recs []coordinatorRecord
	var written []*kmsg.OffsetCommitResponseTopicPartition
	resp.Topics = make([]kmsg.OffsetCommitResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.OffsetCommitResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			switch {
			case !cn.allowedTopic(authorizer.OpRead, rt.Topic):
				sp.ErrorCode = errTopicAuth
			case c.partition(rt.Topic, rp.Partition) == nil:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case rp.Metadata != nil && len(*rp.Metadata) > offsetMetadataMaxBytes:
				sp.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			default:
				o := committedOffset{Offset: rp.Offset, LeaderEpoch: -1, Timestamp: now}
				if req.Version >= 6 {
					o.LeaderEpoch = rp.LeaderEpoch
				}
				if rp.Metadata != nil {
					o.Metadata = *rp.Metadata
				}
				if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
					o.ExpireTimestamp = now + req.RetentionTimeMillis // KIP-211's old semantics
				}
				recs = append(recs, coordinatorRecord{Key: recordKey{Group: req.Group, Topic: rt.Topic, Partition: rp.Partition}, Value: o})
				written = append(written, sp)
			}
		}
	}
	if len(recs) > 0 {
		// The chaos checker learns the offsets when they are replayed.
		g.ExpiryMu.RLock() // no expiry decides while a commit is written
		code := g.Write(recs)
		g.ExpiryMu.RUnlock()
		for _, sp := range written {
			sp.ErrorCode = code
		}
	}
	return resp, nil
}
