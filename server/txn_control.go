package server

// Transactions as their coordinators see them, and the transaction fault
// controls, for tests and the HTTP control API:
//
//	GET  /v1/transactions                                     {"transactions":[TransactionState...]}
//	POST /v1/transactions/markers/{topic}/{partition}/hold    markers to the partition wait
//	POST /v1/transactions/markers/{topic}/{partition}/release they go out
//	POST /v1/transactions/crash-coordinator-before-markers    one-shot coordinator crash

import (
	"net/http"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/transaction"
)

// TransactionState is one transactional id as its coordinator holds it.
type TransactionState struct {
	TransactionalID string `json:"transactional_id"`
	// Coordinator is the broker leading the id's __transaction_state
	// partition.
	Coordinator int32 `json:"coordinator"`
	// State is Kafka's name: Empty, Ongoing, PrepareCommit, PrepareAbort,
	// CompleteCommit, CompleteAbort.
	State         string `json:"state"`
	ProducerID    int64  `json:"producer_id"`
	ProducerEpoch int16  `json:"producer_epoch"`
	TimeoutMs     int32  `json:"timeout_ms"`
	// StartTimestamp is when the open transaction began (ms), -1 if none.
	StartTimestamp int64                   `json:"start_timestamp"`
	Partitions     []transaction.Partition `json:"partitions"`
	// TransactionVersion is 2 when the producer runs KIP-890's rules.
	TransactionVersion int `json:"transaction_version"`
}

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

func (c *Cluster) registerTransactionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/transactions", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Transactions []TransactionState `json:"transactions"`
		}{c.Transactions()})
	})
	mux.HandleFunc("POST /v1/transactions/markers/{topic}/{partition}/hold", func(w http.ResponseWriter, r *http.Request) {
		topic, index, err := c.pathPartition(r)
		if err == nil {
			err = c.HoldTransactionMarkers(topic, index)
		}
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, struct {
			Held bool `json:"held"`
		}{true})
	})
	mux.HandleFunc("POST /v1/transactions/markers/{topic}/{partition}/release", func(w http.ResponseWriter, r *http.Request) {
		topic, index, err := c.pathPartition(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		c.ReleaseTransactionMarkers(topic, index)
		httpJSON(w, http.StatusOK, struct {
			Held bool `json:"held"`
		}{false})
	})
	mux.HandleFunc("POST /v1/transactions/crash-coordinator-before-markers", func(w http.ResponseWriter, r *http.Request) {
		c.CrashTransactionCoordinatorBeforeMarkers()
		httpJSON(w, http.StatusOK, struct {
			Armed bool `json:"armed"`
		}{true})
	})
}
