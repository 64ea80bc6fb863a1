package server

// Transactions as their coordinators see them, and the transaction fault
// controls, for tests and the HTTP control API (control/transactions.go).

import (
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/transaction"
)

// Transactions returns every transactional id of every coordinator that is
// up, by id. A coordinator that has not loaded its shard yet loads it now.
func (c *Cluster) Transactions() []TransactionState {
	out := []TransactionState{}
	if c.topic(txnStateTopic) == nil {
		return out
	}
	shards, err := c.txn.rt.Shards()
	if err != nil {
		return out
	}
	var mds []transaction.Metadata
	var coords []int32
	for _, sh := range shards {
		leader, code := sh.Coordinator()
		if code != 0 {
			continue
		}
		st, _, code := sh.Acquire(leader)
		if code != 0 {
			continue
		}
		for _, md := range st.Snapshot() {
			mds = append(mds, md)
			coords = append(coords, leader)
		}
	}
	for i, md := range mds {
		ts := TransactionState{TransactionalID: md.TransactionalID, Coordinator: coords[i], State: md.State.String(),
			ProducerID: md.ProducerID, ProducerEpoch: md.ProducerEpoch, TimeoutMs: md.TimeoutMs, StartTimestamp: md.TxnStartMs,
			Partitions: append([]transaction.Partition{}, md.Partitions...), TransactionVersion: 1}
		if md.TV2 {
			ts.TransactionVersion = 2
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b TransactionState) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return out
}
