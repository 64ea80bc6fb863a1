package server

// AddOffsetsToTxn, versions 0-4: adds the group's __consumer_offsets
// partition to the transaction, so the group's TxnOffsetCommit offsets get
// the transaction's marker. Same checks and errors as AddPartitionsToTxn
// (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH below v2).

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAddOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case !cn.allowedTxn(authorizer.OpWrite, req.TransactionalID):
		resp.ErrorCode = errTxnAuth
		return resp, nil
	case !cn.allowedGroup(authorizer.OpRead, req.Group):
		resp.ErrorCode = errGroupAuth
		return resp, nil
	}
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp, nil
	}
	tp, code := c.offsetsPartitionOf(req.Group)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	topics := []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: tp.Topic, Partitions: []int32{tp.Partition}}}
	codes := cn.addPartitionsToTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, topics, req.Version)
	resp.ErrorCode = codes[topicPartition{tp.Topic, tp.Partition}]
	return resp, nil
}
