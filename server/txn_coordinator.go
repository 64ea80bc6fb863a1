package server

// The transaction coordinator, on package coordinator's runtime: every
// transactional id belongs to one partition of the internal, replicated
// __transaction_state topic (by the Java hash of the id), that partition's
// leader is its coordinator, and every transition of its state is a record
// in that partition's log, written with acks=all before it takes effect.
// The rules and the shard's state live in package transaction; this file
// drives them: it writes the transitions, reports them as events, starts
// the markers and expires transactions.
//
// The coordinator epoch is the partition's leader epoch when the shard was
// loaded. A new leader rebuilds the shard from its own log as soon as it
// takes over (coordinatorMoved wakes the coordinator loop) and finishes
// every PrepareCommit/PrepareAbort by writing its markers again.

import (
	"sync"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
)

// txnCoordinators is the transaction coordinators' runtime and the marker
// controls.
type txnCoordinators struct {
	rt *coordinator.Runtime[*transaction.Shard]

	wake chan struct{} // a __transaction_state leadership moved

	mu      sync.Mutex
	held    map[topicPartition]bool
	release chan struct{} // closed when holds change
	// crashBeforeMarkers crashes the coordinator right after its next
	// PrepareCommit/PrepareAbort is durable, before any marker is sent.
	crashBeforeMarkers bool
}

// txnEntry is one transactional id as its coordinator holds it.
type txnEntry = transaction.Entry

// txnCoordinatorOf returns the broker coordinating a transactional id, or
// -1 with the FindCoordinator error.
func (c *Cluster) txnCoordinatorOf(id string) (int32, int16) {
	return c.txn.rt.Coordinator(id)
}

// txnEntry returns id's entry as coordinated by broker, loading the shard
// if leadership moved since it was last loaded. With create, an unknown id
// gets a placeholder (not yet written); without, it is nil and no error.
func (c *Cluster) txnEntry(broker int32, id string, create bool) (*txnEntry, int16) {
	sh, err := c.txn.rt.ShardFor(id)
	if err != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	st, _, code := sh.Acquire(broker)
	if code != 0 {
		return nil, code
	}
	return st.Entry(id, create), 0
}

// txnShardLoaded finishes the transactions the previous coordinator left
// prepared, as a freshly loaded coordinator does.
func (c *Cluster) txnShardLoaded(_ *coordinator.Shard[*transaction.Shard], at coordinator.Epoch, st *transaction.Shard) {
	es, mds := st.Prepared()
	for i, e := range es {
		c.startMarkers(at.Leader, e, mds[i])
	}
}

// txnCurrent reports whether the entry still belongs to the loaded shard,
// so a stale coordinator's goroutines stop.
func (c *Cluster) txnCurrent(e *txnEntry) bool {
	sh := c.txn.rt.Shard(e.Shard().Index())
	return sh != nil && sh.LoadedAt(e.Shard().At()) && e.Shard().Holds(e)
}

// txnApply runs a rule on the entry and, if it decides a transition,
// writes it (as the coordinator the entry was loaded on); the write's
// replay makes it take effect. It returns the metadata in force afterwards
// and the code to answer. A Prepare* transition starts its markers. cause
// (TxnCause...) labels the transition's events.
func (c *Cluster) txnApply(e *txnEntry, cause string, rule func(cur *transaction.Metadata, pending bool) transaction.Decision) (transaction.Metadata, int16) {
	d, prev, existed, ok := e.Begin(rule)
	if !ok {
		return prev, d.Code
	}
	code := c.txnWrite(e, d.Next)
	md := e.End(code, func(md transaction.Metadata) {
		// Reported before anyone waiting can make the next transition,
		// so the events keep the transitions' order.
		c.emitTxnTransition(prev, existed, md, cause)
	})
	if code != 0 {
		return md, code
	}
	if _, ok := md.State.Completed(); ok {
		c.afterPrepare(e.Shard().At().Leader, e, md)
	}
	return md, d.Code
}

// txnWrite appends one transition of the entry with acks=all. A nil md
// writes the tombstone of an expired id.
func (c *Cluster) txnWrite(e *txnEntry, md *transaction.Metadata) int16 {
	if !c.txnCurrent(e) {
		return kerr.NotCoordinator.Code
	}
	sh := c.txn.rt.Shard(e.Shard().Index())
	return sh.WriteLive(e.Shard().At(), coordinator.NoProducer, []coordinator.Record{transaction.Record(e.ID(), md)},
		transaction.Transition{ID: e.ID(), Metadata: md})
}

// afterPrepare starts the markers of a durable Prepare* state, unless the
// coordinator is to crash right here.
func (c *Cluster) afterPrepare(broker int32, e *txnEntry, md transaction.Metadata) {
	c.txn.mu.Lock()
	crash := c.txn.crashBeforeMarkers
	c.txn.crashBeforeMarkers = false
	c.txn.mu.Unlock()
	if crash {
		c.log.Info("crashing transaction coordinator before markers", "broker", broker, "transactional_id", e.ID(), "state", md.State)
		if err := c.StopBroker(broker, StopCrash); err != nil {
			c.log.Warn("crashing transaction coordinator", "broker", broker, "error", err)
		}
		return
	}
	c.startMarkers(broker, e, md)
}

// txnLoop is the coordinators' periodic work: load shards whose leadership
// moved (finishing their prepared transactions), abort transactions past
// their timeout and forget expired ids, every
// transaction.abort.timed.out.transaction.cleanup.interval.ms or when a
// __transaction_state leader changes.
// It runs on t, a timer on the cluster's clock (so that advancing the clock
// past a transaction's timeout lets the next check abort it), made before
// the goroutine starts so that the cluster's timers are all armed once
// NewCluster returns.
func (c *Cluster) txnLoop(t *clock.Timer) {
	defer c.wg.Done()
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			t.Reset(c.cfg.TransactionAbortTimedOutInterval)
		case <-c.txn.wake:
		}
		if c.topic(txnStateTopic) == nil {
			continue
		}
		shards, err := c.txn.rt.Shards()
		if err != nil {
			continue
		}
		for _, sh := range shards {
			leader, code := sh.Coordinator()
			if code != 0 {
				continue
			}
			if st, _, code := sh.Acquire(leader); code == 0 {
				c.expireTxns(st)
			}
		}
	}
}

// expireTxns aborts the shard's timed-out transactions and removes ids
// idle past transactional.id.expiration.ms.
func (c *Cluster) expireTxns(st *transaction.Shard) {
	nowMs := c.now().UnixMilli()
	for _, e := range st.Entries() {
		c.txnApply(e, TxnCauseTimeout, func(cur *transaction.Metadata, pending bool) transaction.Decision {
			if cur == nil || pending || !transaction.TimedOut(*cur, nowMs) {
				return transaction.Decision{}
			}
			c.log.Info("aborting timed-out transaction", "transactional_id", e.ID(), "producer_id", cur.ProducerID, "epoch", cur.ProducerEpoch)
			return transaction.Abort(*cur, nowMs, c.txnVersion2())
		})
		if md, ok := e.BeginExpiry(nowMs, c.cfg.TransactionalIDExpiration.Milliseconds()); ok {
			// The tombstone's replay removes the id from the shard.
			code := c.txnWrite(e, nil)
			e.End(code, nil)
			if code == 0 {
				c.emitTxnExpired(md)
			}
		}
	}
}

// wakeTxnLoop nudges the coordinator loop (a leadership change of a
// __transaction_state partition).
func (c *Cluster) wakeTxnLoop() {
	select {
	case c.txn.wake <- struct{}{}:
	default:
	}
}
