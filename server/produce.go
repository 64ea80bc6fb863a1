package server

// Produce, versions 3-13 (magic v2 batches only; topic ids from v13,
// produce_topic_ids.go).
//
// Per partition, in Kafka's order: unknown topic or partition, the
// request-level record checks, not the leader (NOT_LEADER_OR_FOLLOWER with
// the KIP-951 leader on v10+), acks=-1 below min.insync.replicas
// (NOT_ENOUGH_REPLICAS), one valid batch (produce_validate.go: Kafka's
// LogValidator, with per-record errors, LogAppendTime and recompression),
// then replication.Partition.Append, which dedupes idempotent retries.
// Every answer carries the log start offset and LogAppendTime where Kafka
// has them; a partition named twice is answered once (produce_dedupe.go).
//
// acks=0 sends no response, and closes the connection if any partition
// failed. acks=1 answers after the leader's append. acks=-1 parks the
// request until every appended partition's HW covers its batch (NONE, or
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below the minimum by
// then), leadership moves (NOT_LEADER_OR_FOLLOWER) or TimeoutMillis passes
// (REQUEST_TIMED_OUT); the records stay in the log in every case.
//
// With the authorizer, before anything else: WRITE on the transactional id
// if one is sent (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition),
// then WRITE on each topic (TOPIC_AUTHORIZATION_FAILED). A producer_byte_rate
// quota records the request's size once it is answered (quotas.go).

import (
	"errors"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceListener hears of every batch a Produce appended, or found to
// be a retry of one appended before, with p.mu held and before the
// response is sent: a chaos run records writes this way (chaos_record.go).
type produceListener interface {
	produced(cn *conn, p *partition, b *replication.Batch, res replication.AppendResult, acks int16, sp *kmsg.ProduceResponseTopicPartition)
}

// parkedProduce is one appended partition of an acks=-1 request.
type parkedProduce struct {
	p        *partition
	epoch    int32
	required int64
	resp     *kmsg.ProduceResponseTopicPartition
	done     bool
}

func (cn *conn) handleProduce(req *kmsg.ProduceRequest) (kmsg.Response, error) {
	c := cn.b.c
	if msg := produceCorruptFrame(req); msg != "" {
		if req.Acks == 0 {
			return nil, errCloseConn
		}
		cn.throttleProduce()
		return produceFrameError(req, msg), nil
	}
	skip, invalid := c.produceDuplicates(req) // nil, nil: no partition twice
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	acksValid := req.Acks == 0 || req.Acks == 1 || req.Acks == -1
	parked := cn.parking.parked[:0]
	defer func() { clear(parked); cn.parking.parked = parked[:0] }() // keep the space, not the partitions
	failed := false
	leaders := map[int32]bool{}
	// Kafka checks the transactional id first, then each topic, and only
	// then acks.
	txnDenied := req.TransactionID != nil && !cn.allowedTxn(authorizer.OpWrite, *req.TransactionID)
	adds := &produceTxnAdds{req: req}

	// One allocation holds every partition's batch: their bytes share the
	// request's frame, which lives as long as any of them anyway.
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	batches := make([]replication.Batch, n)
	k := 0 // the partition entry's index in the request

	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		t, name, idCode := c.produceTopic(req.Version, rt.Topic, rt.TopicID)
		st.Topic, st.TopicID = name, rt.TopicID
		denied := errAuth(txnDenied, errTxnAuth, idCode != 0, idCode)
		if denied == 0 && !cn.allowedTopic(authorizer.OpWrite, name) {
			denied = errTopicAuth
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			k++
			if skip != nil && skip[k-1] {
				continue // a later entry of the same partition is the one appended
			}
			if denied != 0 {
				sp.ErrorCode = denied
				failed = true
				continue
			}
			if !acksValid {
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
				failed = true
				continue
			}
			b := &batches[0]
			batches = batches[1:]
			pp, wait, code := cn.produceTo(t, rp, req, b, sp, leaders, adds)
			if code != 0 {
				sp.ErrorCode = code
				failed = true
				continue
			}
			if wait {
				parked = append(parked, pp)
			}
		}
	}

	switch req.Acks {
	case 0:
		if failed {
			return nil, errCloseConn
		}
		cn.throttleProduce()
		return nil, nil
	case -1:
		if len(parked) > 0 {
			if err := cn.awaitReplication(parked, req.TimeoutMillis, leaders); err != nil {
				return nil, err
			}
		}
	}
	if skip != nil {
		mergeProduceDuplicates(resp, invalid)
	}
	if req.Version >= 10 {
		for id := range leaders {
			if b := c.broker(id); b != nil {
				pb := kmsg.NewProduceResponseBroker()
				pb.NodeID = b.id
				pb.Host, pb.Port = cn.advertisedOf(b)
				resp.Brokers = append(resp.Brokers, pb)
			}
		}
	}
	cn.throttleProduce()
	return resp, nil
}

