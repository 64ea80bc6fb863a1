package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

// KafkaGo drives github.com/segmentio/kafka-go: the Writer for producing, the
// Reader for consuming (by partition or as a group member) and the Client
// for metadata. Backoffs are shortened to 20 ms, the metadata TTL to 50 ms
// and fetch waits to 100 ms; attempts are kafka-go's defaults unless a
// scenario sets them.
type KafkaGo struct{}

func (KafkaGo) Name() string { return "kafka-go" }

func (KafkaGo) Version() string { return moduleVersion("github.com/segmentio/kafka-go") }

func (KafkaGo) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

func kafkaGoCodec(name string) (kafka.Compression, bool) {
	switch name {
	case "none", "":
		return 0, true
	case "gzip":
		return kafka.Gzip, true
	case "snappy":
		return kafka.Snappy, true
	case "lz4":
		return kafka.Lz4, true
	case "zstd":
		return kafka.Zstd, true
	}
	return 0, false
}

// fixedBalancer sends every message to one partition.
type fixedBalancer int

func (b fixedBalancer) Balance(kafka.Message, ...int) int { return int(b) }

func kafkaGoTransport(clientID string) *kafka.Transport {
	return &kafka.Transport{ClientID: clientID, MetadataTTL: 50 * time.Millisecond}
}

func (k KafkaGo) Produce(ctx context.Context, pc ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	codec, ok := kafkaGoCodec(pc.Codec)
	if !ok {
		return nil, notSupported(k.Name(), "codec %s", pc.Codec)
	}
	if pc.Idempotent {
		return nil, notSupported(k.Name(), "kafka-go's Writer has no idempotent producer")
	}
	var mu sync.Mutex
	var out []Delivery
	var wg sync.WaitGroup
	w := &kafka.Writer{
		Addr:            kafka.TCP(pc.Bootstrap...),
		Topic:           pc.Topic,
		Balancer:        fixedBalancer(pc.Partition),
		Compression:     codec,
		WriteBackoffMin: 20 * time.Millisecond,
		WriteBackoffMax: 20 * time.Millisecond,
		BatchTimeout:    5 * time.Millisecond,
		Transport:       kafkaGoTransport(pc.ClientID),
		Async:           true,
		Completion: func(msgs []kafka.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				i := m.WriterData.(int)
				if err != nil {
					out[i].Err = err
				} else if pc.Acks != AcksNone {
					out[i].Offset = m.Offset
				}
				wg.Done()
			}
		},
	}
	switch pc.Acks {
	case AcksNone:
		w.RequiredAcks = kafka.RequireNone
	case AcksLeader:
		w.RequiredAcks = kafka.RequireOne
	default:
		w.RequiredAcks = kafka.RequireAll
	}
	if pc.Retries >= 0 {
		w.MaxAttempts = pc.Retries + 1
	}
	if pc.DeliveryTimeout > 0 {
		return nil, notSupported(k.Name(), "no delivery timeout: writes are bounded by count (Writer.MaxAttempts)")
	}
	for rec := range records {
		mu.Lock()
		i := len(out)
		out = append(out, Delivery{Offset: -1})
		mu.Unlock()
		wg.Add(1)
		m := kafka.Message{Value: []byte(rec.Value), WriterData: i}
		if rec.Key != "" {
			m.Key = []byte(rec.Key)
		}
		if err := w.WriteMessages(ctx, m); err != nil {
			mu.Lock()
			out[i].Err = err
			mu.Unlock()
			wg.Done()
		}
	}
	wg.Wait()
	return out, w.Close()
}

// loggedError is an error kafka-go's Reader only logs (through
// ErrorLogger): its Reader retries most errors itself and never returns
// them from ReadMessage.
type loggedError struct {
	format string
	args   []any
	text   string
}

func (e *loggedError) Error() string { return e.text }

// reader starts a Reader; offset >= 0 positions a partition reader first.
func (KafkaGo) reader(cfg kafka.ReaderConfig, clientID string, offset int64) (Stream, error) {
	q := newQueue()
	cfg.MaxWait = 100 * time.Millisecond
	cfg.ReadBackoffMin = 20 * time.Millisecond
	cfg.ReadBackoffMax = 20 * time.Millisecond
	cfg.Dialer = &kafka.Dialer{ClientID: clientID, Timeout: 10 * time.Second}
	cfg.ErrorLogger = kafka.LoggerFunc(func(format string, args ...any) {
		q.push(Event{Err: &loggedError{format: format, args: args, text: fmt.Sprintf(format, args...)}})
	})
	r := kafka.NewReader(cfg)
	if offset >= 0 {
		if err := r.SetOffset(offset); err != nil {
			r.Close()
			return nil, err
		}
	}
	s := &pollStream{q: q, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = func() {
		cancel()
		<-s.done
		r.Close() // leaves the group
	}
	go func() {
		defer close(s.done)
		defer q.finish()
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				q.push(Event{Err: err})
				if errors.Is(err, io.EOF) {
					return
				}
				continue
			}
			q.push(Event{Record: Record{Partition: int32(m.Partition), Offset: m.Offset, Key: string(m.Key), Value: string(m.Value)}})
		}
	}()
	return s, nil
}

