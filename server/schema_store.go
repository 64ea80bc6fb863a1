package server

// The schema registry's Store (schemaregistry.Store) on the _schemas
// topic, on package coordinator's runtime: the topic's one partition is
// one shard, loaded on its leader at the leader epoch by replaying the log
// into a fresh schemaregistry.State, and loaded again from the new leader
// after a failover. A write appends Confluent's records with acks=all,
// waits until the HW covers them and only then replays them: what
// Confluent's KafkaStore and its KafkaStoreReaderThread amount to (the
// reader applies every committed record, in order, and a put waits for
// it).
//
// The topic is created when the registry starts, as Confluent's
// KafkaStore creates it: one partition, cleanup.policy=compact, and the
// desired replication factor (the cluster's default.replication.factor
// here, kafkastore.topic.replication.factor there) capped by the live
// brokers, with Confluent's warning when capped. min.insync.replicas is
// the broker's default, as Confluent sets none.
//
// Failed writes answer as Confluent's producer does: it is idempotent and
// retries what Kafka calls retriable (NOT_ENOUGH_REPLICAS, a missing or
// moved leader, a timed-out replication) every retry.backoff.ms, and the
// put gives up after kafkastore.timeout.ms, 500 ms.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/schemaregistry"
	"github.com/twmb/franz-go/pkg/kerr"
)

// schemasTopic is Confluent's kafkastore.topic default.
const schemasTopic = "_schemas"

const (
	// kafkastoreTimeout is Confluent's kafkastore.timeout.ms default: how
	// long a put waits for its ack.
	kafkastoreTimeout = 500 * time.Millisecond
	// schemasRetryBackoff is the producer's retry.backoff.ms default.
	schemasRetryBackoff = 100 * time.Millisecond
)

// schemasShard is the registry's state as the shard replays it.
type schemasShard struct {
	state *schemaregistry.State
	log   func(msg string, args ...any)
}

func (s *schemasShard) Replay(b coordinator.Batch) {
	if b.Control {
		return // nobody writes transactions to _schemas
	}
	for _, r := range b.Records {
		if err := s.state.Replay(schemaregistry.Record{Key: r.Key, Value: r.Value}); err != nil {
			// Confluent's reader logs a record it cannot read and goes on.
			s.log("skipping unreadable _schemas record", "offset", b.Offset, "key", string(r.Key), "error", err)
		}
	}
}

// schemaStore is the Store on _schemas.
type schemaStore struct {
	c  *Cluster
	rt *coordinator.Runtime[*schemasShard]
	// mu serialises writes, as Confluent's leader does; only Write
	// appends, so under mu, last is the outcome of its last append and
	// deadline bounds that append's replication wait.
	mu       sync.Mutex
	last     int16
	deadline time.Time
	// noop is set (under mu) when the end of the log is unknown, as at
	// start and after a failed put: Confluent's store then writes a NOOP
	// record before its next write, to read the log up to it.
	noop bool
	// stale is set when a failed write may still have reached the log:
	// the next use loads the shard again, so that an id it took is not
	// handed out twice (Confluent's reader would apply that record).
	stale atomic.Bool
	empty *schemaregistry.State // State before any load
}

// schemasLog is the _schemas partition as the runtime writes it: it keeps
// the Kafka error of the last append (the runtime maps it to a
// coordinator's) and bounds its replication wait by the put's deadline.
type schemasLog struct {
	coordinator.PartitionLog
	s *schemaStore
}

func (l schemasLog) Append(broker int32, b *replication.Batch, timeout time.Duration) (int32, int16) {
	if left := l.s.deadline.Sub(l.s.c.now()); left < timeout {
		timeout = max(left, time.Millisecond)
	}
	epoch, code := l.PartitionLog.Append(broker, b, timeout)
	l.s.last = code
	return epoch, code
}

