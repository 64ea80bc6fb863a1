package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// suiteProcesses is the suite workload for a target that runs as processes
// (the fakekafka binary, Kafka's JVMs), which no Go test can start in
// process: this process plays the test package, each test starting its own
// cluster, creating a topic (rf 3, min.insync.replicas 2), producing 5
// records with acks=all and consuming them, and closing it; once one test
// after another and once GOMAXPROCS tests at a time, as t.Parallel runs
// them. Fewer tests than the Go suite: a tenth, and Options.SlowStarts for
// Kafka, whose every cluster takes seconds.
func suiteProcesses(ctx context.Context, t Target, opt Options, res *Results) error {
	n := max(1, suiteTests(opt)/10)
	if t.Caps().Slow {
		n = min(n, opt.SlowStarts)
	}
	var peak int64
	for _, parallel := range []bool{false, true} {
		width := 1
		if parallel {
			width = runtime.GOMAXPROCS(0)
		}
		start := time.Now()
		var mu sync.Mutex
		var first error
		sem := make(chan struct{}, width)
		var wg sync.WaitGroup
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				rss, err := processTest(ctx, t, i)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && first == nil {
					first = err
				}
				peak = max(peak, rss)
			})
		}
		wg.Wait()
		if first != nil {
			return first
		}
		key := "suite sequential"
		if parallel {
			key = "suite parallel"
		}
		res.set(t, key, time.Since(start).Seconds()/float64(n))
		res.note(t, key, fmt.Sprintf("%d tests, each starting the target's processes and creating its topic explicitly (run by the bench, not go test)", n))
	}
	res.set(t, "suite peak RSS", float64(peak))
	res.note(t, "suite peak RSS", "the largest peak RSS of one test's cluster, summed over its processes (Kafka: 4 JVMs)")
	return nil
}

// processTest is one test of suiteProcesses, with the client settings of
// package bench/suite's tests; it returns the cluster's peak RSS.
func processTest(ctx context.Context, t Target, i int) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	topic := fmt.Sprintf("orders-%d", i)
	inst, err := t.Start(ctx, []TopicSpec{{Name: topic, Partitions: 1, RecordSize: 5}})
	if err != nil {
		return 0, err
	}
	defer inst.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(inst.Bootstrap()...), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	const n = 5
	for j := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(strconv.Itoa(j)), Value: []byte("value")}).FirstErr(); err != nil {
			return 0, fmt.Errorf("test %d: produce: %w", i, err)
		}
	}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("test %d: consumed %d of %d: %w", i, got, n, err)
		}
		if err := fs.Err0(); err != nil {
			return 0, fmt.Errorf("test %d: fetch: %w", i, err)
		}
		got += fs.NumRecords()
	}
	rss, _ := peakRSSOf(inst)
	return rss, nil
}
