package reference

import (
	"fmt"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txn is a raw transactional producer, speaking the client's side of the
// protocol at pinned versions (InitProducerId v4, AddPartitionsToTxn v3,
// AddOffsetsToTxn v3, TxnOffsetCommit v3, EndTxn v4, Produce v11: the
// flow a client uses before KIP-890's second part), so both targets see the
// same bytes.
type txn struct {
	r       *run
	id      string
	pid     int64
	epoch   int16
	seq     int32
	initErr int16
}

// retriable are the answers a client retries a transactional request on:
// the coordinator is moving, loading, or still finishing the last
// transaction's markers.
func retriable(code int16) bool {
	switch code {
	case kerr.ConcurrentTransactions.Code, kerr.CoordinatorLoadInProgress.Code,
		kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code:
		return true
	}
	return false
}

// txnCoordinator is transactional id's coordinator (FindCoordinator key
// type 1), waiting for one that is up.
func (r *run) txnCoordinator(id string) int32 {
	r.Helper()
	var node int32
	r.waitFor("a transaction coordinator", func() bool {
		req := at(4, kmsg.NewPtrFindCoordinatorRequest())
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{id}
		c := r.do(0, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
		node = c.NodeID
		return c.ErrorCode == 0 && !r.down[node]
	})
	return node
}

// txnDo sends a request to the transaction coordinator, retrying while code
// says retriable, and returns the response whose code was not.
func (r *run) txnDo(id string, build func() kmsg.Request, code func(kmsg.Response) int16) kmsg.Response {
	r.Helper()
	var resp kmsg.Response
	r.waitFor(kmsg.NameForKey(build().Key())+" past retriable errors", func() bool {
		resp = r.do(r.txnCoordinator(id), build())
		return !retriable(code(resp))
	})
	return resp
}

// initTxn is InitProducerId for transactional id with timeout; a later call
// with the same id fences the earlier producer.
func (r *run) initTxn(id string, timeout time.Duration) *txn {
	r.Helper()
	resp := r.txnDo(id, func() kmsg.Request {
		req := at(4, kmsg.NewPtrInitProducerIDRequest())
		req.TransactionalID = kmsg.StringPtr(id)
		req.TransactionTimeoutMillis = int32(timeout.Milliseconds())
		req.ProducerID, req.ProducerEpoch = -1, -1
		return req
	}, func(resp kmsg.Response) int16 { return resp.(*kmsg.InitProducerIDResponse).ErrorCode }).(*kmsg.InitProducerIDResponse)
	return &txn{r: r, id: id, pid: resp.ProducerID, epoch: resp.ProducerEpoch, initErr: resp.ErrorCode}
}

// addPartition adds partition 0 of topic to the transaction (v3).
func (x *txn) addPartition(topic string) string {
	x.r.Helper()
	resp := x.r.txnDo(x.id, func() kmsg.Request {
		req := at(3, kmsg.NewPtrAddPartitionsToTxnRequest())
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = x.id, x.pid, x.epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		req.Topics = append(req.Topics, rt)
		return req
	}, func(resp kmsg.Response) int16 {
		return resp.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
	})
	return errName(resp.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode)
}

// produce writes one transactional batch of values to partition 0 of
// topic on broker 1 (its leader) and advances the sequence on success.
func (x *txn) produce(topic string, values ...string) produced {
	x.r.Helper()
	recs := make([]protocol.Record, len(values))
	for i, v := range values {
		recs[i] = protocol.Record{Value: []byte(v)}
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{
		ProducerID: x.pid, ProducerEpoch: x.epoch, BaseSequence: x.seq,
		Attributes: 0x10, BaseTimestamp: time.Now().UnixMilli(),
	}, protocol.CodecNone, recs)
	if err != nil {
		x.r.Fatal(err)
	}
	req := produceReq(11, topic, 0, acksAll, b)
	req.TransactionID = kmsg.StringPtr(x.id)
	var p kmsg.ProduceResponseTopicPartition
	// Retried as a client would while broker 1 takes up the leadership
	// that Metadata already names (Kafka, right after CreateTopics).
	x.r.waitFor("a leader that takes the produce", func() bool {
		p = x.r.do(1, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		return p.ErrorCode != kerr.NotLeaderForPartition.Code && p.ErrorCode != kerr.LeaderNotAvailable.Code
	})
	if p.ErrorCode == 0 {
		x.seq += int32(len(values))
	}
	return produced{p.ErrorCode, p.BaseOffset}
}

// addOffsets adds group's offsets to the transaction (AddOffsetsToTxn v3).
func (x *txn) addOffsets(group string) string {
	x.r.Helper()
	resp := x.r.txnDo(x.id, func() kmsg.Request {
		req := at(3, kmsg.NewPtrAddOffsetsToTxnRequest())
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = x.id, x.pid, x.epoch, group
		return req
	}, func(resp kmsg.Response) int16 { return resp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode })
	return errName(resp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode)
}

// commitOffset is TxnOffsetCommit v3 of offset for partition 0 of topic,
// sent to group's coordinator.
func (x *txn) commitOffset(group, topic string, offset int64) string {
	x.r.Helper()
	var code int16
	x.r.waitFor("TxnOffsetCommit past retriable errors", func() bool {
		req := at(3, kmsg.NewPtrTxnOffsetCommitRequest())
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = x.id, group, x.pid, x.epoch
		req.Generation, req.MemberID = -1, ""
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, offset, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		code = x.r.do(x.r.coordinator(group), req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		return !retriable(code)
	})
	return errName(code)
}

// end is EndTxn v4 (commit or abort).
func (x *txn) end(commit bool) string {
	x.r.Helper()
	resp := x.r.txnDo(x.id, func() kmsg.Request {
		req := at(4, kmsg.NewPtrEndTxnRequest())
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = x.id, x.pid, x.epoch, commit
		return req
	}, func(resp kmsg.Response) int16 { return resp.(*kmsg.EndTxnResponse).ErrorCode })
	return errName(resp.(*kmsg.EndTxnResponse).ErrorCode)
}

// committedView reads partition 0 of topic from broker 1 with
// read_committed from offset 0 to the LSO, and says what came back: the
// records (control batches apart), the first offsets of the aborted
// transactions, and what a consumer keeps once it drops those.
func (r *run) committedView(topic string) string {
	r.Helper()
	f := r.fetch(1, topic, 0, 1)
	if f.code != 0 {
		return errName(f.code)
	}
	var keptOff []int64
	var keptVal []string
	for i, o := range f.offsets {
		if !f.inAborted(o) {
			keptOff, keptVal = append(keptOff, o), append(keptVal, f.values[i])
		}
	}
	return fmt.Sprintf("read_committed: lso=%d records %s, aborted transactions from %v, markers %s; a consumer keeps %s",
		f.lso, spans(f.offsets, f.values), f.abortedFrom, strings.Join(f.markers, " "), spans(keptOff, keptVal))
}

// inAborted says offset o lies in an aborted transaction of the response:
// at or after an aborted transaction's first offset and before the next
// abort marker, as a read_committed consumer drops it (one producer per
// topic in these scenarios).
func (f fetched) inAborted(o int64) bool {
	for _, first := range f.abortedFrom {
		if o < first {
			continue
		}
		end := int64(1 << 62)
		for _, m := range f.abortAt {
			if m > first && m < end {
				end = m
			}
		}
		if o < end {
			return true
		}
	}
	return false
}

// waitStable waits until the LSO of topic reaches its HW: every marker of
// the transactions that ended is written (Kafka writes them after EndTxn
// answers).
func (r *run) waitStable(topic string) {
	r.Helper()
	r.waitFor("the LSO of "+topic+" to reach its HW", func() bool {
		f := r.fetch(1, topic, 0, 1)
		return f.code == 0 && f.lso == f.hw
	})
}
