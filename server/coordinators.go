package server

// The cluster's two coordinators on package coordinator's runtime: the
// group coordinator over __consumer_offsets (group_coordinator.go) and the
// transaction coordinator over __transaction_state (txn_coordinator.go).
// This file is what the runtime needs of the cluster: the internal topics
// and a PartitionLog over each of their partitions.

import (
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's internal topics of the coordinators.
const (
	offsetsTopic  = "__consumer_offsets"
	txnStateTopic = "__transaction_state"
)

const (
	// offsetsCommitTimeout is offsets.commit.timeout.ms: how long a group
	// coordinator write waits for replication before failing.
	offsetsCommitTimeout = 5 * time.Second
	// txnWriteTimeout bounds a transaction coordinator's wait for its state
	// to replicate (Kafka uses the request timeout; the client retries on
	// COORDINATOR_NOT_AVAILABLE).
	txnWriteTimeout = 5 * time.Second
)

// newCoordinators sets up both runtimes; their topics are created on
// first use.
func (c *Cluster) newCoordinators() {
	alive := func(id int32) bool {
		b := c.broker(id)
		return b != nil && b.up.Load()
	}
	c.coord = coordinator.New(coordinator.Config[*groupShard]{
		Topic: offsetsTopic,
		Open: func() ([]coordinator.PartitionLog, error) {
			return c.internalTopic(offsetsTopic, c.cfg.OffsetsTopicPartitions, c.cfg.OffsetsTopicReplicationFactor,
				map[string]string{"cleanup.policy": "compact", "segment.bytes": "104857600"}) // offsets.topic.segment.bytes
		},
		NewState:     c.newGroupShard,
		AfterReplay:  (*groupShard).Loaded,
		Alive:        alive,
		Clock:        c.cfg.Clock,
		WriteTimeout: offsetsCommitTimeout,
		Log:          c.log,
	})
	c.txn.rt = coordinator.New(coordinator.Config[*transaction.Shard]{
		Topic: txnStateTopic,
		Open: func() ([]coordinator.PartitionLog, error) {
			return c.internalTopic(txnStateTopic, c.cfg.TransactionStatePartitions, c.cfg.TransactionStateReplicationFactor,
				map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "2", "segment.bytes": "104857600"}) // transaction.state.log.segment.bytes
		},
		NewState: transaction.NewShard,
		AfterReplay: func(s *transaction.Shard) {
			c.log.Info("transaction coordinator loaded", "partition", s.Index(), "epoch", s.At().Epoch, "transactions", s.Len())
		},
		Loaded:       c.txnShardLoaded,
		Alive:        alive,
		Clock:        c.cfg.Clock,
		WriteTimeout: txnWriteTimeout,
		Log:          c.log,
	})
}

// internalTopic returns the partitions of the internal topic name,
// creating it first if it does not exist: partitions, a replication factor
// of at most the live brokers, and configs.
func (c *Cluster) internalTopic(name string, partitions, rf int, configs map[string]string) ([]coordinator.PartitionLog, error) {
	t := c.topic(name)
	if t == nil {
		rf = min(rf, len(c.liveBrokers()))
		var e *kerr.Error
		var msg string
		t, e, msg = c.createTopic(topicSpec{name: name, partitions: int32(partitions), rf: int16(rf), configs: configs}, false)
		if t == nil {
			return nil, fmt.Errorf("creating %s: %v: %s", name, e, msg)
		}
	}
	var out []coordinator.PartitionLog
	for _, p := range t.partitions() {
		out = append(out, partitionLog{c, p})
	}
	return out, nil
}

// partitionLog is a coordinator's view of one partition of its topic.
type partitionLog struct {
	c *Cluster
	p *partition
}

func (l partitionLog) Index() int32 { return l.p.index }

func (l partitionLog) Leader(broker int32) (int32, int32) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	leader, epoch, _ := l.p.st.View(broker)
	return leader, epoch
}

func (l partitionLog) Load(broker int32) (int32, int32, []*replication.Batch) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	leader, epoch, _ := l.p.st.View(broker)
	if leader != broker {
		return leader, epoch, nil
	}
	return leader, epoch, append([]*replication.Batch(nil), l.p.st.Replica(broker).Log().Batches()...)
}

func (l partitionLog) Append(broker int32, b *replication.Batch, timeout time.Duration) (int32, int16) {
	return l.c.appendInternal(l.p, broker, b, timeout)
}

// appendInternal appends a batch a coordinator built to p as broker (which
// must lead it, or believe it does) with acks=all and waits until the HW
// covers it, the way Kafka's coordinators and marker writes use
// appendRecords. It returns the leader epoch of the append and the
// partition's error code; REQUEST_TIMED_OUT after timeout.
func (c *Cluster) appendInternal(p *partition, broker int32, b *replication.Batch, timeout time.Duration) (int32, int16) {
	wake := make(chan struct{}, 1)
	p.mu.Lock()
	var res replication.AppendResult
	var code int16
	var epoch int32
	p.mutate(func() {
		res, code = p.st.AppendAs(broker, b, -1, c.now())
		_, epoch, _ = p.st.View(broker)
	})
	if code == 0 {
		p.watch(wake)
	}
	p.mu.Unlock()
	if code != 0 {
		return epoch, code
	}
	defer p.unwatch(wake)
	timer := c.cfg.Clock.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		done, code := p.st.AppendStatus(broker, epoch, res.Required)
		p.mu.Unlock()
		if done {
			return epoch, code
		}
		select {
		case <-wake:
		case <-timer.C:
			return epoch, kerr.RequestTimedOut.Code
		case <-c.closing:
			return epoch, kerr.RequestTimedOut.Code
		}
	}
}

// coordinatorMoved is the coordinators' hook on a leader epoch change of
// one of their partitions: the transaction coordinator's new leader loads
// at once and finishes the transactions left prepared (the group
// coordinator loads on first use).
func (c *Cluster) coordinatorMoved(topic string) {
	if topic == txnStateTopic {
		c.wakeTxnLoop()
	}
}

// coordinatorLeaderListener tells the coordinators of a new leader epoch
// on a partition of their internal topics (the transaction coordinator's
// new leader loads and finishes prepared transactions at once; groups load
// on first use).
type coordinatorLeaderListener struct{ c *Cluster }

func (l *coordinatorLeaderListener) partitionChanged(p *partition, _ partitionChange) {
	if isInternalTopic(p.t.name) {
		l.c.coordinatorMoved(p.t.name)
	}
}

// forgetInternalTopic unloads the coordinator whose internal topic was
// deleted: Kafka 4.4 deletes __consumer_offsets and __transaction_state
// when asked (a clean-up that deletes every topic does), its coordinators
// resign their partitions, and the next FindCoordinator creates the topic
// again, empty.
func (c *Cluster) forgetInternalTopic(name string) {
	switch name {
	case offsetsTopic:
		c.coord.Forget()
	case txnStateTopic:
		c.txn.rt.Forget()
	case schemasTopic:
		if c.sr != nil {
			c.sr.store.rt.Forget()
		}
	}
}
