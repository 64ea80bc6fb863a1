package matrix

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Confluent drives github.com/confluentinc/confluent-kafka-go (librdkafka,
// bundled, through cgo). Backoffs are shortened to 20 ms and fetch waits to
// 100 ms; retries and message.timeout.ms are librdkafka's defaults unless a
// scenario sets them.
type Confluent struct{}

func (Confluent) Name() string { return "confluent-kafka-go" }

func (Confluent) Version() string {
	_, librdkafka := kafka.LibraryVersion()
	return moduleVersion("github.com/confluentinc/confluent-kafka-go/v2") + " (librdkafka " + librdkafka + ")"
}

func (Confluent) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

func confluentBase(bootstrap []string, clientID string) kafka.ConfigMap {
	cm := kafka.ConfigMap{
		"bootstrap.servers":        strings.Join(bootstrap, ","),
		"retry.backoff.ms":         20,
		"retry.backoff.max.ms":     20,
		"reconnect.backoff.ms":     20,
		"reconnect.backoff.max.ms": 100,
		// Logs go to a channel (protocolErrors), not stderr; errors also
		// arrive as kafka.Error events.
		"go.logs.channel.enable": true,
		"log_level":              3,
	}
	if clientID != "" {
		cm["client.id"] = clientID
	}
	if d := os.Getenv("MATRIX_RDKAFKA_DEBUG"); d != "" {
		cm["debug"] = d
		cm["log_level"] = 7
	}
	return cm
}

// protocolErrors drains a client's log channel until it closes, passing on
// what librdkafka logs as PROTOERR (a response it could not parse).
func protocolErrors(logs chan kafka.LogEvent, report func(error)) {
	debug := os.Getenv("MATRIX_RDKAFKA_DEBUG") != ""
	for l := range logs {
		if debug {
			fmt.Fprintln(os.Stderr, l.String())
		}
		if l.Tag == "PROTOERR" {
			report(protocolError(l.Message))
		}
	}
}

func (cf Confluent) Produce(ctx context.Context, pc ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	if !slices.Contains(cf.Compressions(), pc.Codec) {
		return nil, notSupported(cf.Name(), "codec %s", pc.Codec)
	}
	cm := confluentBase(pc.Bootstrap, pc.ClientID)
	cm["compression.type"] = pc.Codec
	cm["linger.ms"] = 5
	cm["acks"] = pc.Acks
	cm["enable.idempotence"] = pc.Idempotent
	if pc.Retries >= 0 {
		cm["retries"] = pc.Retries
	}
	if pc.DeliveryTimeout > 0 {
		cm["message.timeout.ms"] = int(pc.DeliveryTimeout / time.Millisecond)
	}
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	go func() { // errors; delivery reports go to dr
		for range p.Events() {
		}
	}()
	var protoMu sync.Mutex
	var protoErrs []error
	go protocolErrors(p.Logs(), func(err error) {
		protoMu.Lock()
		protoErrs = append(protoErrs, err)
		protoMu.Unlock()
	})
	dr := make(chan kafka.Event, 1024)
	var mu sync.Mutex
	var out []Delivery
	pending := 0
	allIn := false
	finished := make(chan struct{})
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case <-finished:
				return
			case e := <-dr:
				m, ok := e.(*kafka.Message)
				if !ok {
					continue
				}
				mu.Lock()
				i := m.Opaque.(int)
				if m.TopicPartition.Error != nil {
					out[i].Err = m.TopicPartition.Error
				} else if pc.Acks != AcksNone {
					out[i].Offset = int64(m.TopicPartition.Offset)
				}
				pending--
				if allIn && pending == 0 {
					close(finished)
				}
				mu.Unlock()
			}
		}
	}()
	topic := pc.Topic
	for rec := range records {
		mu.Lock()
		i := len(out)
		out = append(out, Delivery{Offset: -1})
		pending++
		mu.Unlock()
		m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: pc.Partition}, Value: []byte(rec.Value), Opaque: i}
		if rec.Key != "" {
			m.Key = []byte(rec.Key)
		}
		for {
			err := p.Produce(m, dr)
			var ke kafka.Error
			if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
				p.Flush(10)
				continue
			}
			if err != nil {
				mu.Lock()
				out[i].Err = err
				pending--
				mu.Unlock()
			}
			break
		}
	}
	mu.Lock()
	allIn = true
	if pending == 0 {
		close(finished)
	}
	mu.Unlock()
	select {
	case <-collected:
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out), ctx.Err()
	}
	protoMu.Lock()
	defer protoMu.Unlock()
	return out, errors.Join(protoErrs...)
}

