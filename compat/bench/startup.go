package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func startup(ctx context.Context, t Target, opt Options, res *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	runs := opt.StartupRuns
	if t.Caps().Slow {
		runs = min(runs, opt.SlowStarts)
		ctx, cancel = context.WithTimeout(ctx, time.Duration(runs)*3*time.Minute)
		defer cancel()
	}
	times := make([]time.Duration, 0, runs)
	var rss []float64
	for range runs {
		d, idle, err := startOnce(ctx, t)
		if err != nil {
			return err
		}
		times = append(times, d)
		if idle > 0 {
			rss = append(rss, float64(idle))
		}
	}
	res.set(t, "start to first ack", percentile(times, 50).Seconds())
	opt.Progress("%s: start to first ack, each run: %v", t.Name(), times)
	if len(rss) > 0 {
		res.set(t, "rss idle", median(rss))
		opt.Progress("%s: peak RSS at the first ack, each run: %s", t.Name(), formatAll(rss, formatBytes))
	}
	return nil
}

func formatAll(xs []float64, f func(float64) string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return strings.Join(out, " ")
}

// startOnce times one cold start to the first ack; for a process target
// it also returns the processes' peak resident memory by then (idle: one
// record held).
func startOnce(ctx context.Context, t Target) (time.Duration, int64, error) {
	start := time.Now()
	inst, err := t.Start(ctx, []TopicSpec{{Name: "first", Partitions: 1, RecordSize: 100}})
	if err != nil {
		return 0, 0, err
	}
	defer inst.Close()
	cl, err := kgo.NewClient(clientOpts(t, inst, kgo.DefaultProduceTopic("first"))...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 100)}).FirstErr(); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	rss, _ := peakRSSOf(inst)
	return took, rss, nil
}

// metadata starts a cluster with one topic of opt.MetadataPartitions
// partitions, reports the memory that took, and times kadm Metadata calls
// for the topic (median of opt.MetadataCalls after one warm-up call).
func metadata(ctx context.Context, t Target, opt Options, res *Results) error {
	if t.Caps().Slow {
		return nil // Kafka takes minutes to create 10,000 partitions
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	before := snapshotMem()
	inst, err := t.Start(ctx, []TopicSpec{{Name: "meta", Partitions: opt.MetadataPartitions, RecordSize: 100}})
	if err != nil {
		return err
	}
	defer inst.Close()
	if g, ok := growth(t.Caps(), before, snapshotMem()); ok {
		res.set(t, "metadata memory", g)
	}

	cl, err := kgo.NewClient(clientOpts(t, inst)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	call := func() (time.Duration, error) {
		start := time.Now()
		md, err := adm.Metadata(ctx, "meta")
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		td, ok := md.Topics["meta"]
		if !ok || td.Err != nil {
			return 0, fmt.Errorf("topic meta missing from metadata: %v", td.Err)
		}
		if len(td.Partitions) != int(opt.MetadataPartitions) {
			return 0, fmt.Errorf("metadata has %d partitions, want %d", len(td.Partitions), opt.MetadataPartitions)
		}
		return d, nil
	}
	if _, err := call(); err != nil {
		return err
	}
	times := make([]time.Duration, 0, opt.MetadataCalls)
	for range opt.MetadataCalls {
		d, err := call()
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	res.set(t, "metadata time", percentile(times, 50).Seconds())
	return nil
}

// phaseStats counts what the process paid during a timed phase: CPU time,
// garbage collections and minor page faults (Linux only).
