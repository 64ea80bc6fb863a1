package matrix

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Sarama drives github.com/IBM/sarama (protocol version 3.0). Backoffs are
// shortened to 20 ms and fetch waits to 100 ms; retry counts are sarama's
// defaults unless a scenario sets them.
type Sarama struct{}

func (Sarama) Name() string { return "sarama" }

func (Sarama) Version() string { return moduleVersion("github.com/IBM/sarama") }

func (Sarama) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

func saramaBase(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	if clientID != "" {
		cfg.ClientID = clientID
	}
	cfg.Metadata.Retry.Backoff = 20 * time.Millisecond
	cfg.Producer.Retry.Backoff = 20 * time.Millisecond
	cfg.Consumer.Retry.Backoff = 20 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	return cfg
}

func saramaCodec(name string) (sarama.CompressionCodec, bool) {
	switch name {
	case "none", "":
		return sarama.CompressionNone, true
	case "gzip":
		return sarama.CompressionGZIP, true
	case "snappy":
		return sarama.CompressionSnappy, true
	case "lz4":
		return sarama.CompressionLZ4, true
	case "zstd":
		return sarama.CompressionZSTD, true
	}
	return 0, false
}

func (s Sarama) Produce(ctx context.Context, pc ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	codec, ok := saramaCodec(pc.Codec)
	if !ok {
		return nil, notSupported(s.Name(), "codec %s", pc.Codec)
	}
	cfg := saramaBase(pc.ClientID)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = codec
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	switch pc.Acks {
	case AcksNone:
		cfg.Producer.RequiredAcks = sarama.NoResponse
	case AcksLeader:
		cfg.Producer.RequiredAcks = sarama.WaitForLocal
	default:
		cfg.Producer.RequiredAcks = sarama.WaitForAll
	}
	if pc.Retries >= 0 {
		cfg.Producer.Retry.Max = pc.Retries
	}
	if pc.DeliveryTimeout > 0 {
		return nil, notSupported(s.Name(), "no delivery timeout: retries are bounded by count (Producer.Retry.Max)")
	}
	if pc.Idempotent {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	prod, err := sarama.NewAsyncProducer(pc.Bootstrap, cfg)
	if err != nil {
		return nil, err
	}

	var mu sync.Mutex
	var out []Delivery
	pending := 0
	allIn := false
	finished := make(chan struct{})
	record := func(m *sarama.ProducerMessage, err error) {
		mu.Lock()
		defer mu.Unlock()
		i := m.Metadata.(int)
		if err != nil {
			out[i].Err = err
		} else if pc.Acks != AcksNone {
			out[i].Offset = m.Offset
		}
		pending--
		if allIn && pending == 0 {
			close(finished)
		}
	}
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		succ, fail := prod.Successes(), prod.Errors()
		for succ != nil || fail != nil {
			select {
			case m, ok := <-succ:
				if !ok {
					succ = nil
					continue
				}
				record(m, nil)
			case e, ok := <-fail:
				if !ok {
					fail = nil
					continue
				}
				record(e.Msg, e.Err)
			}
		}
	}()
	for rec := range records {
		mu.Lock()
		i := len(out)
		out = append(out, Delivery{Offset: -1})
		pending++
		mu.Unlock()
		m := &sarama.ProducerMessage{Topic: pc.Topic, Partition: pc.Partition, Value: sarama.StringEncoder(rec.Value), Metadata: i}
		if rec.Key != "" {
			m.Key = sarama.StringEncoder(rec.Key)
		}
		prod.Input() <- m
	}
	mu.Lock()
	allIn = true
	if pending == 0 {
		close(finished)
	}
	mu.Unlock()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	prod.AsyncClose()
	<-collected
	return out, ctx.Err()
}

func (Sarama) Transact(ctx context.Context, tc TxnConfig, txns []Txn) error {
	cfg := saramaBase(tc.ClientID)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = tc.TransactionalID
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	prod, err := sarama.NewSyncProducer(tc.Bootstrap, cfg)
	if err != nil {
		return err
	}
	defer prod.Close()
	for _, txn := range txns {
		if err := prod.BeginTxn(); err != nil {
			return err
		}
		for _, r := range txn.Records {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: tc.Topic, Partition: tc.Partition, Key: sarama.StringEncoder(r.Key), Value: sarama.StringEncoder(r.Value)}); err != nil {
				return err
			}
		}
		if err := saramaTxnOffsets(prod, txn); err != nil {
			return err
		}
		if txn.Commit {
			err = prod.CommitTxn()
		} else {
			err = prod.AbortTxn()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (Sarama) Consume(ctx context.Context, cc ConsumerConfig) (Stream, error) {
	cfg := saramaBase(cc.ClientID)
	if cc.ReadCommitted {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	cons, err := sarama.NewConsumer(cc.Bootstrap, cfg)
	if err != nil {
		return nil, err
	}
	pc, err := cons.ConsumePartition(cc.Topic, cc.Partition, cc.Offset)
	if err != nil {
		cons.Close()
		return nil, err
	}
	s := &pollStream{q: newQueue(), done: make(chan struct{})}
	s.stop = func() {
		pc.AsyncClose()
		<-s.done
		cons.Close()
	}
	go func() {
		defer close(s.done)
		defer s.q.finish()
		msgs, errs := pc.Messages(), pc.Errors()
		for msgs != nil || errs != nil {
			select {
			case m, ok := <-msgs:
				if !ok {
					msgs = nil
					continue
				}
				s.q.push(Event{Record: Record{Partition: m.Partition, Offset: m.Offset, Key: string(m.Key), Value: string(m.Value)}})
			case e, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				s.q.push(Event{Err: e})
			}
		}
	}()
	return s, nil
}

// saramaHandler delivers a group member's records and marks them for the
// auto-commit.
type saramaHandler struct{ q *queue }

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.q.push(Event{Record: Record{Partition: m.Partition, Offset: m.Offset, Key: string(m.Key), Value: string(m.Value)}})
		sess.MarkMessage(m, "")
	}
	return nil
}