// newSchemaStore sets up the store; open creates the topic.
func (c *Cluster) newSchemaStore() *schemaStore {
	s := &schemaStore{c: c, empty: schemaregistry.NewState(), noop: true}
	logf := func(msg string, args ...any) { c.log.Warn(msg, args...) }
	s.rt = coordinator.New(coordinator.Config[*schemasShard]{
		Topic: schemasTopic,
		Open: func() ([]coordinator.PartitionLog, error) {
			logs, err := c.openSchemasTopic()
			if err != nil {
				return nil, err
			}
			return []coordinator.PartitionLog{schemasLog{logs[0], s}}, nil
		},
		NewState: func(int32, coordinator.Epoch) *schemasShard {
			return &schemasShard{state: schemaregistry.NewState(), log: logf}
		},
		Loaded: func(_ *coordinator.Shard[*schemasShard], e coordinator.Epoch, _ *schemasShard) {
			c.log.Info("schema registry loaded _schemas", "broker", e.Leader, "epoch", e.Epoch)
		},
		Alive: func(id int32) bool {
			b := c.broker(id)
			return b != nil && b.up.Load()
		},
		Clock:        c.cfg.Clock,
		WriteTimeout: kafkastoreTimeout,
		Log:          c.log,
	})
	return s
}

// openSchemasTopic creates _schemas as Confluent's KafkaStore does, or
// checks the one there: one partition, compacted.
func (c *Cluster) openSchemasTopic() ([]coordinator.PartitionLog, error) {
	if t := c.topic(schemasTopic); t == nil {
		desired := c.cfg.DefaultReplicationFactor
		live := len(c.liveBrokers())
		if live == 0 {
			return nil, errors.New("no live Kafka brokers")
		}
		if rf := min(live, desired); rf < desired {
			c.log.Warn(fmt.Sprintf("Creating the schema topic %s using a replication factor of %d, which is less than the desired one of %d.",
				schemasTopic, rf, desired))
		}
		return c.internalTopic(schemasTopic, 1, desired, map[string]string{"cleanup.policy": "compact"})
	}
	logs, err := c.internalTopic(schemasTopic, 1, 0, nil)
	if err != nil {
		return nil, err
	}
	if len(logs) != 1 {
		return nil, fmt.Errorf("the schema topic %s should have only 1 partition but has %d", schemasTopic, len(logs))
	}
	if ps, _ := c.Partition(schemasTopic, 0); len(ps.Replicas) < c.cfg.DefaultReplicationFactor {
		c.log.Warn(fmt.Sprintf("The replication factor of the schema topic %s is less than the desired one of %d.", schemasTopic, c.cfg.DefaultReplicationFactor))
	}
	if policy := logValue(c.topic(schemasTopic).cfg().configs, c.brokerSettings(), "cleanup.policy"); policy != "compact" {
		return nil, fmt.Errorf("the retention policy of the schema topic %s is incorrect. Expected cleanup.policy to be 'compact' but it is %s", schemasTopic, policy)
	}
	return logs, nil
}

// shard is the _schemas shard, opening (creating) the topic on first use;
// a failed open is tried again next time.
func (s *schemaStore) shard() (*coordinator.Shard[*schemasShard], error) {
	if s.stale.Swap(false) {
		s.rt.Forget()
	}
	shards, err := s.rt.Shards()
	if err != nil {
		s.rt.Forget()
		return nil, err
	}
	return shards[0], nil
}

// State is the registry's content as loaded on the partition's leader,
// loading it there first when the leadership moved; while the partition
// has no leader, the content last loaded (Confluent's registry also
// serves reads from its local copy while Kafka is away).
func (s *schemaStore) State() *schemaregistry.State {
	sh, err := s.shard()
	if err != nil {
		return s.empty
	}
	if leader, code := sh.Coordinator(); code == 0 {
		if st, _, code := sh.Acquire(leader); code == 0 {
			return st.state
		}
	}
	if st, _, ok := sh.Loaded(); ok {
		return st.state
	}
	return s.empty
}