// produceTo validates and appends one partition's batch, decoded into b.
// For acks=-1 it returns the parked state to wait on, and wait is true.
// A refusal is answered in sp (produce_validate.go has Kafka's rules).
func (cn *conn) produceTo(t *topic, rp *kmsg.ProduceRequestTopicPartition, req *kmsg.ProduceRequest, b *replication.Batch, sp *kmsg.ProduceResponseTopicPartition, leaders map[int32]bool, adds *produceTxnAdds) (pp parkedProduce, wait bool, code int16) {
	c := cn.b.c
	acks := req.Acks
	if t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.partitions()) {
		return pp, false, kerr.UnknownTopicOrPartition.Code
	}
	if r := requestLevelRefusal(req.Version, rp.Records); r != nil {
		c.log.Debug("produce rejected", "topic", t.name, "partition", rp.Partition, "error", kerr.ErrorForCode(r.code), "reason", r.reason)
		return pp, false, r.code
	}
	p := t.partitions()[rp.Partition]
	settings := t.cfg()
	now := c.now()
	// The batch's own checks and rewrites need no lock; the leader and ISR
	// checks, which Kafka makes first, take precedence over their refusal.
	checkNow := max(now.UnixMilli(), time.Now().UnixMilli()) // see produce_validate.go
	refusal := validateProduced(rp.Records, settings, partitionName{t.name, rp.Partition}, now.UnixMilli(), checkNow, b)
	if refusal == nil && b.Transactional && req.TransactionID != nil && !p.txnOngoingHere(cn.b.id, b.ProducerID, b.ProducerEpoch) {
		if code, msg := cn.checkTxnProduce(*req.TransactionID, req.Version, b, t.name, rp.Partition, adds); code != 0 {
			refusal = refuseProduce(code, false, msg)
			if msg != "" && req.Version >= 8 {
				refusal.message = msg
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if code := checkLeader(p.st, cn.b.id, -1); code != 0 {
		cn.setProduceLeaderHint(p, sp, leaders)
		return pp, false, code
	}
	logStart := func() int64 {
		if r := p.st.Replica(cn.b.id); r != nil {
			return r.LogStartOffset()
		}
		return -1
	}
	if acks == -1 && p.st.UnderMinISR() {
		sp.LogStartOffset = logStart()
		return pp, false, kerr.NotEnoughReplicas.Code
	}
	if refusal != nil {
		c.log.Debug("produce rejected", "topic", t.name, "partition", rp.Partition, "error", kerr.ErrorForCode(refusal.code), "reason", refusal.reason)
		if refusal.logStart {
			sp.LogStartOffset = logStart()
		}
		if refusal.message != "" {
			sp.ErrorMessage = &refusal.message
		}
		sp.ErrorRecords = refusal.records
		return pp, false, refusal.code
	}
	var res replication.AppendResult
	p.mutate(func() { res, code = p.st.AppendAs(cn.b.id, b, acks, now) })
	if code != 0 {
		if code != kerr.NotLeaderForPartition.Code {
			sp.LogStartOffset = logStart()
		}
		return pp, false, code
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogStartOffset = res.LogStartOffset
	switch {
	case res.Duplicate:
		sp.LogAppendTime = res.Timestamp // Kafka answers the stored batch's max timestamp
	case settings.logAppendTime:
		sp.LogAppendTime = b.MaxTimestamp
	}
	if l := c.produceListener.Load(); l != nil {
		(*l).produced(cn, p, b, res, acks, sp)
	}
	if acks != -1 {
		return pp, false, 0
	}
	_, epoch := p.st.ViewLeader(cn.b.id)
	return parkedProduce{p: p, epoch: epoch, required: res.Required, resp: sp}, true, 0
}

// setProduceLeaderHint fills the KIP-951 current leader (v10+ only;
// older versions ignore the tagged field). Callers hold p.mu.
func (cn *conn) setProduceLeaderHint(p *partition, sp *kmsg.ProduceResponseTopicPartition, leaders map[int32]bool) {
	if id, epoch, ok := leaderHint(p.st); ok {
		sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = id, epoch
		leaders[id] = true
	}
}

func batchErrorCode(err error) int16 {
	switch {
	case errors.Is(err, protocol.ErrUnsupportedMagic):
		return kerr.UnsupportedForMessageFormat.Code
	case errors.Is(err, protocol.ErrUnsupportedCompression):
		return kerr.UnsupportedCompressionType.Code
	case errors.Is(err, protocol.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	}
	return kerr.CorruptMessage.Code
}

// awaitReplication parks an acks=-1 request (Kafka's DelayedProduce) until
// every partition completes or the timeout expires. It waits on the
// partitions' change signals, never by polling.
func (cn *conn) awaitReplication(parked []parkedProduce, timeoutMillis int32, leaders map[int32]bool) error {
	c := cn.b.c
	wake, timer := cn.park(time.Duration(max(timeoutMillis, 0)) * time.Millisecond)
	defer timer.Stop()
	for i := range parked {
		p := parked[i].p
		p.mu.Lock()
		p.watch(wake)
		p.mu.Unlock()
	}
	defer func() {
		for i := range parked {
			parked[i].p.unwatch(wake)
		}
	}()
	for {
		pending := 0
		for i := range parked {
			pp := &parked[i]
			if pp.done {
				continue
			}
			if pp.p.t.deleted.Load() {
				pp.done, pp.resp.ErrorCode = true, kerr.UnknownTopicOrPartition.Code
				continue
			}
			pp.p.mu.Lock()
			done, code := pp.p.st.AppendStatus(cn.b.id, pp.epoch, pp.required)
			if done && code == kerr.NotLeaderForPartition.Code {
				cn.setProduceLeaderHint(pp.p, pp.resp, leaders)
			}
			pp.p.mu.Unlock()
			if done {
				pp.done, pp.resp.ErrorCode = true, code
			} else {
				pending++
			}
		}
		if pending == 0 {
			return nil
		}
		cn.parkBegin() // a delayed produce: no handler time
		select {
		case <-wake:
			cn.parkEnd()
		case <-timer.C:
			for i := range parked {
				if !parked[i].done {
					parked[i].resp.ErrorCode = kerr.RequestTimedOut.Code
				}
			}
			return nil
		case <-cn.closed:
			return errCloseConn
		case <-c.closing:
			return errCloseConn
		}
	}
}

// checkTxnProduce asks the producer's transaction coordinator about a
// transactional batch before the leader appends it: under transaction
// version 2 (Produce v12+) the partition joins the transaction implicitly;
// otherwise it must already be in it (KIP-890 part 1), else
// INVALID_TXN_STATE, which v11+ clients know as TRANSACTION_ABORTABLE.
// Coordinator trouble answers NOT_ENOUGH_REPLICAS so the producer retries,
// as Kafka's verification does; under transaction version 2
// CONCURRENT_TRANSACTIONS, retried inside the broker for
// add.partitions.to.txn.retry.backoff.max.ms first, is answered as it is.
// The request's partitions are added together (produce_txn_adds.go).
func (cn *conn) checkTxnProduce(id string, version int16, b *replication.Batch, topic string, partition int32, adds *produceTxnAdds) (int16, string) {
	c := cn.b.c
	tp := transaction.Partition{Topic: topic, Partition: partition}
	var code int16
	if version >= 12 && c.txnVersion2() {
		code = adds.implicitAdd(c, cn.b.id, id, b.ProducerID, b.ProducerEpoch, tp)
		b.EpochBumpVerified = true
		if code == kerr.ConcurrentTransactions.Code {
			// Transaction version 2 gets the error as it is: common while
			// the previous transaction completes, and the producer retries.
			return code, ""
		}
	} else {
		code = c.verifyTxnPartition(id, b.ProducerID, b.ProducerEpoch, tp)
	}
	switch code {
	case 0:
		return 0, ""
	case kerr.InvalidTxnState.Code:
		if version >= 11 {
			return kerr.TransactionAbortable.Code, "the partition is not in the transaction"
		}
		return code, "the partition is not in the transaction"
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code, "the producer epoch is not the transaction's"
	case kerr.InvalidProducerIDMapping.Code:
		return code, ""
	}
	return kerr.NotEnoughReplicas.Code, "transaction verification failed: " + kerr.ErrorForCode(code).Error()
}
