package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/schemaregistry"
)

// The Store's own discipline on the _schemas partition, step by step (the
// REST API over it is tested in schema_registry_test.go).

func schemaRec(subject string, version, id int) schemaregistry.Record {
	return schemaregistry.SchemaRecord(schemaregistry.SchemaValue{Subject: subject, Version: version, ID: id, Schema: `"string"`})
}

func storeOf(t *testing.T, c *Cluster) *schemaStore {
	t.Helper()
	if c.sr == nil {
		t.Fatal("no schema registry")
	}
	return c.sr.store
}

// The topic is created at start as Confluent creates it, and a write is
// in the state once it returns.
func TestSchemaStoreTopicAndWrite(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	tp := c.topic(schemasTopic)
	if tp == nil {
		t.Fatal("_schemas not created at start")
	}
	cfg := tp.cfg().configs
	ps, _ := c.Partition(schemasTopic, 0)
	if len(tp.partitions()) != 1 || cfg["cleanup.policy"] != "compact" || len(ps.Replicas) != 3 || cfg["min.insync.replicas"] != "" {
		t.Fatalf("_schemas: %d partitions, configs %v, replicas %+v", len(tp.partitions()), cfg, ps.Replicas)
	}
	s := storeOf(t, c)
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.State().SchemaByID(1); !ok || v.Subject != "a" {
		t.Fatalf("id 1: %+v %v", v, ok)
	}
	if ps, _ := c.Partition(schemasTopic, 0); ps.HighWatermark != 2 { // Confluent's NOOP at start, then the schema
		t.Fatalf("HW %d", ps.HighWatermark)
	}
}

// Confluent's replication factor is the desired one capped by the live
// brokers: _schemas deleted while two of three brokers are down comes
// back, on the next use, with one replica and empty.
func TestSchemaStoreReplicationFactorCapped(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}})
	s := storeOf(t, c)
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{2, 3} {
		if err := c.StopBroker(id, StopClean); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteTopic(schemasTopic); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.State().SchemaByID(1); ok {
		t.Fatal("the content outlived its topic")
	}
	if ps, ok := c.Partition(schemasTopic, 0); !ok || len(ps.Replicas) != 1 || ps.Leader != 1 {
		t.Fatalf("_schemas again: %+v", ps)
	}
}

// Too few in-sync replicas: the write retries until kafkastore.timeout.ms
// and fails as Confluent's put does, naming NOT_ENOUGH_REPLICAS, with
// nothing applied; once the ISR heals the same write succeeds.
func TestSchemaStoreNotEnoughReplicas(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	s := storeOf(t, c)
	ps, _ := c.Partition(schemasTopic, 0)
	var followers []int32
	for _, r := range ps.Replicas {
		if r.Broker != ps.Leader {
			followers = append(followers, r.Broker)
			if err := c.PauseReplica(schemasTopic, 0, r.Broker); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.SetISR(schemasTopic, 0, []int32{ps.Leader}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)})
	took := time.Since(start)
	var se *schemaregistry.StoreError
	if !errors.As(err, &se) || !se.Timeout || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(se.Error(), "NOT_ENOUGH_REPLICAS") {
		t.Fatalf("write with ISR [%d]: %v", ps.Leader, err)
	}
	if took < kafkastoreTimeout {
		t.Fatalf("gave up after %v, before kafkastore.timeout.ms", took)
	}
	if _, ok := s.State().SchemaByID(1); ok {
		t.Fatal("a failed write was applied")
	}
	for _, f := range followers {
		if err := c.ResumeReplica(schemasTopic, 0, f); err != nil {
			t.Fatal(err)
		}
	}
	waitForISR(t, c, 3)
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.State().SchemaByID(1); !ok {
		t.Fatal("healed write not applied")
	}
	// The NOOP of the start, the NOOP Confluent's store writes after a
	// failed put, the record.
	if ps, _ := c.Partition(schemasTopic, 0); ps.HighWatermark != 3 {
		t.Fatalf("HW %d", ps.HighWatermark)
	}
}

func waitForISR(t *testing.T, c *Cluster, n int) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, fmt.Sprintf("%d replicas in the ISR of _schemas", n), func() bool {
		ps, _ := c.Partition(schemasTopic, 0)
		return len(ps.ISR) == n
	})
}

