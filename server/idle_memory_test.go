package server

import (
	"context"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The server's part of an idle partition (BenchmarkPartitionMemory
// measures the whole): a change here is a change in bytes per partition,
// so make it on purpose.
func TestPartitionStructSize(t *testing.T) {
	if got := unsafe.Sizeof(partition{}); got != 40 {
		t.Fatalf("unsafe.Sizeof(partition) = %d, want 40", got)
	}
}

// Partitions that clients, operators and the controller touch get extras
// of their own; an untouched one keeps pointing at the shared idle value,
// which stays zero (a write to it would be every idle partition's).
func TestIdlePartitionsShareExtras(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("idle", 5, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("idle", 0, 2); err != nil {
		t.Fatal(err)
	}
	parts := c.topic("idle").partitions()
	other := parts[1].st.Replicas()[1].Broker // a follower: the first replica leads
	if _, err := c.ElectLeader("idle", 1, other, false); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "idle", Partition: 2, Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := c.ResumeReplica("idle", 0, 2); err != nil {
		t.Fatal(err)
	}
	// Partition 3 is read by a consumer that waits for records there.
	cons := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"idle": {3: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
	waitFor(t, 10*time.Second, "the consumer's fetch waiting on partition 3", func() bool {
		ctx, cancel := context.WithTimeout(testContext(t), 300*time.Millisecond)
		cons.PollRecords(ctx, 1)
		cancel()
		p := parts[3]
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.partitionExtras != &idlePartition
	})
	cons.Close()

	for i, p := range parts {
		p.mu.Lock()
		shared := p.partitionExtras == &idlePartition
		p.mu.Unlock()
		if want := i == 4; shared != want {
			t.Errorf("partition %d shares the idle extras: %v, want %v", i, shared, want)
		}
	}
	if !reflect.DeepEqual(idlePartition, partitionExtras{}) {
		t.Fatalf("the shared idle extras were written: %+v", idlePartition)
	}
}
