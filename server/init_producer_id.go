package server

// InitProducerID, versions 0-5, for idempotent (non-transactional)
// producers.
//
// A null TransactionalID gets a new producer ID with epoch 0. From v3 a
// producer may send its current ProducerID and ProducerEpoch (KIP-360) to
// recover after an error: both must be set or both -1 (INVALID_REQUEST),
// and an ID this cluster issued comes back with its epoch bumped, or as a
// fresh ID with epoch 0 once the epoch is exhausted. An ID we never issued
// (say from an earlier cluster on the same ports) gets a fresh one, so it
// cannot fence a producer that holds it here.
//
// Kafka's coordinator ignores the sent ID for non-transactional producers
// and always issues a fresh one; bumping instead keeps the producer's
// identity stable across recoveries, which clients accept either way.
//
// A non-null TransactionalID is checked as Kafka does (empty: INVALID_REQUEST;
// timeout outside 1ms..transaction.max.timeout.ms: INVALID_TRANSACTION_TIMEOUT)
// and then served by its transaction coordinator (txn_coordinator.go) with
// package transaction's rules: a new id gets a fresh producer id at epoch 0,
// a known one its epoch bumped (v3+: the KIP-360 retry and fencing rules,
// PRODUCER_FENCED from v4 and INVALID_PRODUCER_EPOCH below), an open
// transaction is fenced and aborted (CONCURRENT_TRANSACTIONS until the
// abort completes).

import (
	"math"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleInitProducerID(req *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	fail := func(err *kerr.Error) (kmsg.Response, error) {
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = err.Code, -1, -1
		return resp, nil
	}

	if req.TransactionalID != nil {
		switch {
		case *req.TransactionalID != "" && !cn.allowedTxn(authorizer.OpWrite, *req.TransactionalID):
			return fail(kerr.TransactionalIDAuthorizationFailed)
		case *req.TransactionalID == "":
			return fail(kerr.InvalidRequest)
		case req.TransactionTimeoutMillis <= 0 || int64(req.TransactionTimeoutMillis) > c.cfg.TransactionMaxTimeout.Milliseconds():
			return fail(kerr.InvalidTransactionTimeout)
		}
		return cn.initTransactionalProducerID(req, resp)
	}

	if !cn.allowedIdempotentWrite() {
		return fail(kerr.ClusterAuthorizationFailed)
	}
	// Fields absent before v3 decode as -1, -1.
	id, epoch := req.ProducerID, req.ProducerEpoch
	if (id == -1) != (epoch == -1) {
		return fail(kerr.InvalidRequest)
	}
	issued := id > 0 && id <= c.nextProducerID.Load()
	if issued && epoch >= 0 && epoch < math.MaxInt16 {
		resp.ProducerID, resp.ProducerEpoch = id, epoch+1
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = c.nextProducerID.Add(1), 0
	return resp, nil
}

func (cn *conn) initTransactionalProducerID(req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) (kmsg.Response, error) {
	c := cn.b.c
	e, code := c.txnEntry(cn.b.id, *req.TransactionalID, true)
	if code == 0 {
		nowMs := c.now().UnixMilli()
		ir := transaction.InitRequest{TimeoutMs: req.TransactionTimeoutMillis, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
			TV2: req.Version >= 5 && c.txnVersion2(), ClusterTV2: c.txnVersion2()}
		if req.Version < 3 {
			ir.ProducerID, ir.ProducerEpoch = -1, -1
		}
		if (ir.ProducerID == -1) != (ir.ProducerEpoch == -1) {
			code = kerr.InvalidRequest.Code
		} else {
			var md transaction.Metadata
			md, code = c.txnApply(e, TxnCauseInitProducerID, func(cur *transaction.Metadata, pending bool) transaction.Decision {
				m := transaction.New(e.ID(), -1, ir.TimeoutMs, nowMs)
				if cur != nil {
					m = *cur
				} else {
					m.ProducerID = c.nextProducerID.Add(1)
				}
				return transaction.InitProducerID(m, pending, ir, func() int64 { return c.nextProducerID.Add(1) }, nowMs)
			})
			if code == 0 {
				resp.ProducerID, resp.ProducerEpoch = md.ProducerID, md.ProducerEpoch
			}
		}
	}
	if code != 0 {
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = fencedForVersion(code, req.Version, 4), -1, -1
	}
	return resp, nil
}

// fencedForVersion maps PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for
// versions older than since, which predate the error (KIP-588).
func fencedForVersion(code int16, version, since int16) int16 {
	if code == kerr.ProducerFenced.Code && version < since {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