// The leader crashes: the state loads again from the new leader's log,
// and writes go there.
func TestSchemaStoreFailover(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	s := storeOf(t, c)
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	before, _ := c.Partition(schemasTopic, 0)
	if err := c.StopBroker(before.Leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	after, _ := c.Partition(schemasTopic, 0)
	if after.Leader == before.Leader || after.Leader < 0 {
		t.Fatalf("leader %d after crashing %d", after.Leader, before.Leader)
	}
	if v, ok := s.State().SchemaByID(1); !ok || v.Subject != "a" {
		t.Fatal("id 1 lost with the leader")
	}
	if _, e, ok := s.rt.Shard(0).Loaded(); !ok || e.Leader != after.Leader || e.Epoch != after.LeaderEpoch {
		t.Fatalf("loaded at %+v, leader %d epoch %d", e, after.Leader, after.LeaderEpoch)
	}
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 2, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := c.StartBroker(before.Leader); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.State().SchemaByID(2); !ok {
		t.Fatal("id 2 not applied")
	}
}

// No leader at all: the write times out naming it; it succeeds once a
// broker is back.
func TestSchemaStoreNoLeader(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, SchemaRegistry: &SchemaRegistryConfig{}})
	s := storeOf(t, c)
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}
	err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 2, 2)})
	var se *schemaregistry.StoreError
	if !errors.As(err, &se) || !se.Timeout || !strings.Contains(se.Error(), "LEADER_NOT_AVAILABLE") {
		t.Fatalf("write without a leader: %v", err)
	}
	if _, ok := s.State().SchemaByID(1); !ok {
		t.Fatal("reads without a leader lost id 1")
	}
	if err := c.StartBroker(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 2, 2)}); err != nil {
		t.Fatal(err)
	}
}

// With a data dir the content survives a restart of the whole cluster.
func TestSchemaStoreDataDir(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir, SchemaRegistry: &SchemaRegistryConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := storeOf(t, c1).Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 7)}); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	c2 := NewTestCluster(t, Config{DataDir: dir, SchemaRegistry: &SchemaRegistryConfig{}})
	if v, ok := storeOf(t, c2).State().SchemaByID(7); !ok || v.Subject != "a" || v.Version != 1 {
		t.Fatalf("after restart: %+v %v", v, ok)
	}
}

// Followers in the ISR that stop fetching: the record is appended but not
// committed within kafkastore.timeout.ms, so the put fails; once they
// fetch again it is committed, and the state has it as Confluent's reader
// would apply it (an id it took is never handed out twice).
func TestSchemaStoreTimedOutWriteCommitsLater(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	s := storeOf(t, c)
	ps, _ := c.Partition(schemasTopic, 0)
	for _, r := range ps.Replicas {
		if r.Broker != ps.Leader {
			if err := c.PauseReplica(schemasTopic, 0, r.Broker); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := s.Write(context.Background(), []schemaregistry.Record{schemaRec("a", 1, 1)})
	var se *schemaregistry.StoreError
	if !errors.As(err, &se) || !se.Timeout || !strings.Contains(se.Error(), "REQUEST_TIMED_OUT") {
		t.Fatalf("write with stalled followers: %v", err)
	}
	for _, r := range ps.Replicas {
		if r.Broker != ps.Leader {
			if err := c.ResumeReplica(schemasTopic, 0, r.Broker); err != nil {
				t.Fatal(err)
			}
		}
	}
	testkit.WaitFor(t, 10*time.Second, "the record to be committed (HW 2: the NOOP at start, the record)", func() bool {
		p, _ := c.Partition(schemasTopic, 0)
		return p.HighWatermark == 2
	})
	if _, ok := s.State().SchemaByID(1); !ok {
		t.Fatal("a committed record is not in the state")
	}
}

// An existing _schemas (here from a data dir) is checked as Confluent's
// store checks it: one partition, compacted, or the start fails.
func TestSchemaStoreChecksExistingTopic(t *testing.T) {
	for _, c := range []struct {
		partitions int32
		configs    map[string]string
		want       string
	}{
		{2, map[string]string{"cleanup.policy": "compact"}, "should have only 1 partition but has 2"},
		{1, nil, "Expected cleanup.policy to be 'compact' but it is delete"},
	} {
		dir := t.TempDir()
		c1, err := NewCluster(Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := c1.CreateTopic(schemasTopic, c.partitions, 3, c.configs); err != nil {
			t.Fatal(err)
		}
		c1.Close()
		c2, err := NewCluster(Config{DataDir: dir, SchemaRegistry: &SchemaRegistryConfig{}})
		if err == nil {
			c2.Close()
			t.Fatalf("%d partitions, %v: started", c.partitions, c.configs)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v, want %q", err, c.want)
		}
	}
}

// The producer's size estimate, as Kafka's estimateSizeInBytesUpperBound
// computes it.
func TestRecordSizeUpperBound(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 1}, {63, 1}, {64, 2}, {8191, 2}, {8192, 3}, {1 << 20, 4}} {
		if got := varintSize(c.n); got != c.want {
			t.Errorf("varintSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	key := make([]byte, 10)
	if got := recordSizeUpperBound(schemaregistry.Record{Key: key, Value: make([]byte, 200)}); got != 61+21+1+10+1+2+200 {
		t.Errorf("key 10, value 200: %d", got)
	}
	if got := recordSizeUpperBound(schemaregistry.Record{Key: key}); got != 61+21+1+10+1+1 {
		t.Errorf("key 10, null value: %d", got)
	}
}
