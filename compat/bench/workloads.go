package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Options sets the size of a run. The zero value of a field takes the
// default in brackets.
type Options struct {
	// Scale multiplies the record counts of the throughput workloads
	// (1.0: 1,000,000 records of 100 bytes and 250,000 of 1 KiB).
	Scale float64
	// Partitions of the throughput and latency topic [12].
	Partitions int32
	// Runs is how many times each throughput workload runs, each on a
	// fresh cluster, after one warm-up run; the median of each figure is
	// kept [5].
	Runs int
	// Rate and LatencyFor shape the latency workload [5000 records/s, 5s].
	Rate       int
	LatencyFor time.Duration
	// StartupRuns is how many cold starts to the first ack are timed [10].
	StartupRuns int
	// SlowStarts caps the cold starts of the startup workload and the
	// tests of the suite workload for targets that take seconds to start
	// (Caps.Slow: Kafka) [3].
	SlowStarts int
	// MetadataPartitions is the partition count of the Metadata workload
	// [10000], MetadataCalls how many Metadata calls are timed [5].
	MetadataPartitions int32
	MetadataCalls      int
	// Workloads to run, by name (see WorkloadNames); empty runs them all.
	Workloads []string
	// Progress receives one line per step; nil is silent.
	Progress func(format string, args ...any)
	// Around, if set, wraps each target's run (cmd/bench starts a CPU
	// profile around fakekafka's with it).
	Around func(target string, run func())
}

// WorkloadNames are the workloads in the order they run.
var WorkloadNames = []string{"throughput-100", "throughput-1k", "wire-100", "wire-1k", "latency", "startup", "metadata", "suite"}

func (o Options) withDefaults() Options {
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.Partitions <= 0 {
		o.Partitions = 12
	}
	if o.Runs <= 0 {
		o.Runs = 5
	}
	if o.Rate <= 0 {
		o.Rate = 5000
	}
	if o.LatencyFor <= 0 {
		o.LatencyFor = 5 * time.Second
	}
	if o.StartupRuns <= 0 {
		o.StartupRuns = 10
	}
	if o.SlowStarts <= 0 {
		o.SlowStarts = 3
	}
	if o.MetadataPartitions <= 0 {
		o.MetadataPartitions = 10000
	}
	if o.MetadataCalls <= 0 {
		o.MetadataCalls = 5
	}
	if len(o.Workloads) == 0 {
		o.Workloads = WorkloadNames
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	if o.Around == nil {
		o.Around = func(_ string, run func()) { run() }
	}
	return o
}

// Run runs the chosen workloads against every target, one target after
// the other, and returns the results.
func Run(ctx context.Context, targets []Target, opt Options) *Results {
	// Interleave the throughput runs unless something (a CPU profile) must
	// wrap one target's workloads as a whole.
	interleave := opt.Around == nil && len(targets) > 1
	opt = opt.withDefaults()
	res := newResults(targets, opt)
	defer suiteBinary.remove()
	defer fakekafkaBinary.remove()
	// Builds and jar lookups happen before anything is timed; a target
	// that cannot be prepared drops out.
	var ready []Target
	for _, t := range targets {
		if p, ok := t.(preparer); ok {
			if err := p.Prepare(ctx); err != nil {
				res.fail(t.Name(), "prepare", err)
				opt.Progress("%s: %v", t.Name(), err)
				continue
			}
		}
		ready = append(ready, t)
	}
	targets = ready
	var rest []string
	for _, w := range opt.Workloads {
		shape, ok := opt.throughputShape(w)
		if !interleave || !ok {
			rest = append(rest, w)
			continue
		}
		opt.Progress("all targets, interleaved: %s", w)
		start := time.Now()
		throughputRounds(ctx, targets, opt, shape, res)
		opt.Progress("all targets: %s done in %v", w, time.Since(start).Round(time.Millisecond))
	}
	for _, t := range targets {
		opt.Around(t.Name(), func() {
			for _, w := range rest {
				opt.Progress("%s: %s", t.Name(), w)
				start := time.Now()
				var err error
				shape, isThroughput := opt.throughputShape(w)
				switch {
				case isThroughput:
					err = throughput(ctx, t, opt, shape, res)
				case w == "latency":
					err = latency(ctx, t, opt, res)
				case w == "startup":
					err = startup(ctx, t, opt, res)
				case w == "metadata":
					err = metadata(ctx, t, opt, res)
				case w == "suite":
					err = suite(ctx, t, opt, res)
				default:
					err = fmt.Errorf("unknown workload %q", w)
				}
				if err != nil {
					res.fail(t.Name(), w, err)
					opt.Progress("%s: %s failed: %v", t.Name(), w, err)
				} else {
					opt.Progress("%s: %s done in %v", t.Name(), w, time.Since(start).Round(time.Millisecond))
				}
			}
		})
	}
	return res
}

// clientOpts are the client settings shared by every workload: acks=all,
// idempotent (franz-go's default), no compression so that the brokers store
// what the producer sent, no linger so that latency is the broker's.
func clientOpts(t Target, inst Instance, extra ...kgo.Opt) []kgo.Opt {
	if co, ok := t.(clientOpter); ok {
		extra = append(co.ClientOpts(), extra...)
	}
	return append([]kgo.Opt{
		kgo.SeedBrokers(inst.Bootstrap()...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0),
		kgo.RetryTimeout(30 * time.Second),
	}, extra...)
}

func randomValue(size int) []byte {
	v := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}
