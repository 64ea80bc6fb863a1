// Package matrix runs every supported Kafka client through the same failure
// scenarios against fakekafka and writes the client × scenario table of the
// docs/compatibility.md from the run (go test ./compat/matrix -update-matrix).
//
// Each client is driven by an adapter behind the Client interface: franz-go
// (kgo), sarama, segmentio/kafka-go, confluent-kafka-go (librdkafka, cgo)
// and kcat (librdkafka, run as a command); the clients in other languages
// (Java, Python, JavaScript, Rust) through small programs under clients/
// that Process runs (process.go). An adapter that cannot do what a
// scenario asks returns a NotSupportedError saying why.
//
// MATRIX_RDKAFKA_DEBUG=fetch,consumer (any librdkafka debug contexts)
// prints the librdkafka debug log of the confluent-kafka-go and kcat
// clients to stderr.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Client is one Kafka client library.
type Client interface {
	// Name is the client's name in the table.
	Name() string
	// Version is the client's version, as built or installed.
	Version() string
	// Compressions lists the codecs the client produces with, "none" first.
	Compressions() []string
	// Produce sends every record records yields to cfg.Topic and
	// cfg.Partition and returns when each one is acknowledged or failed.
	// The deliveries are in the order of records. The iterator may block:
	// the client keeps producing what it already has meanwhile.
	Produce(ctx context.Context, cfg ProducerConfig, records iter.Seq[Record]) ([]Delivery, error)
	// Consume starts reading one partition from an exact offset.
	Consume(ctx context.Context, cfg ConsumerConfig) (Stream, error)
	// JoinGroup starts a consumer group member subscribed to one topic. It
	// commits what it delivers; closing the stream leaves the group.
	JoinGroup(ctx context.Context, cfg GroupConfig) (Stream, error)
	// Transact produces each Txn's records to cfg.Topic and cfg.Partition
	// in a transaction of its own, committed or aborted as it says. A
	// client without transactions returns a NotSupportedError.
	Transact(ctx context.Context, cfg TxnConfig, txns []Txn) error
	// Metadata reads the cluster's metadata for topics.
	Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error)
	// Describe names an error the client returned in a short, stable form
	// (no addresses or timings), e.g. "sarama.KError NOT_ENOUGH_REPLICAS".
	Describe(err error) string
}

// Acks values.
const (
	AcksNone   = 0
	AcksLeader = 1
	AcksAll    = -1
)

// ProducerConfig says how to produce.
type ProducerConfig struct {
	Bootstrap []string
	ClientID  string
	Topic     string
	Partition int32
	Acks      int    // AcksNone, AcksLeader or AcksAll
	Codec     string // "none", "gzip", "snappy", "lz4", "zstd"
	// Idempotent turns on the idempotent producer; a client without one
	// returns a NotSupportedError.
	Idempotent bool
	// Retries is the most times a record is retried; -1 keeps the client's
	// default.
	Retries int
	// DeliveryTimeout bounds a record's time from produce to
	// acknowledgement (delivery.timeout.ms); 0 keeps the client's default.
	// A client without such a bound returns a NotSupportedError.
	DeliveryTimeout time.Duration
}

// Record is one record, produced or consumed.
type Record struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
}

// Delivery is what the client reported for one produced record: its offset
// (-1 when the client does not say, as with acks=0) or its error.
type Delivery struct {
	Offset int64
	Err    error
}

// ConsumerConfig says where to read.
type ConsumerConfig struct {
	Bootstrap []string
	ClientID  string
	Topic     string
	Partition int32
	Offset    int64
	// ReadCommitted reads with isolation.level=read_committed.
	ReadCommitted bool
}

// TxnConfig says how to produce transactionally.
type TxnConfig struct {
	Bootstrap       []string
	ClientID        string
	TransactionalID string
	Topic           string
	Partition       int32
}

// Txn is one transaction: its records, and whether it commits.
type Txn struct {
	Records []Record
	Commit  bool
	// Offsets, when set, are sent to the transaction for a consumer group
	// (sendOffsetsToTransaction): committed only if the transaction is.
	Offsets *TxnOffsets
	// BeforeEnd, when set, runs once the records are acknowledged and the
	// offsets sent, before the transaction ends; its error ends Transact.
	BeforeEnd func() error
}

// TxnOffsets is one consumer group offset sent in a transaction.
type TxnOffsets struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// GroupConfig says which group to join.
type GroupConfig struct {
	Bootstrap []string
	ClientID  string
	Group     string
	Topic     string
	// Settings are extra consumer settings by Kafka's names
	// (group.protocol, group.instance.id, ...); only the Java adapter reads
	// them.
	Settings map[string]string
}

// Stream is a running consumer: records and the errors the client surfaces,
// in the order it delivered them.
type Stream interface {
	// Next returns the next record or surfaced error, waiting until ctx
	// ends.
	Next(ctx context.Context) (Event, error)
	// Close stops the consumer (a group member leaves its group).
	Close() error
}

