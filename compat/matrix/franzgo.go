package matrix

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// FranzGo drives github.com/twmb/franz-go (kgo). Backoffs are shortened to
// 20 ms and fetch waits to 100 ms so that failovers take milliseconds;
// everything else is kgo's default.
type FranzGo struct{}

func (FranzGo) Name() string { return "franz-go" }

func (FranzGo) Version() string { return moduleVersion("github.com/twmb/franz-go") }

func (FranzGo) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

func kgoBase(bootstrap []string, clientID string) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(bootstrap...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.MetadataMinAge(10 * time.Millisecond),
	}
	if clientID != "" {
		opts = append(opts, kgo.ClientID(clientID))
	}
	return opts
}

func kgoCodec(name string) (kgo.CompressionCodec, bool) {
	switch name {
	case "none", "":
		return kgo.NoCompression(), true
	case "gzip":
		return kgo.GzipCompression(), true
	case "snappy":
		return kgo.SnappyCompression(), true
	case "lz4":
		return kgo.Lz4Compression(), true
	case "zstd":
		return kgo.ZstdCompression(), true
	}
	return kgo.CompressionCodec{}, false
}

func (f FranzGo) Produce(ctx context.Context, cfg ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	codec, ok := kgoCodec(cfg.Codec)
	if !ok {
		return nil, notSupported(f.Name(), "codec %s", cfg.Codec)
	}
	opts := append(kgoBase(cfg.Bootstrap, cfg.ClientID),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	switch cfg.Acks {
	case AcksNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	case AcksLeader:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	if !cfg.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if cfg.Retries >= 0 {
		opts = append(opts, kgo.RecordRetries(cfg.Retries))
	}
	if cfg.DeliveryTimeout > 0 {
		opts = append(opts, kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()

	var mu sync.Mutex
	var out []Delivery
	var wg sync.WaitGroup
	for rec := range records {
		mu.Lock()
		i := len(out)
		out = append(out, Delivery{Offset: -1})
		mu.Unlock()
		wg.Add(1)
		r := &kgo.Record{Partition: cfg.Partition, Key: []byte(rec.Key), Value: []byte(rec.Value)}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			out[i].Err = err
			if err == nil && cfg.Acks != AcksNone {
				out[i].Offset = r.Offset
			}
		})
	}
	wg.Wait()
	return out, nil
}

func (FranzGo) Consume(ctx context.Context, cfg ConsumerConfig) (Stream, error) {
	opts := append(kgoBase(cfg.Bootstrap, cfg.ClientID),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {cfg.Partition: kgo.NewOffset().At(cfg.Offset)}}))
	if cfg.ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	return kgoStream(opts)
}

func (FranzGo) Transact(ctx context.Context, cfg TxnConfig, txns []Txn) error {
	cl, err := kgo.NewClient(append(kgoBase(cfg.Bootstrap, cfg.ClientID),
		kgo.TransactionalID(cfg.TransactionalID), kgo.DefaultProduceTopic(cfg.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// franz-go opts into KIP-890 (transaction version 2) at BeginTransaction
	// only if it already has a broker's ApiVersions, else at the first
	// EndTransaction after it does: connect first, so every run is the same.
	if err := cl.Ping(ctx); err != nil {
		return err
	}
	for _, txn := range txns {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		var rs []*kgo.Record
		for _, r := range txn.Records {
			rs = append(rs, &kgo.Record{Partition: cfg.Partition, Key: []byte(r.Key), Value: []byte(r.Value)})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return err
		}
		if err := kgoTxnOffsets(ctx, cl, cfg.TransactionalID, txn); err != nil {
			return err
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(txn.Commit)); err != nil {
			return err
		}
	}
	return nil
}

func (FranzGo) JoinGroup(ctx context.Context, cfg GroupConfig) (Stream, error) {
	opts := append(kgoBase(cfg.Bootstrap, cfg.ClientID),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(groupSessionTimeout),
		kgo.HeartbeatInterval(groupHeartbeatInterval),
		kgo.AutoCommitInterval(groupCommitInterval),
	)
	return kgoStream(opts)
}

// kgoStream polls a consumer client into a queue until closed.
func kgoStream(opts []kgo.Opt) (Stream, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	s := &pollStream{q: newQueue(), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = func() {
		cancel()
		<-s.done
		cl.Close() // leaves the group
	}
	go func() {
		defer close(s.done)
		defer s.q.finish()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			for _, fe := range fs.Errors() {
				if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, kgo.ErrClientClosed) {
					continue
				}
				s.q.push(Event{Err: fe.Err})
			}
			fs.EachRecord(func(r *kgo.Record) {
				s.q.push(Event{Record: Record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: string(r.Value)}})
			})
		}
	}()
	return s, nil
}

// pollStream is a Stream fed by a goroutine that stop ends.
type pollStream struct {
	q    *queue
	done chan struct{}
	stop func()
	once sync.Once
	log  func() string // an adapter's last lines of standard error; nil in process
}

func (s *pollStream) Next(ctx context.Context) (Event, error) { return s.q.next(ctx) }

// ClientLog is what an adapter's client last logged, for a failure
// message; empty for the Go clients.
func (s *pollStream) ClientLog() string {
	if s.log == nil {
		return ""
	}
	return s.log()
}

func (s *pollStream) Close() error {
	s.once.Do(s.stop)
	return nil
}

func (FranzGo) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	cl, err := kgo.NewClient(kgoBase(bootstrap, "")...)
	if err != nil {
		return Metadata{}, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return Metadata{}, err
	}
	var out Metadata
	for _, b := range md.Brokers {
		out.Brokers = append(out.Brokers, BrokerMetadata{ID: b.NodeID, Host: b.Host, Port: b.Port})
	}
	for _, name := range topics {
		td, ok := md.Topics[name]
		if !ok {
			continue
		}
		if td.Err != nil {
			return Metadata{}, fmt.Errorf("topic %s: %w", name, td.Err)
		}
		tm := TopicMetadata{Name: name}
		for _, p := range td.Partitions.Sorted() {
			tm.Partitions = append(tm.Partitions, PartitionMetadata{Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR})
		}
		out.Topics = append(out.Topics, tm)
	}
	return out, nil
}

func (FranzGo) Describe(err error) string {
	if isConnectionError(err) {
		return connectionError
	}
	var parts []string
	var dl *kgo.ErrDataLoss
	switch {
	case errors.As(err, &dl):
		return fmt.Sprintf("*kgo.ErrDataLoss (consumed to %d, reset to %d)", dl.ConsumedTo, dl.ResetTo)
	case errors.Is(err, kgo.ErrRecordTimeout):
		parts = append(parts, "kgo.ErrRecordTimeout")
	case errors.Is(err, kgo.ErrRecordRetries):
		parts = append(parts, "kgo.ErrRecordRetries")
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if len(parts) > 0 {
			parts = append(parts, "last error")
		}
		parts = append(parts, "*kerr.Error "+ke.Message)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%T", err)
	}
	return strings.Join(parts, ", ")
}