// Write appends recs to _schemas with acks=all and replays them once
// committed, retrying what Confluent's producer retries until
// kafkastore.timeout.ms; it fails with a *schemaregistry.StoreError.
// After a failed put, a NOOP record goes first, as in Confluent's store.
func (s *schemaStore) Write(ctx context.Context, recs []schemaregistry.Record) error {
	if len(recs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.findEnd(ctx); err != nil {
		return err
	}
	return s.put(ctx, recs)
}

// findEnd writes the NOOP record Confluent's store writes to learn the
// end of the log (getLatestOffset) when it does not know it: at start and
// after a failed put. Under mu.
func (s *schemaStore) findEnd(ctx context.Context) error {
	if !s.noop {
		return nil
	}
	return s.put(ctx, []schemaregistry.Record{schemaregistry.NoopRecord()})
}

// put is one put of Confluent's store, under mu.
func (s *schemaStore) put(ctx context.Context, recs []schemaregistry.Record) error {
	out := make([]coordinator.Record, len(recs))
	for i, r := range recs {
		out[i] = coordinator.Record{Key: r.Key, Value: r.Value}
	}
	s.noop = true // until it succeeds
	end := s.c.now().Add(kafkastoreTimeout)
	deadline := s.c.cfg.Clock.NewTimer(kafkastoreTimeout)
	defer deadline.Stop()
	var code int16
	mayHaveAppended := false
	for {
		var appended bool
		code, appended = s.writeOnce(out, end)
		mayHaveAppended = mayHaveAppended || appended
		if code == 0 {
			s.noop = false
			return nil
		}
		if code == kerr.MessageTooLarge.Code || code == kerr.RecordListTooLarge.Code {
			return &schemaregistry.StoreError{Cause: schemasCause(code)} // not retriable
		}
		if !s.backoff(ctx, deadline.C) {
			break
		}
	}
	if mayHaveAppended {
		s.stale.Store(true)
	}
	s.c.log.Warn("schema registry write failed", "error", schemasCause(code))
	return &schemaregistry.StoreError{Timeout: true, Cause: schemasCause(code)}
}

// backoff waits retry.backoff.ms before the next try; false when the put
// must give up first.
func (s *schemaStore) backoff(ctx context.Context, deadline <-chan time.Time) bool {
	t := s.c.cfg.Clock.NewTimer(schemasRetryBackoff)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-deadline:
	case <-ctx.Done():
	case <-s.c.closing:
	}
	return false
}

// writeOnce is one produce of recs to the partition's leader: the Kafka
// error code (0 when committed and replayed), and whether the records
// may have reached the log.
func (s *schemaStore) writeOnce(recs []coordinator.Record, end time.Time) (code int16, appended bool) {
	sh, err := s.shard()
	if err != nil {
		return kerr.UnknownTopicOrPartition.Code, false
	}
	leader, code := sh.Coordinator()
	if code != 0 {
		return kerr.LeaderNotAvailable.Code, false
	}
	_, e, code := sh.Acquire(leader)
	if code != 0 {
		return kerr.LeaderNotAvailable.Code, false
	}
	s.deadline, s.last = end, -1
	if code := sh.Write(e, coordinator.NoProducer, recs); code == 0 {
		return 0, true
	} else if s.last <= 0 {
		// The shard moved before the append, or the append was committed
		// and the shard moved before its replay: try again on the leader.
		return kerr.NotLeaderForPartition.Code, s.last == 0
	}
	switch s.last {
	case kerr.RequestTimedOut.Code, kerr.NotEnoughReplicasAfterAppend.Code:
		return s.last, true
	}
	return s.last, false
}

// schemasCause names a Kafka error on _schemas-0 with Kafka's message.
func schemasCause(code int16) string {
	if e := kerr.ErrorForCode(code); e != nil {
		var ke *kerr.Error
		if errors.As(e, &ke) {
			return fmt.Sprintf("%s-0: %s: %s", schemasTopic, ke.Message, ke.Description)
		}
		return fmt.Sprintf("%s-0: %v", schemasTopic, e)
	}
	return schemasTopic + "-0"
}