// Event is one record or one error a consumer surfaced.
type Event struct {
	Record Record
	Err    error
}

// Metadata is the cluster as a client sees it.
type Metadata struct {
	Brokers []BrokerMetadata
	Topics  []TopicMetadata
}

// BrokerMetadata is one broker.
type BrokerMetadata struct {
	ID   int32
	Host string
	Port int32
}

// TopicMetadata is one topic.
type TopicMetadata struct {
	Name       string
	Partitions []PartitionMetadata
}

// PartitionMetadata is one partition.
type PartitionMetadata struct {
	Partition int32
	Leader    int32
	Replicas  []int32
	ISR       []int32
}

// NotSupportedError says that a client cannot do something, and why.
type NotSupportedError struct {
	Client string
	Reason string
}

func (e *NotSupportedError) Error() string {
	return fmt.Sprintf("%s: not supported: %s", e.Client, e.Reason)
}

func notSupported(client, format string, args ...any) error {
	return &NotSupportedError{Client: client, Reason: fmt.Sprintf(format, args...)}
}

// IsNotSupported returns the NotSupportedError in err's chain, if any.
func IsNotSupported(err error) (*NotSupportedError, bool) {
	var ns *NotSupportedError
	ok := errors.As(err, &ns)
	return ns, ok
}

// moduleVersion is the version of a module the binary was built with.
// Test binaries carry no dependency list, so there it asks the go command,
// which answers for the module (or workspace) of the working directory.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					m = m.Replace
				}
				return m.Version
			}
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", path).Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return "unknown"
}

// Clients returns every adapter, in table order: the Go clients and kcat,
// then the other languages'.
func Clients() []Client {
	return append([]Client{FranzGo{}, Sarama{}, KafkaGo{}, Confluent{}, Kcat{}}, otherLanguages()...)
}

// queue is the unbounded event buffer behind every Stream: the client's
// goroutine pushes, Next pops.
type queue struct {
	mu     sync.Mutex
	events []Event
	wake   chan struct{} // closed and replaced on every push
	done   bool
}

func newQueue() *queue { return &queue{wake: make(chan struct{})} }

func (q *queue) push(e Event) {
	q.mu.Lock()
	q.events = append(q.events, e)
	close(q.wake)
	q.wake = make(chan struct{})
	q.mu.Unlock()
}

// finish marks the end of the stream: Next returns errStreamEnded once the
// buffer is drained.
func (q *queue) finish() {
	q.mu.Lock()
	if !q.done {
		q.done = true
		close(q.wake)
		q.wake = make(chan struct{})
	}
	q.mu.Unlock()
}

// errStreamEnded is returned by Next when the consumer stopped by itself
// (kcat exits on a consumer error, for instance).
var errStreamEnded = errors.New("the consumer stopped")

func (q *queue) next(ctx context.Context) (Event, error) {
	for {
		q.mu.Lock()
		if len(q.events) > 0 {
			e := q.events[0]
			q.events = q.events[1:]
			q.mu.Unlock()
			return e, nil
		}
		if q.done {
			q.mu.Unlock()
			return Event{}, errStreamEnded
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Group member timings every adapter asks for: Kafka's minimum session
// timeout, and heartbeats and commits often enough that a rebalance or a
// coordinator change completes in a fraction of a second.
const (
	groupSessionTimeout    = 6 * time.Second
	groupHeartbeatInterval = 100 * time.Millisecond
	groupCommitInterval    = 100 * time.Millisecond
)

// connectionError is what Describe calls every error about a connection:
// refused, reset, closed. Each client reports a crashed broker with a few
// of them, in numbers and words that depend on timing, so the scenarios
// leave them out of the table.
const connectionError = "connection error"

// isConnectionError reports whether err is about a connection rather than
// an answer from a broker.
func isConnectionError(err error) bool {
	var oe *net.OpError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &oe):
		return true
	}
	s := strings.ToLower(err.Error())
	for _, p := range []string{"connection refused", "connection reset", "broken pipe", "disconnected", "transport failure", "closed network connection", "not connected", ": eof"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// ProtocolError is a response the client rejected as malformed. Against
// fakekafka that is always fakekafka's fault, so every scenario fails on
// one. Only the librdkafka clients report them (as PROTOERR log lines).
type ProtocolError struct{ Text string }

func (e *ProtocolError) Error() string { return "protocol error: " + e.Text }

// librdkafkaNoise is what changes from run to run in a librdkafka message:
// "host:port/id: " broker prefixes, buffer positions, source lines.
var librdkafkaNoise = regexp.MustCompile(`\S+:\d+/\S+: | at \d+/\d+| \(rd_kafka_\w+:\d+\)| \(incorrect broker\.version\.fallback\?\)`)

// protocolError turns a librdkafka log message into a ProtocolError with a
// stable text.
func protocolError(msg string) *ProtocolError {
	return &ProtocolError{Text: librdkafkaNoise.ReplaceAllString(msg, "")}
}
