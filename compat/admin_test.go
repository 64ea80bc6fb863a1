package compat

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/server"
)

// Partition changes through sarama's ClusterAdmin: CreatePartitions while
// a sarama consumer group runs (it notices the new partitions and
// rebalances) and a round-robin producer spreads to them; a reassignment
// with AlterPartitionReassignments / ListPartitionReassignments; log dirs.

func saramaAdmin(t *testing.T, c *server.Cluster) sarama.ClusterAdmin {
	t.Helper()
	adm, err := sarama.NewClusterAdmin(c.Bootstrap(), saramaConfig(sarama.WaitForAll))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Close() })
	return adm
}

type countingHandler struct {
	mu          sync.Mutex
	seen        map[string]int
	byPartition map[int32]int
}

func (*countingHandler) Setup(sarama.ConsumerGroupSession) error { return nil }

func (*countingHandler) Cleanup(s sarama.ConsumerGroupSession) error {
	s.Commit()
	return nil
}

func (h *countingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.mu.Lock()
			h.seen[string(m.Value)]++
			h.byPartition[m.Partition]++
			h.mu.Unlock()
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func (h *countingHandler) counts() (distinct int, onNew bool, dup bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.seen {
		dup = dup || n > 1
	}
	return len(h.seen), h.byPartition[1] > 0 && h.byPartition[2] > 0, dup
}

func TestSaramaCreatePartitionsUnderGroup(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic("grow", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	pcfg := saramaConfig(sarama.WaitForAll)
	pcfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	pcfg.Metadata.RefreshFrequency = 200 * time.Millisecond
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prod.Close() })

	ccfg := saramaConfig(sarama.WaitForAll)
	ccfg.Metadata.RefreshFrequency = 200 * time.Millisecond
	ccfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	ccfg.Consumer.Group.Rebalance.Retry.Backoff = 50 * time.Millisecond
	ccfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	group, err := sarama.NewConsumerGroup(c.Bootstrap(), "grow-g", ccfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &countingHandler{seen: map[string]int{}, byPartition: map[int32]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := group.Consume(ctx, []string{"grow"}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				t.Logf("consume: %v", err)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; group.Close() })

	n := 0
	send := func() {
		t.Helper()
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "grow", Value: sarama.StringEncoder("v" + strconv.Itoa(n))}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	for range 10 {
		send()
	}
	waitUntil(t, "the group reads partition 0", func() bool { d, _, _ := h.counts(); return d == 10 })

	if err := saramaAdmin(t, c).CreatePartitions("grow", 3, nil, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		send()
		if _, onNew, _ := h.counts(); onNew {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group never read partitions 1 and 2: %v", h.byPartition)
		}
		time.Sleep(5 * time.Millisecond) // pacing the producer, not synchronisation
	}
	waitUntil(t, "every record consumed", func() bool { d, _, _ := h.counts(); return d == n })
	if _, _, dup := h.counts(); dup {
		t.Errorf("a record was consumed twice")
	}
	err = saramaAdmin(t, c).CreatePartitions("grow", 2, nil, false)
	if !errors.Is(err, sarama.ErrInvalidPartitions) {
		t.Errorf("shrinking: %v, want INVALID_PARTITIONS", err)
	}
}

func TestSaramaReassignAndLogDirs(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 4})
	if err := c.CreateTopic("mv", 2, 2, nil); err != nil { // [1 2] and [2 3]
		t.Fatal(err)
	}
	pcfg := saramaConfig(sarama.WaitForAll)
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 20 {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "mv", Partition: 0, Value: sarama.StringEncoder(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	adm := saramaAdmin(t, c)
	if err := c.PauseReplica("mv", 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := adm.AlterPartitionReassignments("mv", [][]int32{{4, 2}}); err != nil {
		t.Fatal(err)
	}
	st, err := adm.ListPartitionReassignments("mv", []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := st["mv"][0]; s == nil || !slices.Equal(s.Replicas, []int32{4, 2, 1}) || !slices.Equal(s.AddingReplicas, []int32{4}) ||
		!slices.Equal(s.RemovingReplicas, []int32{1}) || st["mv"][1] != nil {
		t.Fatalf("listed %+v", st["mv"])
	}
	if err := c.ResumeReplica("mv", 0, 4); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reassignment to complete", func() bool {
		ps, _ := c.Partition("mv", 0)
		return ps.Leader == 4 && len(ps.Replicas) == 2 && ps.HighWatermark == 20
	})

	dirs, err := adm.DescribeLogDirs([]int32{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if d := dirs[4]; len(d) != 1 || d[0].Path != server.LogDir(4) || len(d[0].Topics) != 1 || d[0].Topics[0].Partitions[0].Size == 0 {
		t.Fatalf("broker 4 log dirs: %+v", d)
	}
	if d := dirs[1]; len(d) != 1 || len(d[0].Topics) != 0 {
		t.Fatalf("broker 1 still lists a replica: %+v", d)
	}
}