func (Confluent) stream(cm kafka.ConfigMap, start func(*kafka.Consumer) error) (Stream, error) {
	cm["fetch.wait.max.ms"] = 100
	cm["fetch.error.backoff.ms"] = 20
	c, err := kafka.NewConsumer(&cm)
	if err != nil {
		return nil, err
	}
	if err := start(c); err != nil {
		c.Close()
		return nil, err
	}
	s := &pollStream{q: newQueue(), done: make(chan struct{})}
	go protocolErrors(c.Logs(), func(err error) { s.q.push(Event{Err: err}) })
	stopping := make(chan struct{})
	s.stop = func() {
		close(stopping)
		<-s.done
		c.Close() // leaves the group
	}
	go func() {
		defer close(s.done)
		defer s.q.finish()
		for {
			select {
			case <-stopping:
				return
			default:
			}
			switch e := c.Poll(50).(type) {
			case *kafka.Message:
				if e.TopicPartition.Error != nil {
					s.q.push(Event{Err: e.TopicPartition.Error})
					continue
				}
				s.q.push(Event{Record: Record{Partition: e.TopicPartition.Partition, Offset: int64(e.TopicPartition.Offset), Key: string(e.Key), Value: string(e.Value)}})
			case kafka.Error:
				s.q.push(Event{Err: e})
			}
		}
	}()
	return s, nil
}

func (cf Confluent) Transact(ctx context.Context, tc TxnConfig, txns []Txn) error {
	cm := confluentBase(tc.Bootstrap, tc.ClientID)
	cm["transactional.id"] = tc.TransactionalID
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		return err
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	go protocolErrors(p.Logs(), func(error) {})
	if err := p.InitTransactions(ctx); err != nil {
		return err
	}
	topic := tc.Topic
	for _, txn := range txns {
		if err := p.BeginTransaction(); err != nil {
			return err
		}
		for _, r := range txn.Records {
			m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: tc.Partition}, Key: []byte(r.Key), Value: []byte(r.Value)}
			if err := p.Produce(m, nil); err != nil {
				return err
			}
		}
		// Send them all first: an abort drops what is still queued.
		if left := p.Flush(10000); left > 0 {
			return fmt.Errorf("%d records not delivered", left)
		}
		if err := confluentTxnOffsets(ctx, p, txn); err != nil {
			return err
		}
		if txn.Commit {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (cf Confluent) Consume(ctx context.Context, cc ConsumerConfig) (Stream, error) {
	cm := confluentBase(cc.Bootstrap, cc.ClientID)
	cm["group.id"] = "matrix-assign-" + cc.ClientID // required by the consumer; Assign never joins it
	cm["enable.auto.commit"] = false
	if cc.ReadCommitted {
		cm["isolation.level"] = "read_committed"
	} else {
		cm["isolation.level"] = "read_uncommitted"
	}
	topic := cc.Topic
	return cf.stream(cm, func(c *kafka.Consumer) error {
		return c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: cc.Partition, Offset: kafka.Offset(cc.Offset)}})
	})
}

func (cf Confluent) JoinGroup(ctx context.Context, gc GroupConfig) (Stream, error) {
	cm := confluentBase(gc.Bootstrap, gc.ClientID)
	cm["group.id"] = gc.Group
	cm["auto.offset.reset"] = "earliest"
	cm["session.timeout.ms"] = int(groupSessionTimeout / time.Millisecond)
	cm["heartbeat.interval.ms"] = int(groupHeartbeatInterval / time.Millisecond)
	cm["auto.commit.interval.ms"] = int(groupCommitInterval / time.Millisecond)
	return cf.stream(cm, func(c *kafka.Consumer) error { return c.Subscribe(gc.Topic, nil) })
}

func (Confluent) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	cm := confluentBase(bootstrap, "")
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		return Metadata{}, err
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	go protocolErrors(p.Logs(), func(error) {})
	md, err := p.GetMetadata(nil, true, 10000)
	if err != nil {
		return Metadata{}, err
	}
	var out Metadata
	for _, b := range md.Brokers {
		out.Brokers = append(out.Brokers, BrokerMetadata{ID: b.ID, Host: b.Host, Port: int32(b.Port)})
	}
	for _, name := range topics {
		t, ok := md.Topics[name]
		if !ok {
			return Metadata{}, fmt.Errorf("topic %s missing from the metadata", name)
		}
		tm := TopicMetadata{Name: name}
		for _, p := range t.Partitions {
			tm.Partitions = append(tm.Partitions, PartitionMetadata{Partition: p.ID, Leader: p.Leader, Replicas: p.Replicas, ISR: p.Isrs})
		}
		out.Topics = append(out.Topics, tm)
	}
	return out, nil
}

func (Confluent) Describe(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	var ke kafka.Error
	if errors.As(err, &ke) && (ke.Code() == kafka.ErrTransport || ke.Code() == kafka.ErrAllBrokersDown) || isConnectionError(err) {
		return connectionError
	}
	if errors.As(err, &ke) {
		return "kafka.Error " + ke.Code().String()
	}
	return fmt.Sprintf("%T", err)
}
