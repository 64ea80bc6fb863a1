package fakekafka

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ClockState is the cluster's clock (GET /v1/clock).
type ClockState struct {
	// Mode is "real" or "manual".
	Mode      string    `json:"mode"`
	Now       time.Time `json:"now"`
	NowMillis int64     `json:"now_ms"`
	// AdvancedMillis is how far the clock was advanced in total.
	AdvancedMillis int64 `json:"advanced_ms"`
	// Timers is how many timers wait on the clock.
	Timers int `json:"timers"`
}

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

// Event is one state change the cluster made (GET /v1/events). Fields a
// type does not use are zero.
type Event struct {
	Seq        uint64            `json:"seq"`
	Time       time.Time         `json:"time"`
	Type       string            `json:"type"`
	Broker     *int32            `json:"broker,omitempty"`
	Topic      string            `json:"topic,omitempty"`
	Partition  *int32            `json:"partition,omitempty"`
	Leader     *int32            `json:"leader,omitempty"`
	OldLeader  *int32            `json:"old_leader,omitempty"`
	Epoch      *int32            `json:"epoch,omitempty"`
	ISR        []int32           `json:"isr,omitempty"`
	From       *int64            `json:"from,omitempty"`
	To         *int64            `json:"to,omitempty"`
	Unclean    bool              `json:"unclean,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	Group      string            `json:"group,omitempty"`
	Member     string            `json:"member,omitempty"`
	Generation *int32            `json:"generation,omitempty"`
	Fault      string            `json:"fault,omitempty"`
	Detail     string            `json:"detail,omitempty"`
	Configs    map[string]string `json:"configs,omitempty"`

	// Transaction events (txn_*): the id, producer id and epoch, state
	// before and after (or the marker, COMMIT/ABORT), partitions.
	TransactionalID string           `json:"transactional_id,omitempty"`
	ProducerID      *int64           `json:"producer_id,omitempty"`
	ProducerEpoch   *int16           `json:"producer_epoch,omitempty"`
	State           string           `json:"state,omitempty"`
	PreviousState   string           `json:"previous_state,omitempty"`
	Partitions      []TopicPartition `json:"partitions,omitempty"`
}

// EventFilter narrows Events; zero fields match everything.
type EventFilter struct {
	Types     []string // e.g. "isr_shrunk", "leader_elected"
	Topic     string
	Partition *int32
	Broker    *int32
	Group     string
	// TransactionalID selects the events of one transactional id.
	TransactionalID string
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
	var out struct {
		Events  []Event `json:"events"`
		LastSeq uint64  `json:"last_seq"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/events?"+q.Encode(), nil, &out)
	return out.Events, out.LastSeq, err
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// TransactionState is one transactional id as its coordinator holds it
// (GET /v1/transactions).
type TransactionState struct {
	TransactionalID    string           `json:"transactional_id"`
	Coordinator        int32            `json:"coordinator"`
	State              string           `json:"state"`
	ProducerID         int64            `json:"producer_id"`
	ProducerEpoch      int16            `json:"producer_epoch"`
	TimeoutMs          int32            `json:"timeout_ms"`
	StartTimestamp     int64            `json:"start_timestamp"`
	Partitions         []TopicPartition `json:"partitions"`
	TransactionVersion int              `json:"transaction_version"`
}

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
