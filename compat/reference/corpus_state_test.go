package reference

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Stateful corpus cases, sent in order after the others: a transaction
// through every transactional API (InitProducerId with a transactional id,
// AddPartitionsToTxn in its client form and the v4+ batch form, a
// transactional Produce, AddOffsetsToTxn, TxnOffsetCommit,
// DescribeTransactions, ListTransactions, DescribeProducers, EndTxn), and a
// KIP-848 member's life (ConsumerGroupHeartbeat, ConsumerGroupDescribe).
// Each case may wait for a condition first and keep what its answer says
// for the next ones.

const (
	corpusTxn   = "corpus-txn"
	corpusGroup = "cg-848"
)

// versionsOf is min and max (both, or one when they are equal) of API key
// in the common range, or nothing when one cluster lacks it.
func versionsOf(versions map[int16][2]int16, k kmsg.Key) []int16 {
	vr, ok := versions[k.Int16()]
	if !ok || vr[0] > vr[1] {
		return nil
	}
	if vr[0] == vr[1] {
		return []int16{vr[0]}
	}
	return []int16{vr[0], vr[1]}
}

// allVersionsOf is every version of k both clusters serve.
func allVersionsOf(versions map[int16][2]int16, k kmsg.Key) []int16 {
	vr, ok := versions[k.Int16()]
	if !ok {
		return nil
	}
	var out []int16
	for v := vr[0]; v <= vr[1]; v++ {
		out = append(out, v)
	}
	return out
}