func (k KafkaGo) Consume(ctx context.Context, cc ConsumerConfig) (Stream, error) {
	rc := kafka.ReaderConfig{Brokers: cc.Bootstrap, Topic: cc.Topic, Partition: int(cc.Partition)}
	if cc.ReadCommitted {
		// Seen against fakekafka: the Reader hands out transaction
		// markers as messages and keeps aborted records even at
		// read_committed, so reading transactions is left out.
		return nil, notSupported("kafka-go", "its Reader returns transaction markers and aborted records as messages, even at read_committed")
	}
	return k.reader(rc, cc.ClientID, cc.Offset)
}

func (KafkaGo) Transact(context.Context, TxnConfig, []Txn) error {
	return notSupported("kafka-go", "kafka-go has no transactional producer")
}

func (k KafkaGo) JoinGroup(ctx context.Context, gc GroupConfig) (Stream, error) {
	return k.reader(kafka.ReaderConfig{
		Brokers:           gc.Bootstrap,
		GroupID:           gc.Group,
		Topic:             gc.Topic,
		StartOffset:       kafka.FirstOffset,
		SessionTimeout:    groupSessionTimeout,
		HeartbeatInterval: groupHeartbeatInterval,
		CommitInterval:    groupCommitInterval,
		JoinGroupBackoff:  20 * time.Millisecond,
	}, gc.ClientID, -1)
}

// Metadata uses Conn.ReadPartitions: kafka.Client.Metadata reports a
// replica or leader on a broker missing from the response's broker list (a
// broker that is down) as broker 0, where Conn fills in the id.
func (KafkaGo) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	d := &kafka.Dialer{Timeout: 10 * time.Second}
	var conn *kafka.Conn
	var err error
	for _, addr := range bootstrap {
		if conn, err = d.DialContext(ctx, "tcp", addr); err == nil {
			break
		}
	}
	if err != nil {
		return Metadata{}, err
	}
	defer conn.Close()
	brokers, err := conn.Brokers()
	if err != nil {
		return Metadata{}, err
	}
	var out Metadata
	for _, b := range brokers {
		out.Brokers = append(out.Brokers, BrokerMetadata{ID: int32(b.ID), Host: b.Host, Port: int32(b.Port)})
	}
	ps, err := conn.ReadPartitions(topics...)
	if err != nil {
		return Metadata{}, err
	}
	ids := func(bs []kafka.Broker) []int32 {
		out := []int32{}
		for _, b := range bs {
			out = append(out, int32(b.ID))
		}
		return out
	}
	for _, name := range topics {
		tm := TopicMetadata{Name: name}
		for _, p := range ps {
			if p.Topic != name {
				continue
			}
			if p.Error != nil {
				return Metadata{}, fmt.Errorf("%s/%d: %w", name, p.ID, p.Error)
			}
			tm.Partitions = append(tm.Partitions, PartitionMetadata{Partition: int32(p.ID), Leader: int32(p.Leader.ID), Replicas: ids(p.Replicas), ISR: ids(p.Isr)})
		}
		out.Topics = append(out.Topics, tm)
	}
	return out, nil
}

func (k KafkaGo) Describe(err error) string {
	var ke kafka.Error
	if errors.As(err, &ke) { // before isConnectionError: kafka.Error is a net.Error
		return "kafka.Error " + kafkaName(int16(ke))
	}
	if isConnectionError(err) {
		return connectionError
	}
	var le *loggedError
	if errors.As(err, &le) {
		for _, a := range le.args {
			if e, ok := a.(error); ok {
				if d := k.Describe(e); d != connectionError {
					return d + ", only logged (ErrorLogger)"
				}
				return connectionError
			}
		}
		return "only logged (ErrorLogger): " + strings.TrimSpace(le.format)
	}
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil {
				return "kafka.WriteErrors: " + KafkaGo{}.Describe(e)
			}
		}
	}
	// Anything else is named with its text too: a rare failover failure
	// in CI said only "*fmt.wrapError".
	return fmt.Sprintf("%T: %v", err, err)
}
