package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// latency produces opt.Rate records a second for opt.LatencyFor; each
// carries the time it was handed to the producer, and a consumer that
// polls all along takes the difference when it receives it. It also
// records the producer's acknowledgement latency.
func latency(ctx context.Context, t Target, opt Options, res *Results) error {
	ctx, cancel := context.WithTimeout(ctx, opt.LatencyFor+2*time.Minute)
	defer cancel()
	inst, err := t.Start(ctx, []TopicSpec{{Name: "latency", Partitions: opt.Partitions, RecordSize: 100}})
	if err != nil {
		return err
	}
	defer inst.Close()
	prod, err := kgo.NewClient(clientOpts(t, inst, kgo.DefaultProduceTopic("latency"))...)
	if err != nil {
		return err
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 100)}).FirstErr(); err != nil {
		return fmt.Errorf("first record: %w", err)
	}
	total := int(float64(opt.Rate) * opt.LatencyFor.Seconds())
	stores := t.Caps().Stores

	// The consumer runs from before the first timed record.
	var e2e []time.Duration
	consDone := make(chan error, 1)
	if stores {
		cons, err := kgo.NewClient(clientOpts(t, inst, kgo.ConsumeTopics("latency"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))...)
		if err != nil {
			return err
		}
		defer cons.Close()
		// Wait until it has fetched the first record, so that the timed
		// records find it polling.
		for got := 0; got < 1; {
			fs := cons.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				return err
			}
			got += fs.NumRecords()
		}
		e2e = make([]time.Duration, 0, total)
		go func() {
			for len(e2e) < total {
				fs := cons.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					consDone <- err
					return
				}
				now := time.Now().UnixNano()
				fs.EachRecord(func(r *kgo.Record) {
					if sent := int64(binary.BigEndian.Uint64(r.Value)); sent != 0 {
						e2e = append(e2e, time.Duration(now-sent))
					}
				})
			}
			consDone <- nil
		}()
	}

	var mu sync.Mutex
	acks := make([]time.Duration, 0, total)
	var failed atomic.Pointer[error]
	start := time.Now()
	for sent := 0; sent < total; {
		due := min(total, int(time.Since(start).Seconds()*float64(opt.Rate))+1)
		for ; sent < due; sent++ {
			v := make([]byte, 100)
			stamp := time.Now()
			binary.BigEndian.PutUint64(v, uint64(stamp.UnixNano()))
			prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				d := time.Since(stamp)
				mu.Lock()
				acks = append(acks, d)
				mu.Unlock()
			})
		}
		time.Sleep(time.Millisecond)
	}
	if err := prod.Flush(ctx); err != nil {
		return err
	}
	if e := failed.Load(); e != nil {
		return fmt.Errorf("produce: %w", *e)
	}
	mu.Lock()
	res.set(t, "ack latency p50", percentile(acks, 50).Seconds())
	res.set(t, "ack latency p99", percentile(acks, 99).Seconds())
	mu.Unlock()
	if stores {
		if err := <-consDone; err != nil {
			return fmt.Errorf("consume: %w", err)
		}
		res.set(t, "e2e latency p50", percentile(e2e, 50).Seconds())
		res.set(t, "e2e latency p99", percentile(e2e, 99).Seconds())
	}
	return nil
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// startup times a cold start to the first acknowledged record: start the
// cluster with a one-partition topic, create a client, produce one record
// with acks=all and wait for its ack. The median of opt.StartupRuns.
