package reference

import (
	"fmt"
	"maps"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// Target is a cluster that a scenario drives, written once for both: the
// Apache Kafka reference cluster and fakekafka. Broker ids are 1..3 on both.
// Everything Kafka has a protocol for (elections, configs, topics) goes over
// the protocol instead, identically on both.
type Target interface {
	Name() string
	// Addr is broker id's client address; Bootstrap all of them.
	Addr(id int32) string
	Bootstrap() []string
	// Crash kills broker id without a goodbye (SIGKILL): its leaderships
	// move once the controller's broker session times out.
	Crash(id int32) error
	// Stop shuts broker id down cleanly (SIGTERM, a controlled shutdown).
	Stop(id int32) error
	// Start restarts a stopped or crashed broker and waits until it serves.
	Start(id int32) error
	// Pause stops broker id's followers from fetching; Resume lets them
	// fetch again. On Kafka this is SIGSTOP/SIGCONT of the whole broker, so
	// a scenario pauses only a broker that leads nothing it uses, talks to
	// no paused broker and does not depend on the controller fencing it
	// (Kafka fences a broker frozen for longer than the session timeout).
	Pause(id int32) error
	Resume(id int32) error
	Close() error
}

// Settings that both targets share (Kafka's names; KafkaSettings has them
// as server.properties).
const (
	replicaLagTimeMax = 3 * time.Second
	sessionTimeout    = 6 * time.Second
)

// KafkaTarget is the Target over a Kafka reference cluster.
type KafkaTarget struct{ *Kafka }

// Name is "Kafka".
func (KafkaTarget) Name() string { return "Kafka" }

// Fake is the Target over an in-process fakekafka cluster, configured as
// KafkaSettings configure the reference cluster.
type Fake struct {
	*server.Cluster
}

// NewFake starts a three-broker fakekafka cluster with the reference
// cluster's settings.
func NewFake() (*Fake, error) {
	c, err := server.NewCluster(server.Config{
		Brokers:                       3,
		DefaultReplicationFactor:      3,
		MinInsyncReplicas:             1,
		NumPartitions:                 1,
		ReplicaLagTimeMax:             replicaLagTimeMax,
		BrokerSessionTimeout:          sessionTimeout,
		OffsetsTopicPartitions:        3,
		OffsetsTopicReplicationFactor: 3,

		TransactionStatePartitions:       3,
		TransactionAbortTimedOutInterval: time.Second,
		// The same server.properties, so DescribeConfigs reports the same
		// static configs (fakekafka acts on those it models).
		BrokerConfigs: maps.Clone(KafkaSettings),
	})
	if err != nil {
		return nil, err
	}
	return &Fake{Cluster: c}, nil
}

// Name is "fakekafka".
func (*Fake) Name() string { return "fakekafka" }

// Addr is broker id's address.
func (f *Fake) Addr(id int32) string { return f.Bootstrap()[id-1] }

// Crash is StopBroker(id, StopCrash).
func (f *Fake) Crash(id int32) error { return f.StopBroker(id, server.StopCrash) }

// Stop is StopBroker(id, StopClean).
func (f *Fake) Stop(id int32) error { return f.StopBroker(id, server.StopClean) }

// Start is StartBroker.
func (f *Fake) Start(id int32) error { return f.StartBroker(id) }

// Pause pauses every follower replica on broker id.
func (f *Fake) Pause(id int32) error { return f.setPaused(id, true) }

// Resume resumes every follower replica on broker id.
func (f *Fake) Resume(id int32) error { return f.setPaused(id, false) }

func (f *Fake) setPaused(id int32, paused bool) error {
	st := f.State()
	for _, b := range st.Brokers {
		if b.ID == id && !b.Up {
			return fmt.Errorf("broker %d is stopped", id) // as SIGCONT to a dead JVM
		}
	}
	for _, t := range st.Topics {
		for _, p := range t.Partitions {
			if paused && p.Leader == id {
				continue
			}
			for _, r := range p.Replicas {
				if r.Broker != id {
					continue
				}
				var err error
				if paused {
					err = f.PauseReplica(t.Name, p.Partition, id)
				} else {
					err = f.ResumeReplica(t.Name, p.Partition, id)
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