func txnCases(versions map[int16][2]int16) []corpusCase {
	var out []corpusCase
	ver := func(k kmsg.Key) []int16 { return versionsOf(versions, k) }
	every := func(k kmsg.Key) []int16 { return allVersionsOf(versions, k) }
	newest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	if len(ver(kmsg.InitProducerID)) == 0 || len(ver(kmsg.AddPartitionsToTxn)) == 0 || len(ver(kmsg.EndTxn)) == 0 {
		return nil
	}
	out = append(out, corpusCase{
		name: "InitProducerID/transactional-again", txnID: corpusTxn, settle: firstInit,
		req: func(*corpusEnv) kmsg.Request {
			req := at(newest(kmsg.InitProducerID), kmsg.NewPtrInitProducerIDRequest())
			req.TransactionalID = kmsg.StringPtr(corpusTxn)
			req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
			return req
		},
		after: func(e *corpusEnv, resp kmsg.Response) {
			r := resp.(*kmsg.InitProducerIDResponse)
			e.pid, e.epoch = r.ProducerID, r.ProducerEpoch
		},
	})
	clientForm := func(v int16, parts ...int32) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrAddPartitionsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = corpusTxn, e.pid, e.epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "corpus", parts
			req.Topics = append(req.Topics, rt)
			return req
		}
	}
	for _, v := range every(kmsg.AddPartitionsToTxn) {
		if v <= 3 {
			out = append(out, corpusCase{name: fmt.Sprintf("AddPartitionsToTxn/v%d", v), txnID: corpusTxn, req: clientForm(v, 0)})
		}
	}
	if newest(kmsg.AddPartitionsToTxn) > 3 {
		out = append(out, corpusCase{name: "AddPartitionsToTxn/v3-second-partition", txnID: corpusTxn, req: clientForm(3, 0, 1)})
	}
	pv := min(11, newest(kmsg.Produce))
	out = append(out, corpusCase{name: fmt.Sprintf("Produce/v%d-transactional", pv), req: func(e *corpusEnv) kmsg.Request {
		req := produceReq(pv, "corpus", 0, -1, txnBatch(e.pid, e.epoch, 0, "x0", "x1"))
		req.TransactionID = kmsg.StringPtr(corpusTxn)
		return req
	}})
	for _, v := range every(kmsg.AddPartitionsToTxn) {
		if v < 4 {
			continue
		}
		batchForm := func(id string, verifyOnly bool, parts ...int32) func(e *corpusEnv) kmsg.Request {
			return func(e *corpusEnv) kmsg.Request {
				req := at(v, kmsg.NewPtrAddPartitionsToTxnRequest())
				tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
				tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, e.pid, e.epoch, verifyOnly
				tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
				tt.Topic, tt.Partitions = "corpus", parts
				tx.Topics = append(tx.Topics, tt)
				req.Transactions = append(req.Transactions, tx)
				return req
			}
		}
		out = append(out,
			corpusCase{name: fmt.Sprintf("AddPartitionsToTxn/v%d-batch-verify-only", v), txnID: corpusTxn, req: batchForm(corpusTxn, true, 0, 2)},
			corpusCase{name: fmt.Sprintf("AddPartitionsToTxn/v%d-batch-unknown-transactional-id", v), txnID: "no-such-txn", req: batchForm("no-such-txn", false, 0)},
		)
	}
	for _, v := range every(kmsg.AddOffsetsToTxn) {
		out = append(out, corpusCase{name: fmt.Sprintf("AddOffsetsToTxn/v%d", v), txnID: corpusTxn, req: func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrAddOffsetsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = corpusTxn, e.pid, e.epoch, "cg-txn"
			return req
		}})
	}
	for _, v := range every(kmsg.TxnOffsetCommit) {
		out = append(out, corpusCase{name: fmt.Sprintf("TxnOffsetCommit/v%d", v), group: "cg-txn", req: func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrTxnOffsetCommitRequest())
			req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = corpusTxn, "cg-txn", e.pid, e.epoch
			req.Generation = -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = 0, int64(3+v), -1, kmsg.StringPtr("m")
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return withCorpusIDs(e, req)
		}})
	}
	describe := func(v int16) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeTransactionsRequest())
			req.TransactionalIDs = []string{corpusTxn, "no-such-txn"}
			return req
		}
	}
	for _, v := range ver(kmsg.DescribeTransactions) {
		out = append(out, corpusCase{name: fmt.Sprintf("DescribeTransactions/v%d-ongoing", v), txnID: corpusTxn, req: describe(v)})
	}
	for _, v := range every(kmsg.ListTransactions) {
		out = append(out, corpusCase{name: fmt.Sprintf("ListTransactions/v%d", v), txnID: corpusTxn, req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrListTransactionsRequest())
			req.StateFilters = []string{"Ongoing"}
			if v >= 1 {
				req.DurationFilterMillis = -1
			}
			if v >= 2 {
				req.TransactionalIDPattern = kmsg.StringPtr("corpus-.*")
			}
			return req
		}})
	}
	for _, v := range ver(kmsg.DescribeProducers) {
		out = append(out, corpusCase{name: fmt.Sprintf("DescribeProducers/v%d", v), req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeProducersRequest())
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{0, 9}
			req.Topics = append(req.Topics, rt)
			return req
		}})
	}
	end := func(v int16, id string, epochDelta int16, commit bool) func(*corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrEndTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, e.pid, e.epoch+epochDelta, commit
			return req
		}
	}
	ev := ver(kmsg.EndTxn)
	// The client form a producer that added partitions with v3 ends with.
	commitV := min(4, ev[len(ev)-1])
	out = append(out,
		corpusCase{name: fmt.Sprintf("EndTxn/v%d-wrong-epoch", ev[0]), txnID: corpusTxn, req: end(ev[0], corpusTxn, 5, true)},
	)
	for _, v := range every(kmsg.EndTxn) {
		out = append(out, corpusCase{name: fmt.Sprintf("EndTxn/v%d-unknown-transactional-id", v), txnID: "no-such-txn", req: end(v, "no-such-txn", 0, true)})
	}
	out = append(out, corpusCase{name: fmt.Sprintf("EndTxn/v%d-commit", commitV), txnID: corpusTxn, req: end(commitV, corpusTxn, 0, true)})
	complete := func(r *run, e *corpusEnv) {
		r.waitFor("the transaction's markers", func() bool {
			resp := r.do(r.txnCoordinator(corpusTxn), describe(0)(e)).(*kmsg.DescribeTransactionsResponse)
			for _, s := range resp.TransactionStates {
				if s.TransactionalID == corpusTxn {
					return s.State == "CompleteCommit"
				}
			}
			return false
		})
	}
	out = append(out,
		corpusCase{name: fmt.Sprintf("EndTxn/v%d-commit-retried", commitV), txnID: corpusTxn, settle: complete, req: end(commitV, corpusTxn, 0, true)},
		corpusCase{name: fmt.Sprintf("EndTxn/v%d-abort-after-commit", commitV), txnID: corpusTxn, req: end(commitV, corpusTxn, 0, false)},
	)
	if len(ver(kmsg.DescribeTransactions)) > 0 {
		out = append(out, corpusCase{name: "DescribeTransactions/complete-commit", txnID: corpusTxn, req: describe(newest(kmsg.DescribeTransactions))})
	}
	return out
}

// firstInit initialises corpus-txn, retrying as a client does while its
// coordinator loads; the case then sends InitProducerId again (epoch 1).
func firstInit(r *run, e *corpusEnv) {
	r.initTxn(corpusTxn, time.Minute)
	txnReady("no-such-txn")(r, e)
}

