// Package transaction is the transaction coordinator's state machine: one
// transactional id's metadata (producer id and epoch, state, partitions,
// timeout) and Kafka's rules for InitProducerId, AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn and the timeout abort, for both transaction
// version 1 and KIP-890's version 2.
//
// Like package replication it has no goroutines, sockets or clocks: the
// server passes the time in, writes every transition to __transaction_state
// before it takes effect, and sends the markers. Each rule returns a
// Decision: an error code to answer, and the metadata to persist, if any.
package transaction

import (
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// State is a transaction's state, with Kafka's names and numbering.
type State int8

const (
	Empty State = iota
	Ongoing
	PrepareCommit
	PrepareAbort
	CompleteCommit
	CompleteAbort
	Dead
	PrepareEpochFence
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String is Kafka's name of the state, as DescribeTransactions reports it.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// ParseState reads a state name, case-insensitively.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if strings.EqualFold(n, name) {
			return State(i), true
		}
	}
	return 0, false
}

// validPrevious is Kafka's TransactionState.validPreviousStates. Version 2
// also lets Empty and Complete* go to PrepareAbort (an abort with nothing
// added bumps the epoch), which CanTransition adds.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteCommit, CompleteAbort},
	PrepareEpochFence: {Ongoing},
}

// CanTransition reports whether Kafka allows from -> to; tv2 is whether the
// transaction uses transaction version 2.
func CanTransition(from, to State, tv2 bool) bool {
	if slices.Contains(validPrevious[to], from) {
		return true
	}
	return tv2 && to == PrepareAbort && (from == Empty || from == CompleteCommit || from == CompleteAbort)
}

// Completed is the state a Prepare* state ends in once its markers are
// written.
func (s State) Completed() (State, bool) {
	switch s {
	case PrepareCommit:
		return CompleteCommit, true
	case PrepareAbort:
		return CompleteAbort, true
	}
	return s, false
}

// Partition is one topic partition taking part in a transaction; the
// same type as api.TopicPartition, so transaction states and events carry
// it without a copy.
type Partition = api.TopicPartition

func comparePartitions(a, b Partition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// Metadata is one transactional id's coordinator state, as written to
// __transaction_state (Kafka's TransactionMetadata). It is a value: rules
// return a modified copy and never change the one they are given.
type Metadata struct {
	TransactionalID string `json:"transactional_id"`
	ProducerID      int64  `json:"producer_id"`
	// PrevProducerID is the producer id before the last transition
	// (Kafka's prevProducerId: every transition records the id it left,
	// which differs from ProducerID only right after a rotation on epoch
	// exhaustion), so a retry with the rotated-away id is recognised; -1
	// if none.
	PrevProducerID int64 `json:"prev_producer_id"`
	// NextProducerID is the id the transaction rotates to when it
	// completes with its epoch exhausted (version 2); -1 if none.
	NextProducerID int64 `json:"next_producer_id"`
	ProducerEpoch  int16 `json:"producer_epoch"`
	// LastProducerEpoch is the epoch before the last bump, so a retry sent
	// with it (a lost response) is answered as a retry; -1 if none.
	LastProducerEpoch int16       `json:"last_producer_epoch"`
	TimeoutMs         int32       `json:"timeout_ms"`
	State             State       `json:"state"`
	Partitions        []Partition `json:"partitions,omitempty"` // sorted
	TxnStartMs        int64       `json:"txn_start_ms"`         // -1 before the first transaction; a completed one's start stays
	LastUpdateMs      int64       `json:"last_update_ms"`
	// TV2 is whether the client runs transaction version 2 (KIP-890): the
	// epoch is bumped by every EndTxn.
	TV2 bool `json:"tv2,omitempty"`
}

// noEpoch is RecordBatch.NO_PRODUCER_EPOCH.
const noEpoch = -1

// maxEpoch is Short.MaxValue; an epoch of maxEpoch-1 or more is exhausted,
// since a bump must stay representable (and version 2 bumps at EndTxn):
// only a fence or a version 2 end may still take it to maxEpoch.
const maxEpoch = 32767

// EpochExhausted is Kafka's TransactionMetadata.isEpochExhausted.
func EpochExhausted(epoch int16) bool { return epoch >= maxEpoch-1 }

// New is the metadata of a transactional id seen for the first time: a
// fresh producer id with no epoch yet, Empty.
func New(id string, producerID int64, timeoutMs int32, nowMs int64) Metadata {
	return Metadata{
		TransactionalID: id, ProducerID: producerID, PrevProducerID: -1, NextProducerID: -1,
		ProducerEpoch: noEpoch, LastProducerEpoch: noEpoch, TimeoutMs: timeoutMs, State: Empty,
		TxnStartMs: -1, LastUpdateMs: nowMs,
	}
}

// HasPartition reports whether tp takes part in the open transaction.
func (m *Metadata) HasPartition(tp Partition) bool {
	_, ok := slices.BinarySearchFunc(m.Partitions, tp, comparePartitions)
	return ok
}

// clone copies m, partitions included.
func (m Metadata) clone() Metadata {
	m.Partitions = slices.Clone(m.Partitions)
	return m
}

// transition starts the next state from m, as Kafka's prepareTransitionTo
// does: a copy whose PrevProducerID is m's producer id.
func (m Metadata) transition() Metadata {
	next := m.clone()
	next.PrevProducerID = m.ProducerID
	return next
}

// Decision is a rule's outcome: answer Code; if Next is set, first write it
// to the log and only then let it take effect (and answer Code). A Decision
// with Code set and Next nil changes nothing.
type Decision struct {
	Code int16
	Next *Metadata
}

func answer(code int16) Decision { return Decision{Code: code} }

func write(m Metadata, code int16) Decision { return Decision{Code: code, Next: &m} }
