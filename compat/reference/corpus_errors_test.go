package reference

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// errorPathCases sends the error paths the per-API cases do not reach:
// every group API at its oldest and newest version and every
// transactional API to a broker that does not coordinate its key (NOT_COORDINATOR, which every client retries after a new
// FindCoordinator), and unknown resources and bad arguments for the APIs
// whose other cases all succeed. None changes state.
func errorPathCases(versions map[int16][2]int16) []corpusCase {
	has := func(k kmsg.Key) bool { vr, ok := versions[k.Int16()]; return ok && vr[0] <= vr[1] }
	latest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	var out []corpusCase
	for _, k := range []kmsg.Key{kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.JoinGroup,
		kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.SyncGroup, kmsg.DeleteGroups, kmsg.OffsetDelete, kmsg.ConsumerGroupDescribe} {
		if !has(k) {
			continue
		}
		for _, v := range versionsOf(versions, k) {
			if c, ok := validCase(k.Int16(), v); ok && c.group != "" {
				c.name += "-not-coordinator"
				c.wrongBroker = true
				out = append(out, c)
			}
		}
	}
	txn := func(k kmsg.Key, build func(v int16, e *corpusEnv) kmsg.Request) {
		if !has(k) {
			return
		}
		v := latest(k)
		out = append(out, corpusCase{name: fmt.Sprintf("%s/v%d-not-coordinator", kmsg.NameForKey(k.Int16()), v), txnID: corpusTxn, wrongBroker: true,
			req: func(e *corpusEnv) kmsg.Request { return build(v, e) }})
	}
	txn(kmsg.InitProducerID, func(v int16, e *corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrInitProducerIDRequest())
		req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = kmsg.StringPtr(corpusTxn), 60000, -1, -1
		return req
	})
	txn(kmsg.AddOffsetsToTxn, func(v int16, e *corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrAddOffsetsToTxnRequest())
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = corpusTxn, e.pid, e.epoch, "cg-txn"
		return req
	})
	txn(kmsg.EndTxn, func(v int16, e *corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrEndTxnRequest())
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = corpusTxn, e.pid, e.epoch, false
		return req
	})
	txn(kmsg.DescribeTransactions, func(v int16, e *corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrDescribeTransactionsRequest())
		req.TransactionalIDs = []string{corpusTxn}
		return req
	})
	if has(kmsg.AddPartitionsToTxn) {
		out = append(out, corpusCase{name: "AddPartitionsToTxn/v3-not-coordinator", txnID: corpusTxn, wrongBroker: true, req: func(e *corpusEnv) kmsg.Request {
			req := at(3, kmsg.NewPtrAddPartitionsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = corpusTxn, e.pid, e.epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		}})
	}
	if has(kmsg.InitProducerID) {
		v := latest(kmsg.InitProducerID)
		out = append(out, corpusCase{name: fmt.Sprintf("InitProducerID/v%d-timeout-above-max", v), txnID: "corpus-txn-timeout", settle: txnReady("corpus-txn-timeout"),
			req: func(*corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrInitProducerIDRequest())
				req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = kmsg.StringPtr("corpus-txn-timeout"), 1<<30, -1, -1
				return req
			}})
	}
	if has(kmsg.AddOffsetsToTxn) {
		v := latest(kmsg.AddOffsetsToTxn)
		out = append(out, corpusCase{name: fmt.Sprintf("AddOffsetsToTxn/v%d-unknown-transactional-id", v), txnID: "no-such-txn", req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrAddOffsetsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "no-such-txn", 4242, 0, "cg-txn"
			return req
		}})
	}
	if has(kmsg.OffsetDelete) {
		v := latest(kmsg.OffsetDelete)
		out = append(out, corpusCase{name: fmt.Sprintf("OffsetDelete/v%d-unknown-group", v), group: "cg-nobody", req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrOffsetDeleteRequest())
			req.Group = "cg-nobody"
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}})
	}
	if has(kmsg.DescribeGroups) {
		v := latest(kmsg.DescribeGroups)
		out = append(out, corpusCase{name: fmt.Sprintf("DescribeGroups/v%d-unknown-and-empty-id", v), group: "cg-nobody", req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{"cg-nobody", ""}
			return req
		}})
	}
	if has(kmsg.OffsetFetch) {
		v := latest(kmsg.OffsetFetch)
		out = append(out, corpusCase{name: fmt.Sprintf("OffsetFetch/v%d-unknown-topic", v), group: "cg-empty", req: func(*corpusEnv) kmsg.Request {
			req := offsetFetchReq(v, "cg-empty")
			for i := range req.Topics {
				req.Topics[i].Topic = "no-such-topic"
			}
			for i := range req.Groups {
				for j := range req.Groups[i].Topics {
					req.Groups[i].Topics[j].Topic = "no-such-topic"
				}
			}
			return req
		}})
	}
	if has(kmsg.ListPartitionReassignments) {
		v := latest(kmsg.ListPartitionReassignments)
		out = append(out, corpusCase{name: fmt.Sprintf("ListPartitionReassignments/v%d-unknown-topic", v), req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrListPartitionReassignmentsRequest())
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic, rt.Partitions = "no-such-topic", []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		}})
	}
	if has(kmsg.StreamsGroupDescribe) {
		v := latest(kmsg.StreamsGroupDescribe)
		out = append(out, corpusCase{name: fmt.Sprintf("StreamsGroupDescribe/v%d-unknown-group", v), group: "cg-nobody", req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrStreamsGroupDescribeRequest())
			req.Groups = []string{"cg-nobody"}
			return req
		}})
	}
	if has(kmsg.DescribeShareGroupOffsets) {
		v := latest(kmsg.DescribeShareGroupOffsets)
		out = append(out, corpusCase{name: fmt.Sprintf("DescribeShareGroupOffsets/v%d-unknown-group", v), group: "cg-nobody", req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeShareGroupOffsetsRequest())
			g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
			g.GroupID = "cg-nobody"
			req.Groups = append(req.Groups, g)
			return req
		}})
	}
	return out
}
