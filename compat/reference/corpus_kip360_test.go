package reference

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId with an existing producer id and epoch (KIP-360): a
// producer bumping its own epoch after an error, the retry of a bump whose
// answer was lost, stale epochs and ids (PRODUCER_FENCED from v4,
// INVALID_PRODUCER_EPOCH before), a fresh InitProducerId forgetting the
// last epoch, and the fence of an open transaction (CONCURRENT_TRANSACTIONS,
// then the producer's retry). Each case carries the producer id its own
// cluster gave (ids are blanked in the comparison; epochs are compared).

const (
	kip360Txn   = "corpus-kip360"
	kip360Timed = "corpus-kip360-timeout"
)

// kip360 is the producer id and epoch per cluster (the corpus runs the
// cases in order, one cluster after the other).
var kip360 = map[*corpusEnv]*struct {
	pid   int64
	epoch int16
}{}

func kip360Cases(versions map[int16][2]int16) []corpusCase {
	vr, ok := versions[kmsg.InitProducerID.Int16()]
	if !ok || vr[1] < 4 {
		return nil
	}
	newest := vr[1]
	state := func(e *corpusEnv) *struct {
		pid   int64
		epoch int16
	} {
		if kip360[e] == nil {
			kip360[e] = &struct {
				pid   int64
				epoch int16
			}{-1, -1}
		}
		return kip360[e]
	}
	// init sends InitProducerId at v with the producer id and epoch that
	// pick chooses from what the cluster gave so far.
	init := func(v int16, pick func(pid int64, epoch int16) (int64, int16)) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			s := state(e)
			req := at(v, kmsg.NewPtrInitProducerIDRequest())
			req.TransactionalID = kmsg.StringPtr(kip360Txn)
			req.TransactionTimeoutMillis = 60000
			req.ProducerID, req.ProducerEpoch = pick(s.pid, s.epoch)
			return req
		}
	}
	keep := func(e *corpusEnv, resp kmsg.Response) {
		if r := resp.(*kmsg.InitProducerIDResponse); r.ErrorCode == 0 {
			s := state(e)
			s.pid, s.epoch = r.ProducerID, r.ProducerEpoch
		}
	}
	fresh := func(int64, int16) (int64, int16) { return -1, -1 }
	current := func(pid int64, epoch int16) (int64, int16) { return pid, epoch }
	previous := func(pid int64, epoch int16) (int64, int16) { return pid, epoch - 1 }
	name := func(s string) string { return "InitProducerID/kip360-" + s }
	out := []corpusCase{
		// The settle's InitProducerId waits out the coordinator's loading;
		// this one bumps its epoch 0 to 1.
		{name: name("new"), txnID: kip360Txn, settle: kip360First, req: init(newest, fresh), after: keep},
		// The producer's own epoch: bumped, the old one remembered.
		{name: name("bump-current"), txnID: kip360Txn, req: init(newest, current), after: keep},
		// The same request again (its answer lost): the same epoch again.
		{name: name("retry-last"), txnID: kip360Txn, req: init(newest, previous)},
		{name: name("stale-epoch-v3"), txnID: kip360Txn, req: init(3, func(pid int64, epoch int16) (int64, int16) { return pid, epoch + 5 })},
		{name: name("stale-epoch"), txnID: kip360Txn, req: init(newest, func(pid int64, epoch int16) (int64, int16) { return pid, epoch + 5 })},
		{name: name("other-producer-id"), txnID: kip360Txn, req: init(newest, func(pid int64, epoch int16) (int64, int16) { return pid + 12345, epoch })},
		// A fresh InitProducerId bumps and forgets the last epoch, so the
		// previous one is fenced from then on.
		{name: name("fresh-again"), txnID: kip360Txn, req: init(newest, fresh), after: keep},
		{name: name("previous-after-fresh"), txnID: kip360Txn, req: init(newest, previous)},
		// An open transaction: the producer's own InitProducerId fences and
		// aborts it (CONCURRENT_TRANSACTIONS), then its retries.
		{name: "AddPartitionsToTxn/kip360-open", txnID: kip360Txn, req: func(e *corpusEnv) kmsg.Request {
			s := state(e)
			req := at(3, kmsg.NewPtrAddPartitionsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = kip360Txn, s.pid, s.epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{2}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		{name: name("ongoing"), txnID: kip360Txn, req: init(newest, current)},
		{name: name("after-fence"), txnID: kip360Txn, settle: kip360Settled, req: init(newest, current), after: keep},
		{name: name("after-fence-fresh"), txnID: kip360Txn, req: init(newest, fresh), after: keep},
	}
	// A transaction that times out (500 ms; both clusters look every
	// second): the coordinator aborts it with the epoch bumped, on the
	// path of the cluster's transaction version (2), whatever the client's.
	// The version 1 producer's EndTxn at its old epoch is fenced; its
	// KIP-360 InitProducerId at it is a retry.
	timed := func(v int16, pick func(pid int64, epoch int16) (int64, int16)) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := init(v, pick)(e).(*kmsg.InitProducerIDRequest)
			req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(kip360Timed), 500
			return req
		}
	}
	out = append(out,
		corpusCase{name: name("timeout-init"), txnID: kip360Timed, settle: func(r *run, _ *corpusEnv) { r.initTxn(kip360Timed, time.Minute) },
			req: timed(newest, fresh), after: keep},
		corpusCase{name: "AddPartitionsToTxn/kip360-timeout-open", txnID: kip360Timed, req: func(e *corpusEnv) kmsg.Request {
			s := state(e) // the timed-out id's producer from here on
			req := at(3, kmsg.NewPtrAddPartitionsToTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = kip360Timed, s.pid, s.epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{1}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		corpusCase{name: "EndTxn/kip360-after-timeout-v4", txnID: kip360Timed, settle: kip360Aborted(kip360Timed), req: func(e *corpusEnv) kmsg.Request {
			s := state(e) // the timed-out id's producer from here on
			req := at(4, kmsg.NewPtrEndTxnRequest())
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = kip360Timed, s.pid, s.epoch, false
			return req
		}},
		corpusCase{name: name("after-timeout"), txnID: kip360Timed, req: timed(newest, current)},
	)
	return out
}

// kip360First sends the id's first InitProducerId, retried while the
// coordinator loads.
func kip360First(r *run, _ *corpusEnv) { r.initTxn(kip360Txn, time.Minute) }

// kip360Settled waits until the fenced transaction's abort completed.
func kip360Settled(r *run, e *corpusEnv) { kip360Aborted(kip360Txn)(r, e) }

// kip360Aborted waits until id's transaction is CompleteAbort.
func kip360Aborted(id string) func(r *run, _ *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.waitFor("the abort of "+id, func() bool {
			req := at(0, kmsg.NewPtrDescribeTransactionsRequest())
			req.TransactionalIDs = []string{id}
			resp := r.do(r.txnCoordinator(id), req).(*kmsg.DescribeTransactionsResponse)
			st := resp.TransactionStates[0]
			return st.ErrorCode == 0 && st.State == "CompleteAbort"
		})
	}
}