// txnReady waits until the coordinators of ids have loaded their
// __transaction_state partitions (Kafka creates the topic on the first
// FindCoordinator and answers NOT_COORDINATOR until then).
func txnReady(ids ...string) func(r *run, e *corpusEnv) {
	return func(r *run, e *corpusEnv) {
		for _, id := range ids {
			r.waitFor("the coordinator of "+id, func() bool {
				req := at(0, kmsg.NewPtrDescribeTransactionsRequest())
				req.TransactionalIDs = []string{id}
				resp := r.do(r.txnCoordinator(id), req).(*kmsg.DescribeTransactionsResponse)
				return !retriable(resp.TransactionStates[0].ErrorCode)
			})
		}
	}
}

func txnBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	return simpleBatchWith(pid, epoch, seq, 0x10, values...)
}

func consumerGroupCases(versions map[int16][2]int16) []corpusCase {
	hv := versionsOf(versions, kmsg.ConsumerGroupHeartbeat)
	if len(hv) == 0 {
		return nil
	}
	first, newest := hv[0], hv[len(hv)-1]
	heartbeat := func(v int16, edit func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest)) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrConsumerGroupHeartbeatRequest())
			req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = corpusGroup, e.memberID, e.member, -1
			edit(e, req)
			return req
		}
	}
	join := func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) {
		req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "", 0, 6000
		req.SubscribedTopicNames, req.Topics = []string{"corpus"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	keep := func(e *corpusEnv, resp kmsg.Response) {
		r := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
		if r.ErrorCode == 0 && r.MemberID != nil {
			e.memberID, e.member = *r.MemberID, r.MemberEpoch
		}
	}
	describe := func(v int16) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrConsumerGroupDescribeRequest())
			req.Groups = []string{corpusGroup}
			return req
		}
	}
	g := corpusGroup
	out := []corpusCase{
		{name: fmt.Sprintf("ConsumerGroupHeartbeat/v%d-join", first), group: g, req: heartbeat(first, join), after: keep},
		{name: fmt.Sprintf("ConsumerGroupHeartbeat/v%d-heartbeat", newest), group: g, after: keep,
			req: heartbeat(newest, func(*corpusEnv, *kmsg.ConsumerGroupHeartbeatRequest) {})},
		{name: "ConsumerGroupHeartbeat/fenced-member-epoch", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) { req.MemberEpoch = e.member + 10 })},
		{name: "ConsumerGroupHeartbeat/unknown-member-id", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) { req.MemberID = "AAAAAAAAAAAAAAAAAAAAAA" })},
		{name: "ConsumerGroupHeartbeat/unknown-group-nonzero-epoch", group: "corpus-no-such-consumer-group",
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) {
				req.Group, req.MemberID, req.MemberEpoch = "corpus-no-such-consumer-group", "AAAAAAAAAAAAAAAAAAAAAA", 5
			})},
		{name: "ConsumerGroupHeartbeat/join-unsupported-assignor", group: g,
			req: heartbeat(first, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) {
				join(e, req)
				req.ServerAssignor = kmsg.StringPtr("no-such-assignor")
			})},
		{name: "ConsumerGroupHeartbeat/join-without-subscription", group: g,
			req: heartbeat(first, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) {
				join(e, req)
				req.SubscribedTopicNames = nil
			})},
	}
	if newest >= 1 {
		out = append(out, corpusCase{name: fmt.Sprintf("ConsumerGroupHeartbeat/v%d-join-without-member-id", newest), group: g,
			req: heartbeat(newest, join)})
	}
	for _, v := range versionsOf(versions, kmsg.ConsumerGroupDescribe) {
		out = append(out, corpusCase{name: fmt.Sprintf("ConsumerGroupDescribe/v%d-one-member", v), group: g, req: describe(v)})
	}
	out = append(out,
		corpusCase{name: "ConsumerGroupHeartbeat/leave", group: g,
			req: heartbeat(newest, func(e *corpusEnv, req *kmsg.ConsumerGroupHeartbeatRequest) { req.MemberEpoch = -1 })},
		corpusCase{name: "ConsumerGroupHeartbeat/after-leave", group: g,
			req: heartbeat(newest, func(*corpusEnv, *kmsg.ConsumerGroupHeartbeatRequest) {})},
		corpusCase{name: "ConsumerGroupDescribe/after-leave", group: g, req: describe(versions[kmsg.ConsumerGroupDescribe.Int16()][1])},
	)
	return out
}
