package fakekafka_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// produceOne writes one record with acks=all and returns its offset.
func produceOne(ctx context.Context, t *testing.T, brokers []string, topic, value string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r := &kgo.Record{Value: []byte(value)}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatalf("producing to %v: %v", brokers, err)
	}
	return r.Offset
}

// A stopped and started container gets new host ports from Docker; the
// module advertises them again on start, so clients reach it. The cluster
// itself starts afresh (it keeps nothing on disk).
func TestRestartedContainerIsReachableOnItsNewPorts(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	ctr := run(t, fakekafka.WithBrokers(2))
	before, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	produceOne(ctx, t, before, "r", "before")

	stop := 5 * time.Second
	if err := ctr.Stop(ctx, &stop); err != nil {
		t.Fatal(err)
	}
	if err := ctr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Docker's port allocator moves on through its range, so a restart
	// gets new host ports: what this test is about.
	if slices.Equal(before, after) {
		t.Fatalf("the restart kept the host ports %v; the test proves nothing", before)
	}
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	ls, err := ctl.Listeners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range ls[0].Brokers {
		if b.Advertised != after[i] {
			t.Fatalf("after the restart EXTERNAL advertises %+v, want %v", ls[0].Brokers, after)
		}
	}
	if off := produceOne(ctx, t, after, "r", "after"); off != 0 {
		t.Fatalf("first record after the restart at offset %d, want 0 (a fresh cluster)", off)
	}
}

// Two clusters side by side in one test: separate ports, topics and ids.
func TestTwoClustersSideBySide(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	var (
		wg   sync.WaitGroup
		ctrs [2]*fakekafka.Container
	)
	for i, id := range []string{"left", "right"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctr, err := fakekafka.Run(ctx, image, fakekafka.WithClusterID(id), fakekafka.WithBrokers(2+i))
			ctrs[i] = ctr
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, ctr := range ctrs {
		if ctr != nil {
			t.Cleanup(func() { ctr.Terminate(context.Background()) })
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	var all []string
	for i, ctr := range ctrs {
		brokers, err := ctr.Brokers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(brokers) != 2+i {
			t.Fatalf("cluster %d has %d brokers, want %d", i, len(brokers), 2+i)
		}
		all = append(all, brokers...)
		for n := range 2 + i { // the second cluster gets one more record
			if off := produceOne(ctx, t, brokers, "shared-name", "v"); off != int64(n) {
				t.Fatalf("cluster %d: record %d at offset %d", i, n, off)
			}
		}
		ctl, err := ctr.Control(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := ctl.Cluster(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hw := topicNamed(t, st, "shared-name").Partitions[0].HighWatermark
		if want := []string{"left", "right"}[i]; st.ClusterID != want || hw != int64(2+i) {
			t.Fatalf("cluster %d: id %q, HW %d", i, st.ClusterID, hw)
		}
	}
	if slices.Sort(all); len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("the clusters share host addresses: %v", all)
	}
}