func (Sarama) JoinGroup(ctx context.Context, gc GroupConfig) (Stream, error) {
	cfg := saramaBase(gc.ClientID)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = groupCommitInterval
	cfg.Consumer.Group.Session.Timeout = groupSessionTimeout
	cfg.Consumer.Group.Heartbeat.Interval = groupHeartbeatInterval
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 20 * time.Millisecond
	g, err := sarama.NewConsumerGroup(gc.Bootstrap, gc.Group, cfg)
	if err != nil {
		return nil, err
	}
	s := &pollStream{q: newQueue(), done: make(chan struct{})}
	runCtx, cancel := context.WithCancel(context.Background())
	errsDone := make(chan struct{})
	s.stop = func() {
		cancel()
		<-s.done
		g.Close() // leaves the group
		<-errsDone
		s.q.finish()
	}
	go func() {
		defer close(errsDone)
		for e := range g.Errors() {
			s.q.push(Event{Err: e})
		}
	}()
	go func() {
		defer close(s.done)
		for runCtx.Err() == nil {
			if err := g.Consume(runCtx, []string{gc.Topic}, saramaHandler{s.q}); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				s.q.push(Event{Err: err})
			}
		}
	}()
	return s, nil
}

func (Sarama) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	cl, err := sarama.NewClient(bootstrap, saramaBase(""))
	if err != nil {
		return Metadata{}, err
	}
	defer cl.Close()
	if err := cl.RefreshMetadata(topics...); err != nil {
		return Metadata{}, err
	}
	var out Metadata
	for _, b := range cl.Brokers() {
		host, port, err := net.SplitHostPort(b.Addr())
		if err != nil {
			return Metadata{}, err
		}
		p, _ := strconv.Atoi(port)
		out.Brokers = append(out.Brokers, BrokerMetadata{ID: b.ID(), Host: host, Port: int32(p)})
	}
	for _, name := range topics {
		ps, err := cl.Partitions(name)
		if err != nil {
			return Metadata{}, fmt.Errorf("topic %s: %w", name, err)
		}
		tm := TopicMetadata{Name: name}
		for _, p := range ps {
			pm := PartitionMetadata{Partition: p, Leader: -1}
			if l, err := cl.Leader(name, p); err == nil {
				pm.Leader = l.ID()
			}
			// ErrReplicaNotAvailable comes with the list: some replica is
			// offline.
			if pm.Replicas, err = cl.Replicas(name, p); err != nil && !errors.Is(err, sarama.ErrReplicaNotAvailable) {
				return Metadata{}, err
			}
			if pm.ISR, err = cl.InSyncReplicas(name, p); err != nil && !errors.Is(err, sarama.ErrReplicaNotAvailable) {
				return Metadata{}, err
			}
			tm.Partitions = append(tm.Partitions, pm)
		}
		out.Topics = append(out.Topics, tm)
	}
	return out, nil
}

func (Sarama) Describe(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		return "sarama.KError " + kafkaName(int16(ke))
	}
	switch {
	case errors.Is(err, sarama.ErrOutOfBrokers) && errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return "sarama.ErrOutOfBrokers (sarama.ErrSASLAuthenticationFailed)"
	case errors.Is(err, sarama.ErrOutOfBrokers):
		return "sarama.ErrOutOfBrokers"
	case isConnectionError(err):
		return connectionError
	}
	return fmt.Sprintf("%T", err)
}

// kafkaName is Kafka's name of an error code, e.g. NOT_ENOUGH_REPLICAS.
func kafkaName(code int16) string {
	if e := kerr.ErrorForCode(code); e != nil {
		var ke *kerr.Error
		if errors.As(e, &ke) {
			return ke.Message
		}
	}
	return strconv.Itoa(int(code))
}
