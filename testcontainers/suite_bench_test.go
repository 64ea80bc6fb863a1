package fakekafka_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// BenchmarkSuiteTest is the test CI users write, each with its own
// container (the shape of compat/bench/suite, there in process): Run a
// 3-broker cluster, produce five records to a new topic with acks=all,
// consume them, terminate. One iteration is one test; -cpu N runs N at
// once (t.Parallel's shape). Afterwards no container of the image may be
// left and the goroutines must be back where they started.
//
//	cd testcontainers && go test -run '^$' -bench SuiteTest -benchtime 100x -cpu 1,2
func BenchmarkSuiteTest(b *testing.B) {
	if image == "" {
		b.Skip("no Docker engine")
	}
	ctx := context.Background()
	g0 := runtime.NumGoroutine()
	var seq atomic.Int64
	b.SetParallelism(1) // -cpu sets how many tests run at once
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// RunParallel's goroutines may not call b.Fatal.
			if err := suiteTest(ctx, int(seq.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer dc.Close()
	list, err := dc.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("ancestor", image)})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(list.Items); n > 0 {
		b.Fatalf("%d containers of %s left behind", n, image)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > g0+2 && time.Now().Before(deadline) { // the Docker client's idle connection may linger
		time.Sleep(10 * time.Millisecond) // polling a condition, not synchronising
	}
	if n := runtime.NumGoroutine() - g0; n > 2 {
		b.Fatalf("%d goroutines left behind", n)
	}
}

func suiteTest(ctx context.Context, i int) (err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ctr, err := fakekafka.Run(ctx, image, fakekafka.WithBrokers(3))
	if ctr != nil {
		defer func() {
			if terr := ctr.Terminate(context.Background()); err == nil {
				err = terr
			}
		}()
	}
	if err != nil {
		return err
	}
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		return err
	}
	topic := fmt.Sprintf("orders-%d", i)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	const n = 5
	for j := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(strconv.Itoa(j)), Value: []byte("value")}).FirstErr(); err != nil {
			return err
		}
	}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d: %w", got, n, err)
		}
		got += fs.NumRecords()
	}
	return nil
}
