package server

// EndTxn, versions 0-5: commit or abort the open transaction. Answered
// once PrepareCommit/PrepareAbort is durable in __transaction_state; the
// markers and the Complete state follow in the background
// (txn_markers.go), and until then the next request of the producer gets
// CONCURRENT_TRANSACTIONS.
//
// Version 5 under transaction.version 2 (KIP-890) bumps the epoch on every
// EndTxn and answers the new producer id and epoch; a retry at the
// previous epoch is answered as a retry. Older versions run the version 1
// rules: the exact epoch, NONE for a repeated outcome, INVALID_TXN_STATE
// otherwise. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleEndTxn(req *kmsg.EndTxnRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !cn.allowedTxn(authorizer.OpWrite, req.TransactionalID) {
		resp.ErrorCode = errTxnAuth
		return resp, nil
	}
	if req.TransactionalID == "" {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	e, code := c.txnEntry(cn.b.id, req.TransactionalID, false)
	if code == 0 && e == nil {
		code = kerr.InvalidProducerIDMapping.Code
	}
	if code != 0 {
		resp.ErrorCode = fencedForVersion(code, req.Version, 2)
		return resp, nil
	}
	tv2 := req.Version >= 5 && c.txnVersion2()
	nowMs := c.now().UnixMilli()
	er := transaction.EndRequest{ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Commit: req.Commit}
	var res transaction.EndResult
	_, code = c.txnApply(e, TxnCauseEndTxn, func(cur *transaction.Metadata, pending bool) transaction.Decision {
		if cur == nil {
			res.Code = kerr.InvalidProducerIDMapping.Code
			return res.Decision
		}
		m := *cur
		m.TV2 = tv2
		res = transaction.EndTxn(m, pending, er, func() int64 { return c.nextProducerID.Add(1) }, nowMs)
		return res.Decision
	})
	resp.ErrorCode = fencedForVersion(code, req.Version, 2)
	if code == 0 && req.Version >= 5 {
		resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
	}
	return resp, nil
}
