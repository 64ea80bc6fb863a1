package fakekafka

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

// ClockState is the cluster's clock (GET /v1/clock).
type ClockState = api.ClockState

// Clock reads the cluster's clock (GET /v1/clock).
func (c *Control) Clock(ctx context.Context) (ClockState, error) {
	var s ClockState
	return s, c.do(ctx, http.MethodGet, "/v1/clock", nil, &s)
}

// AdvanceClock moves the cluster's clock forward by d (whole milliseconds);
// everything that became due runs before it returns (POST
// /v1/clock/advance). With FAKEKAFKA_CLOCK=manual time moves only this way.
func (c *Control) AdvanceClock(ctx context.Context, d time.Duration) (ClockState, error) {
	var s ClockState
	return s, c.do(ctx, http.MethodPost, "/v1/clock/advance", map[string]int64{"ms": d.Milliseconds()}, &s)
}

// Event is one state change the cluster made (GET /v1/events). Numbers a
// type does not use are -1.
type Event = api.Event

// EventFilter narrows Events; zero fields match everything.
type EventFilter struct {
	Types     []string // e.g. "isr_shrunk", "leader_elected"
	Topic     string
	Partition *int32
	Broker    *int32
	Group     string
	// TransactionalID selects the events of one transactional id.
	TransactionalID string
	// Subject selects the schema registry's events of one subject.
	Subject string
}

// Events returns the events after sequence number since that match f, and
// the last sequence number the cluster has written, to pass as since next
// time (GET /v1/events).
func (c *Control) Events(ctx context.Context, since uint64, f EventFilter) ([]Event, uint64, error) {
	q := url.Values{"since": {strconv.FormatUint(since, 10)}}
	for _, t := range f.Types {
		q.Add("type", t)
	}
	if f.Topic != "" {
		q.Set("topic", f.Topic)
	}
	if f.Partition != nil {
		q.Set("partition", strconv.Itoa(int(*f.Partition)))
	}
	if f.Broker != nil {
		q.Set("broker", strconv.Itoa(int(*f.Broker)))
	}
	if f.Group != "" {
		q.Set("group", f.Group)
	}
	if f.TransactionalID != "" {
		q.Set("transactional_id", f.TransactionalID)
	}
	if f.Subject != "" {
		q.Set("subject", f.Subject)
	}
	var out struct {
		Events  []Event `json:"events"`
		LastSeq uint64  `json:"last_seq"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/events?"+q.Encode(), nil, &out)
	return out.Events, out.LastSeq, err
}

// TopicPartition names one partition.
type TopicPartition = api.TopicPartition

// TransactionState is one transactional id as its coordinator holds it
// (GET /v1/transactions).
type TransactionState = api.TransactionState

// Transactions lists every transactional id (GET /v1/transactions).
func (c *Control) Transactions(ctx context.Context) ([]TransactionState, error) {
	var out struct {
		Transactions []TransactionState `json:"transactions"`
	}
	return out.Transactions, c.do(ctx, http.MethodGet, "/v1/transactions", nil, &out)
}

// HoldTransactionMarkers keeps commit and abort markers from reaching the
// partition's leader until ReleaseTransactionMarkers, so its LSO stays put.
func (c *Control) HoldTransactionMarkers(ctx context.Context, topic string, partition int32) error {
	return c.do(ctx, http.MethodPost, "/v1/transactions/markers/"+url.PathEscape(topic)+"/"+strconv.Itoa(int(partition))+"/hold", nil, nil)
}

// ReleaseTransactionMarkers lets held markers through.
func (c *Control) ReleaseTransactionMarkers(ctx context.Context, topic string, partition int32) error {
	return c.do(ctx, http.MethodPost, "/v1/transactions/markers/"+url.PathEscape(topic)+"/"+strconv.Itoa(int(partition))+"/release", nil, nil)
}

// CrashTransactionCoordinatorBeforeMarkers crashes the coordinator of the
// next transaction to be committed or aborted, after it wrote PrepareCommit
// or PrepareAbort and before any marker.
func (c *Control) CrashTransactionCoordinatorBeforeMarkers(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/v1/transactions/crash-coordinator-before-markers", nil, nil)
}
