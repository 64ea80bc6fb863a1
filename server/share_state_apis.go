package server

// The share-state APIs of KIP-932, which a share partition's leader sends
// to the share coordinator (Kafka 4.4 advertises them on every broker
// listener, like any broker API): InitializeShareGroupState (83, v0),
// ReadShareGroupState (84, v0), WriteShareGroupState (85, v0-1),
// DeleteShareGroupState (86, v0), ReadShareGroupStateSummary (87, v0-1).
//
// Each needs CLUSTER_ACTION on the cluster (else every partition answers
// CLUSTER_AUTHORIZATION_FAILED). Each partition goes to the shard of its
// key "group:topicId:partition" on this broker: NOT_COORDINATOR when this
// broker does not lead that __share_group_state partition,
// COORDINATOR_NOT_AVAILABLE when nobody does or the write could not be
// replicated (acks=all, min.insync.replicas). The shard's own answers:
// INVALID_REQUEST for a negative partition or epoch and for a read or
// write of a share partition never initialized, FENCED_LEADER_EPOCH and
// FENCED_STATE_EPOCH for stale epochs, UNKNOWN_TOPIC_OR_PARTITION for a
// topic id (or partition) the cluster does not have. As in Kafka, an
// empty group id, no topics (or, for Read, Write, Delete and Summary, a
// topic without partitions) get an empty answer. Results come per topic in
// the order first named, partitions ascending and once each.

import (
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sharePartitions gathers the partitions of a share-state request: per
// topic id in the order first named, each partition once, ascending, with
// the last entry for it winning (as Kafka's maps keyed by them do).
type sharePartitions[P any] struct {
	topics [][16]byte
	parts  map[[16]byte]map[int32]P
}

func (s *sharePartitions[P]) add(topic [16]byte, partition int32, p P) {
	if s.parts == nil {
		s.parts = map[[16]byte]map[int32]P{}
	}
	if s.parts[topic] == nil {
		s.topics = append(s.topics, topic)
		s.parts[topic] = map[int32]P{}
	}
	s.parts[topic][partition] = p
}

// each runs f for every partition in answer order; newTopic runs before a
// topic's first partition.
func (s *sharePartitions[P]) each(newTopic func(topic [16]byte), f func(topic [16]byte, partition int32, p P)) {
	for _, t := range s.topics {
		newTopic(t)
		ps := make([]int32, 0, len(s.parts[t]))
		for p := range s.parts[t] {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		for _, p := range ps {
			f(t, p, s.parts[t][p])
		}
	}
}

// shareStateDenied is the code every partition gets, or 0 when the
// connection may act as a share partition leader.
func (cn *conn) shareStateDenied() int16 {
	if cn.allowedCluster(authorizer.OpClusterAction) {
		return 0
	}
	return kerr.ClusterAuthorizationFailed.Code
}

func shareErrMsg(code int16) *string {
	if code == 0 {
		return nil
	}
	m := share.ErrorMessage(code)
	return &m
}

func (cn *conn) handleInitializeShareGroupState(req *kmsg.InitializeShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	denied := cn.shareStateDenied()
	if denied == 0 && (req.GroupID == "" || len(req.Topics) == 0) {
		return resp, nil
	}
	var ps sharePartitions[kmsg.InitializeShareGroupStateRequestTopicPartition]
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ps.add(t.TopicID, p.Partition, p)
		}
	}
	ps.each(func(topic [16]byte) {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = topic
		resp.Topics = append(resp.Topics, rt)
	}, func(topic [16]byte, partition int32, p kmsg.InitializeShareGroupStateRequestTopicPartition) {
		rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
		rp.Partition = partition
		if denied != 0 {
			rp.ErrorCode, rp.ErrorMessage = denied, shareErrMsg(denied)
		} else {
			r := cn.b.c.shareInitialize(cn.b.id, share.Key{Group: req.GroupID, TopicID: topic, Partition: partition}, p.StateEpoch, p.StartOffset)
			rp.ErrorCode, rp.ErrorMessage = r.Code, r.Message
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	})
	return resp, nil
}

func (cn *conn) handleReadShareGroupState(req *kmsg.ReadShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	denied := cn.shareStateDenied()
	if denied == 0 && (req.GroupID == "" || len(req.Topics) == 0 || slices.ContainsFunc(req.Topics, func(t kmsg.ReadShareGroupStateRequestTopic) bool { return len(t.Partitions) == 0 })) {
		return resp, nil
	}
	var ps sharePartitions[kmsg.ReadShareGroupStateRequestTopicPartition]
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ps.add(t.TopicID, p.Partition, p)
		}
	}
	ps.each(func(topic [16]byte) {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = topic
		resp.Topics = append(resp.Topics, rt)
	}, func(topic [16]byte, partition int32, p kmsg.ReadShareGroupStateRequestTopicPartition) {
		rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
		rp.Partition = partition
		if denied != 0 {
			rp.ErrorCode, rp.ErrorMessage = denied, shareErrMsg(denied)
		} else {
			r := cn.b.c.shareRead(cn.b.id, share.Key{Group: req.GroupID, TopicID: topic, Partition: partition}, p.LeaderEpoch)
			rp.ErrorCode, rp.ErrorMessage = r.Code, r.Message
			if r.Code == 0 {
				rp.StateEpoch, rp.StartOffset = r.Offset.StateEpoch, r.Offset.StartOffset
				for _, b := range r.Offset.Batches {
					rb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					rb.FirstOffset, rb.LastOffset, rb.DeliveryState, rb.DeliveryCount = b.FirstOffset, b.LastOffset, int8(b.DeliveryState), b.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, rb)
				}
			}
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	})
	return resp, nil
}

