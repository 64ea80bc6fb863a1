package server

// WriteTxnMarkers, versions 0-2: what a transaction coordinator sends a
// partition leader to end a transaction there. fakekafka's coordinators
// write their markers in-process (txn_markers.go), but the API is served on
// the wire too, for tools and tests. Per partition: unknown topic or
// partition UNKNOWN_TOPIC_OR_PARTITION, not the leader
// NOT_LEADER_OR_FOLLOWER, a producer epoch older than the partition's
// INVALID_PRODUCER_EPOCH, a coordinator epoch older than the last marker's
// TRANSACTION_COORDINATOR_FENCED; otherwise the marker is appended with
// acks=all and answered once committed.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleWriteTxnMarkers(req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	// Brokers (CLUSTER_ACTION), or an admin with ALTER on the cluster:
	// kafka-transactions.sh abort writes markers itself (KIP-664).
	denied := !cn.allowedCluster(authorizer.OpAlter) && !cn.allowedCluster(authorizer.OpClusterAction)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, index := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = index
				p := c.partition(t.Topic, index)
				switch {
				case denied:
					rp.ErrorCode = errClusterAuth
				case p == nil:
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				default:
					rp.ErrorCode = c.appendMarker(p, cn.b.id, txnMarker{m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, m.TransactionVersion})
					if rp.ErrorCode == 0 {
						c.emitTxnMarker("", transaction.Partition{Topic: t.Topic, Partition: index}, m.ProducerID, m.ProducerEpoch, m.Committed)
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}
