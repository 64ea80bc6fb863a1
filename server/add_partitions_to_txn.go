package server

// AddPartitionsToTxn, versions 0-5: clients (v0-3) add partitions to their
// open transaction; brokers (v4-5, batched by transaction, verify_only)
// check that a partition was added before they accept a transactional
// batch (KIP-890 part 1).
//
// Per transaction: an unknown id or another producer id is
// INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED
// (INVALID_PRODUCER_EPOCH below v2), a transition still being written or a
// transaction still completing CONCURRENT_TRANSACTIONS, and the coordinator
// errors. A partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION and
// the rest OPERATION_NOT_ATTEMPTED. Partitions already in the transaction
// are acknowledged without a write.

import (
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAddPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version < 4 {
		topics := make([]kmsg.AddPartitionsToTxnRequestTransactionTopic, len(req.Topics))
		for i, t := range req.Topics {
			topics[i].Topic, topics[i].Partitions = t.Topic, t.Partitions
		}
		codes := cn.addPartitionsDenied(req.TransactionalID, topics)
		if codes == nil {
			codes = cn.addPartitionsToTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, topics, req.Version)
		}
		for _, t := range req.Topics {
			st := kmsg.NewAddPartitionsToTxnResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[topicPartition{t.Topic, p}]
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	if !cn.allowedCluster(authorizer.OpClusterAction) {
		// v4+ batches come from brokers only.
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	for _, tx := range req.Transactions {
		codes := cn.addPartitionsToTxn(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly, tx.Topics, req.Version)
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = tx.TransactionalID
		for _, t := range tx.Topics {
			st := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				sp.Partition, sp.ErrorCode = p, codes[topicPartition{t.Topic, p}]
				st.Partitions = append(st.Partitions, sp)
			}
			rt.Topics = append(rt.Topics, st)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp, nil
}

// addPartitionsDenied is Kafka's authorization of a client's
// AddPartitionsToTxn: without WRITE on the transactional id every partition
// gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED; else the partitions of topics
// without WRITE get TOPIC_AUTHORIZATION_FAILED, unknown ones
// UNKNOWN_TOPIC_OR_PARTITION and the rest OPERATION_NOT_ATTEMPTED. Nil
// when everything is allowed.
func (cn *conn) addPartitionsDenied(id string, topics []kmsg.AddPartitionsToTxnRequestTransactionTopic) map[topicPartition]int16 {
	txnDenied := !cn.allowedTxn(authorizer.OpWrite, id)
	codes := map[topicPartition]int16{}
	denied := txnDenied
	for _, t := range topics {
		topicDenied := !cn.allowedTopic(authorizer.OpWrite, t.Topic)
		denied = denied || topicDenied
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p}
			switch {
			case txnDenied:
				codes[tp] = errTxnAuth
			case topicDenied:
				codes[tp] = errTopicAuth
			case cn.b.c.partition(t.Topic, p) == nil:
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			default:
				codes[tp] = kerr.OperationNotAttempted.Code
			}
		}
	}
	if !denied {
		return nil
	}
	return codes
}

// addPartitionsToTxn adds (or with verifyOnly checks) one transaction's
// partitions and returns the code of each.
func (cn *conn) addPartitionsToTxn(id string, pid int64, epoch int16, verifyOnly bool, topics []kmsg.AddPartitionsToTxnRequestTransactionTopic, version int16) map[topicPartition]int16 {
	c := cn.b.c
	codes := map[topicPartition]int16{}
	var parts []transaction.Partition
	unknown := false
	for _, t := range topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p}
			if c.partition(t.Topic, p) == nil {
				codes[tp], unknown = kerr.UnknownTopicOrPartition.Code, true
				continue
			}
			parts = append(parts, transaction.Partition{Topic: t.Topic, Partition: p})
		}
	}
	all := func(code int16) map[topicPartition]int16 {
		for _, tp := range parts {
			codes[topicPartition{tp.Topic, tp.Partition}] = code
		}
		return codes
	}
	if unknown {
		return all(kerr.OperationNotAttempted.Code)
	}
	if id == "" {
		return all(kerr.InvalidRequest.Code)
	}
	e, code := c.txnEntry(cn.b.id, id, false)
	if code == 0 && e == nil {
		code = kerr.InvalidProducerIDMapping.Code
	}
	if code != 0 {
		return all(fencedForVersion(code, version, 2))
	}
	if verifyOnly {
		md, _, pending := e.View()
		vc := transaction.VerifyPartitions(md, pending, pid, epoch, parts)
		for i, tp := range parts {
			if vc[i] == kerr.InvalidTxnState.Code {
				vc[i] = kerr.TransactionAbortable.Code // what Kafka's coordinator answers a verification
			}
			codes[topicPartition{tp.Topic, tp.Partition}] = vc[i]
		}
		return codes
	}
	nowMs := c.now().UnixMilli()
	cause := TxnCauseAddPartitions
	if len(topics) == 1 && topics[0].Topic == offsetsTopic {
		cause = TxnCauseAddOffsets // AddOffsetsToTxn adds the group's partition
	}
	_, code = c.txnApply(e, cause, func(cur *transaction.Metadata, pending bool) transaction.Decision {
		if cur == nil {
			return transaction.Decision{Code: kerr.InvalidProducerIDMapping.Code}
		}
		return transaction.AddPartitions(*cur, pending, pid, epoch, parts, nowMs)
	})
	return all(fencedForVersion(code, version, 2))
}