func (cn *conn) handleWriteShareGroupState(req *kmsg.WriteShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	denied := cn.shareStateDenied()
	if denied == 0 && (req.GroupID == "" || len(req.Topics) == 0 || slices.ContainsFunc(req.Topics, func(t kmsg.WriteShareGroupStateRequestTopic) bool { return len(t.Partitions) == 0 })) {
		return resp, nil
	}
	var ps sharePartitions[kmsg.WriteShareGroupStateRequestTopicPartition]
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ps.add(t.TopicID, p.Partition, p)
		}
	}
	ps.each(func(topic [16]byte) {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = topic
		resp.Topics = append(resp.Topics, rt)
	}, func(topic [16]byte, partition int32, p kmsg.WriteShareGroupStateRequestTopicPartition) {
		rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
		rp.Partition = partition
		if denied != 0 {
			rp.ErrorCode, rp.ErrorMessage = denied, shareErrMsg(denied)
		} else {
			w := share.WriteState{StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset, DeliveryCompleteCount: p.DeliveryCompleteCount}
			if req.Version < 1 {
				w.DeliveryCompleteCount = -1 // the field's default, not sent before v1
			}
			for _, b := range p.StateBatches {
				w.Batches = append(w.Batches, share.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset,
					DeliveryState: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
			}
			r := cn.b.c.shareWrite(cn.b.id, share.Key{Group: req.GroupID, TopicID: topic, Partition: partition}, w)
			rp.ErrorCode, rp.ErrorMessage = r.Code, r.Message
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	})
	return resp, nil
}

func (cn *conn) handleDeleteShareGroupState(req *kmsg.DeleteShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	denied := cn.shareStateDenied()
	if denied == 0 && (req.GroupID == "" || len(req.Topics) == 0 || slices.ContainsFunc(req.Topics, func(t kmsg.DeleteShareGroupStateRequestTopic) bool { return len(t.Partitions) == 0 })) {
		return resp, nil
	}
	var ps sharePartitions[struct{}]
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ps.add(t.TopicID, p.Partition, struct{}{})
		}
	}
	ps.each(func(topic [16]byte) {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = topic
		resp.Topics = append(resp.Topics, rt)
	}, func(topic [16]byte, partition int32, _ struct{}) {
		rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
		rp.Partition = partition
		if denied != 0 {
			rp.ErrorCode, rp.ErrorMessage = denied, shareErrMsg(denied)
		} else {
			r := cn.b.c.shareDelete(cn.b.id, share.Key{Group: req.GroupID, TopicID: topic, Partition: partition})
			rp.ErrorCode, rp.ErrorMessage = r.Code, r.Message
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	})
	return resp, nil
}

func (cn *conn) handleReadShareGroupStateSummary(req *kmsg.ReadShareGroupStateSummaryRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	denied := cn.shareStateDenied()
	if denied == 0 && (req.GroupID == "" || len(req.Topics) == 0 || slices.ContainsFunc(req.Topics, func(t kmsg.ReadShareGroupStateSummaryRequestTopic) bool { return len(t.Partitions) == 0 })) {
		return resp, nil
	}
	var ps sharePartitions[struct{}]
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ps.add(t.TopicID, p.Partition, struct{}{})
		}
	}
	ps.each(func(topic [16]byte) {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = topic
		resp.Topics = append(resp.Topics, rt)
	}, func(topic [16]byte, partition int32, _ struct{}) {
		rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
		rp.Partition = partition
		if denied != 0 {
			rp.ErrorCode, rp.ErrorMessage = denied, shareErrMsg(denied)
		} else {
			r := cn.b.c.shareReadSummary(cn.b.id, share.Key{Group: req.GroupID, TopicID: topic, Partition: partition})
			rp.ErrorCode, rp.ErrorMessage = r.Code, r.Message
			if r.Code == 0 {
				o := r.Offset
				rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset, rp.DeliveryCompleteCount = o.StateEpoch, o.LeaderEpoch, o.StartOffset, o.DeliveryCompleteCount
			}
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	})
	return resp, nil
}
