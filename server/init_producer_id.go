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
// and then gets COORDINATOR_NOT_AVAILABLE: transactions come in a later
// issue.

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// transactionMaxTimeoutMillis is Kafka's transaction.max.timeout.ms default.
const transactionMaxTimeoutMillis = 15 * 60 * 1000

func (cn *conn) handleInitProducerID(req *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	fail := func(err *kerr.Error) (kmsg.Response, error) {
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = err.Code, -1, -1
		return resp, nil
	}

	if req.TransactionalID != nil {
		switch {
		case *req.TransactionalID == "":
			return fail(kerr.InvalidRequest)
		case req.TransactionTimeoutMillis <= 0 || req.TransactionTimeoutMillis > transactionMaxTimeoutMillis:
			return fail(kerr.InvalidTransactionTimeout)
		}
		return fail(kerr.CoordinatorNotAvailable) // transactions are a later issue
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