// addPartitionsToTxnRetryBackoffMax is add.partitions.to.txn.retry.backoff.max.ms:
// how long a partition leader retries a transaction version 2 Produce's
// implicit AddPartitionsToTxn that meets CONCURRENT_TRANSACTIONS.
const addPartitionsToTxnRetryBackoffMax = 100 * time.Millisecond

// addTxnPartitionsImplicitly adds partitions to a transaction on behalf of
// the producer, as a transaction version 2 partition leader does for a
// Produce v12+ (and the group coordinator for TxnOffsetCommit v5+, with
// retryFor 0: answered at once). The
// call goes to the id's coordinator in-process. CONCURRENT_TRANSACTIONS
// (another partition's add being written, or the previous transaction's
// markers still going out) is retried each time the transaction changes,
// for up to retryFor on the cluster's clock, then answered: a Produce
// retries for add.partitions.to.txn.retry.backoff.max.ms (100 ms, Kafka
// retrying every 20 ms) and then fails with CONCURRENT_TRANSACTIONS, which
// a transaction version 2 producer retries. Other errors come back as they
// are.
func (c *Cluster) addTxnPartitionsImplicitly(id string, pid int64, epoch int16, parts []transaction.Partition, retryFor time.Duration) int16 {
	deadline := c.cfg.Clock.NewTimer(max(retryFor, 0))
	defer deadline.Stop()
	for {
		e, code := c.coordinatorTxnEntry(id)
		if code != 0 {
			return code
		}
		if e == nil {
			return kerr.InvalidProducerIDMapping.Code
		}
		changed := e.Changes()
		nowMs := c.now().UnixMilli()
		_, code = c.txnApply(e, TxnCauseImplicitAdd, func(cur *transaction.Metadata, pending bool) transaction.Decision {
			if cur == nil {
				return transaction.Decision{Code: kerr.InvalidProducerIDMapping.Code}
			}
			return transaction.AddPartitions(*cur, pending, pid, epoch, parts, nowMs)
		})
		if code != kerr.ConcurrentTransactions.Code || retryFor <= 0 {
			return code
		}
		select {
		case <-changed:
		case <-deadline.C:
			return code
		case <-c.closing:
			return code
		}
	}
}

// verifyTxnPartition checks, for a partition leader about to append a
// transactional batch (transaction version 1), that the partition was
// added to the producer's transaction (KIP-890 part 1).
func (c *Cluster) verifyTxnPartition(id string, pid int64, epoch int16, tp transaction.Partition) int16 {
	e, code := c.coordinatorTxnEntry(id)
	if code != 0 {
		return code
	}
	if e == nil {
		return kerr.InvalidProducerIDMapping.Code
	}
	md, _, _ := e.View()
	return transaction.VerifyPartitions(md, false, pid, epoch, []transaction.Partition{tp})[0]
}

// coordinatorTxnEntry finds id's entry at its current coordinator, for
// brokers that call the coordinator on a client's behalf. nil when unknown.
func (c *Cluster) coordinatorTxnEntry(id string) (*txnEntry, int16) {
	leader, code := c.txnCoordinatorOf(id)
	if code != 0 {
		return nil, code
	}
	return c.txnEntry(leader, id, false)
}
