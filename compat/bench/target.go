package bench

import (
	"context"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TopicSpec is a topic a target creates before a workload starts.
type TopicSpec struct {
	Name       string
	Partitions int32
	// RecordSize is the value size the workload produces; only the null
	// broker uses it (for its canned Fetch batch).
	RecordSize int
}

// Caps says what a target can do, so that workloads skip or annotate what
// does not apply.
type Caps struct {
	// Brokers is the number of brokers started.
	Brokers int
	// RF3 is true when topics are created with replication factor 3.
	RF3 bool
	// Replicates is true when followers really copy the log and acks=all
	// waits for them (only fakekafka).
	Replicates bool
	// Stores is false for the null broker, which keeps nothing: consume
	// reads canned data, end-to-end latency and stored memory do not apply.
	Stores bool
	// GoHeap is true when the target's memory is on this process's Go heap;
	// otherwise it is measured as C heap in use (glibc's mallinfo2).
	GoHeap bool
	// Process is true when the target runs as processes of its own: its
	// memory is their resident set (/proc), not this process's heap.
	Process bool
	// Slow is true when a start takes seconds (Kafka's JVMs): the startup
	// and suite workloads start it Options.SlowStarts times, and the
	// metadata workload (10,000 partitions) leaves it out.
	Slow bool
}

// Target is a Kafka implementation to measure.
type Target interface {
	Name() string
	Caps() Caps
	// Start starts a fresh cluster with topics created, and returns once a
	// client can produce to them.
	Start(ctx context.Context, topics []TopicSpec) (Instance, error)
}

// clientOpter is a Target whose clients need extra options to work at all.
type clientOpter interface {
	ClientOpts() []kgo.Opt
}

// Instance is a running cluster.
type Instance interface {
	Bootstrap() []string
	Close()
}

// Targets returns every target compiled in, fakekafka first.
func Targets() []Target {
	ts := []Target{fakekafkaTarget{}, kfakeTarget{}}
	if newRdkafkaTarget != nil {
		ts = append(ts, newRdkafkaTarget())
	}
	return append(ts, nullTarget{brokers: 3}, nullTarget{brokers: 1})
}

// newRdkafkaTarget is set by rdkafka.go when cgo is available.
var newRdkafkaTarget func() Target

// fakekafka in-process: 3 brokers, rf=3, min.insync.replicas=2.
type fakekafkaTarget struct{}

func (fakekafkaTarget) Name() string { return "fakekafka" }
func (fakekafkaTarget) Caps() Caps {
	return Caps{Brokers: 3, RF3: true, Replicates: true, Stores: true, GoHeap: true}
}

type fakekafkaInstance struct{ c *server.Cluster }

func (fakekafkaTarget) Start(_ context.Context, topics []TopicSpec) (Instance, error) {
	c, err := server.NewCluster(server.Config{Brokers: 3})
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		if err := c.CreateTopic(t.Name, t.Partitions, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
			c.Close()
			return nil, err
		}
	}
	return fakekafkaInstance{c}, nil
}

func (i fakekafkaInstance) Bootstrap() []string { return i.c.Bootstrap() }
func (i fakekafkaInstance) Close()              { i.c.Close() }

// kfake in-process: 3 brokers; topics are seeded at start with its default
// replication factor (3 here), which is only reported, never replicated.
type kfakeTarget struct{}

func (kfakeTarget) Name() string { return "kfake" }
func (kfakeTarget) Caps() Caps {
	return Caps{Brokers: 3, RF3: true, Stores: true, GoHeap: true}
}

type kfakeInstance struct{ c *kfake.Cluster }

func (kfakeTarget) Start(_ context.Context, topics []TopicSpec) (Instance, error) {
	opts := []kfake.Opt{kfake.NumBrokers(3)}
	for _, t := range topics {
		opts = append(opts, kfake.SeedTopics(t.Partitions, t.Name))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, err
	}
	return kfakeInstance{c}, nil
}

func (i kfakeInstance) Bootstrap() []string { return i.c.ListenAddrs() }
func (i kfakeInstance) Close()              { i.c.Close() }

// The null broker: nothing stored. With 3 brokers it is the limit for the
// 3-broker workloads (franz-go's idempotent producer keeps one request in
// flight per broker, so one broker would cap produce at a third of the
// pipelining the others get); with 1 broker it is the single-connection
// limit.
//
// null-store and null-store-crc (named only) price what it skips, one step
// at a time: keeping every request in memory of its own, then checking
// every produced batch's CRC-32C as well. fakekafka against null-store-crc
// is then the rest of a broker: validation, the log, replication and acks.
type nullTarget struct {
	brokers         int
	store, checksum bool
}

func (t nullTarget) Name() string {
	switch {
	case t.brokers == 1:
		return "null-1broker"
	case t.checksum:
		return "null-store-crc"
	case t.store:
		return "null-store"
	}
	return "null"
}
func (t nullTarget) Caps() Caps { return Caps{Brokers: t.brokers, GoHeap: true} }

type nullInstance struct{ nb *NullBroker }

func (t nullTarget) Start(_ context.Context, topics []TopicSpec) (Instance, error) {
	nb, err := NewNullBrokerStoring(t.brokers, topics, t.store, t.checksum)
	if err != nil {
		return nil, err
	}
	return nullInstance{nb}, nil
}

func (i nullInstance) Bootstrap() []string { return i.nb.Addrs() }
func (i nullInstance) Close()              { i.nb.Close() }
