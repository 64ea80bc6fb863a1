package server

// TxnOffsetCommit, versions 0-5 (KIP-447 member checks from v3).
//
// Served by the group coordinator. The group is created if unknown; a
// member id that is not in the group is UNKNOWN_MEMBER_ID, a generation
// other than the group's ILLEGAL_GENERATION, a fenced static member
// FENCED_INSTANCE_ID, and unlike OffsetCommit never REBALANCE_IN_PROGRESS
// (KIP-447). The offsets are written to the group's __consumer_offsets
// partition as a transactional batch of the producer (acks=all) and stay
// pending for that producer until its marker: a commit marker makes them
// the group's committed offsets, an abort drops them. A stale producer
// epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v3).
//
// Under transaction version 2 (v5) the group's partition joins the
// transaction implicitly, as AddOffsetsToTxn would have done.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/coordinator"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleTxnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	fill := func(code func(topic string, partition int32) int16) {
		resp.Topics = resp.Topics[:0]
		for _, rt := range req.Topics {
			st := kmsg.NewTxnOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, code(rt.Topic, rp.Partition)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
	}
	fail := func(code int16) (kmsg.Response, error) {
		if code == kerr.ProducerFenced.Code && req.Version < 3 {
			code = kerr.InvalidProducerEpoch.Code
		}
		fill(func(string, int32) int16 { return code })
		return resp, nil
	}
	switch {
	case !cn.allowedTxn(authorizer.OpWrite, req.TransactionalID):
		return fail(errTxnAuth)
	case !cn.allowedGroup(authorizer.OpRead, req.Group):
		return fail(errGroupAuth)
	case req.Group == "":
		return fail(kerr.InvalidGroupID.Code)
	case req.TransactionalID == "":
		return fail(kerr.InvalidRequest.Code)
	}
	// Topics it may not READ and unknown partitions fail before the
	// coordinator looks at the producer or member, as in Kafka; if nothing
	// is left, the coordinator is not asked at all.
	pre := map[topicPartition]int16{}
	left := false
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			switch {
			case !cn.allowedTopic(authorizer.OpRead, rt.Topic):
				pre[topicPartition{rt.Topic, rp.Partition}] = errTopicAuth
			case c.partition(rt.Topic, rp.Partition) == nil:
				pre[topicPartition{rt.Topic, rp.Partition}] = kerr.UnknownTopicOrPartition.Code
			default:
				left = true
			}
		}
	}
	if !left && len(pre) > 0 {
		fill(func(topic string, partition int32) int16 { return pre[topicPartition{topic, partition}] })
		return resp, nil
	}
	g, code := c.group(cn.b.id, req.Group, true)
	if code != 0 {
		return fail(code)
	}
	generation := int32(-1)
	if req.Version >= 3 {
		generation = req.Generation
		g.Mu.Lock()
		code = checkTxnCommit(g, req.MemberID, generation, req.InstanceID)
		g.Mu.Unlock()
		if code != 0 {
			return fail(code)
		}
	}
	if req.Version >= 5 && c.txnVersion2() {
		tp, code := c.offsetsPartitionOf(req.Group)
		if code == 0 {
			// No retry: Kafka's group coordinator verifies through
			// ReplicaManager.maybeSendPartitionToTransactionCoordinator,
			// which answers CONCURRENT_TRANSACTIONS at once (only the
			// Produce path retries it), and the client retries.
			code = c.addTxnPartitionsImplicitly(req.TransactionalID, req.ProducerID, req.ProducerEpoch, []transaction.Partition{tp}, 0)
		}
		if code != 0 {
			return fail(code)
		}
	}

	now := c.now().UnixMilli()
	var recs []coordinatorRecord
	codes := map[topicPartition]int16{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tp := topicPartition{rt.Topic, rp.Partition}
			switch {
			case !cn.allowedTopic(authorizer.OpRead, rt.Topic):
				codes[tp] = errTopicAuth
			case c.partition(rt.Topic, rp.Partition) == nil:
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case rp.Metadata != nil && len(*rp.Metadata) > offsetMetadataMaxBytes:
				codes[tp] = kerr.OffsetMetadataTooLarge.Code
			default:
				o := committedOffset{Offset: rp.Offset, LeaderEpoch: -1, Timestamp: now}
				if req.Version >= 2 {
					o.LeaderEpoch = rp.LeaderEpoch
				}
				if rp.Metadata != nil {
					o.Metadata = *rp.Metadata
				}
				recs = append(recs, coordinatorRecord{Key: recordKey{Group: req.Group, Topic: rt.Topic, Partition: rp.Partition}, Value: o})
			}
		}
	}
	written := int16(0)
	if len(recs) > 0 {
		g.WriteMu.Lock()
		written = g.WriteAs(recs, coordinator.Producer{ID: req.ProducerID, Epoch: req.ProducerEpoch})
		g.WriteMu.Unlock()
		if written == kerr.ProducerFenced.Code && req.Version < 3 {
			written = kerr.InvalidProducerEpoch.Code
		}
	}
	fill(func(topic string, partition int32) int16 {
		if code, ok := codes[topicPartition{topic, partition}]; ok {
			return code
		}
		return written
	})
	return resp, nil
}

// checkTxnCommit is KIP-447's check of a transactional offset commit's
// member: like an offset commit's, but a rebalance in progress does not
// refuse it. Callers hold g.Mu.
func checkTxnCommit(g *group, memberID string, generation int32, instanceID *string) int16 {
	if m := g.ConsumerMember(memberID); m != nil {
		return grp.CheckMemberEpoch(m, generation)
	}
	if code, ok := streamsCommit(g, memberID, generation); ok {
		return code
	}
	code := g.CheckCommit(memberID, generation, instanceID)
	if code == kerr.RebalanceInProgress.Code {
		return 0
	}
	return code
}

// offsetsPartitionOf is the __consumer_offsets partition of a group, the
// partition AddOffsetsToTxn adds to a transaction.
func (c *Cluster) offsetsPartitionOf(groupID string) (transaction.Partition, int16) {
	sh, err := c.coord.ShardFor(groupID)
	if err != nil {
		return transaction.Partition{}, kerr.CoordinatorNotAvailable.Code
	}
	return transaction.Partition{Topic: offsetsTopic, Partition: sh.Index()}, 0
}
