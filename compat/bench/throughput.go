package bench

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The throughput workloads: produce and consume N records of one size,
// through franz-go or the raw client (wire.go), and the memory held.

// throughputShape is a throughput workload: the record size and count, and
// the client that produces and consumes (franz-go, or the raw client of
// wire.go that takes the client's work out of the figures).
type throughputShape struct {
	workload string
	size, n  int
	raw      bool
}

func (o Options) throughputShape(workload string) (throughputShape, bool) {
	switch workload {
	case "throughput-100":
		return throughputShape{workload, 100, int(1_000_000 * o.Scale), false}, true
	case "throughput-1k":
		return throughputShape{workload, 1024, int(250_000 * o.Scale), false}, true
	// The raw client is several times faster: more records, so that a run
	// lasts long enough to time.
	case "wire-100":
		return throughputShape{workload, 100, int(4_000_000 * o.Scale), true}, true
	case "wire-1k":
		return throughputShape{workload, 1024, int(1_000_000 * o.Scale), true}, true
	}
	return throughputShape{}, false
}

// label names the shape's rows: "100 B", "1 KiB raw".
func (s throughputShape) label() string {
	l := "1 KiB"
	if s.size == 100 {
		l = "100 B"
	}
	if s.raw {
		l += " raw"
	}
	return l
}

func (s throughputShape) once(ctx context.Context, t Target, opt Options) (throughputFigures, error) {
	if s.raw {
		return wireOnce(ctx, t, opt, s.size, max(s.n, 1))
	}
	return throughputOnce(ctx, t, opt, s.size, max(s.n, 1))
}

// throughput runs throughputOnce once to warm up, then opt.Runs times,
// and keeps the median of each figure. The warm-up matters: the first run
// in a process pays a page fault for every page the heap grows into, which
// on the VM this was written on makes it several times slower than the
// runs after it.
func throughput(ctx context.Context, t Target, opt Options, shape throughputShape, res *Results) error {
	var figs []throughputFigures
	for run := range opt.Runs + 1 {
		f, err := shape.once(ctx, t, opt)
		if err != nil {
			return err
		}
		progressRun(opt, t, shape, run, f)
		if run > 0 {
			figs = append(figs, f)
		}
	}
	recordThroughput(t, shape, figs, res)
	return nil
}

// throughputRounds is throughput for several targets at once, interleaved:
// each round runs every target once, so a ratio can be taken between
// neighbouring runs and a burst of other load on the machine hits one round
// of every target instead of all runs of one. A target that fails drops out.
func throughputRounds(ctx context.Context, targets []Target, opt Options, shape throughputShape, res *Results) {
	figs := make([][]throughputFigures, len(targets))
	failed := make([]bool, len(targets))
	for run := range opt.Runs + 1 {
		for i, t := range targets {
			if failed[i] {
				continue
			}
			f, err := shape.once(ctx, t, opt)
			if err != nil {
				failed[i] = true
				res.fail(t.Name(), shape.workload, err)
				opt.Progress("%s: %s failed: %v", t.Name(), shape.workload, err)
				continue
			}
			progressRun(opt, t, shape, run, f)
			if run > 0 {
				figs[i] = append(figs[i], f)
			}
		}
	}
	for i, t := range targets {
		if !failed[i] {
			recordThroughput(t, shape, figs[i], res)
		}
	}
}

func progressRun(opt Options, t Target, shape throughputShape, run int, f throughputFigures) {
	rss := ""
	if f.peakRSS > 0 {
		rss = ", peak RSS " + formatBytes(float64(f.peakRSS))
	}
	opt.Progress("%s: %s run %d: produce %s (%s), consume %s (%s)%s", t.Name(), shape.label(), run,
		formatRate(f.produce), f.produceStats, formatRate(f.consume), f.consumeStats, rss)
}

// recordThroughput keeps the median of each figure over the measured runs,
// and every run's figure in order, for ratios between neighbouring runs.
func recordThroughput(t Target, shape throughputShape, figs []throughputFigures, res *Results) {
	label, size := shape.label(), shape.size
	var prod, cons, mem, rss []float64
	for _, f := range figs {
		if f.peakRSS > 0 {
			rss = append(rss, float64(f.peakRSS))
		}
		if f.kept < f.sent {
			note := fmt.Sprintf("kept %d of the %d records produced (its log start moved up); consumed and measured over the records kept", f.kept, f.sent)
			res.note(t, "consume "+label, note)
			res.note(t, "memory "+label, note)
		}
		prod, cons = append(prod, f.produce), append(cons, f.consume)
		if f.memOK {
			mem = append(mem, f.memory)
		}
	}
	p, c := median(prod), median(cons)
	res.set(t, "produce "+label, p)
	res.setRuns(t, "produce "+label, prod)
	res.setBytesRate("produce "+label, t, p*float64(size))
	res.set(t, "consume "+label, c)
	res.setRuns(t, "consume "+label, cons)
	res.setBytesRate("consume "+label, t, c*float64(size))
	if len(mem) > 0 {
		res.set(t, "memory "+label, median(mem))
	}
	if len(rss) > 0 {
		res.set(t, "peak RSS "+label, median(rss))
		res.setRuns(t, "peak RSS "+label, rss)
	}
}

type throughputFigures struct {
	produce, consume float64 // records/s
	memory           float64 // bytes held per byte of record values kept
	memOK            bool
	sent, kept       int64 // records produced, records the target still has
	peakRSS          int64 // a process target's summed peak RSS by the end; 0 otherwise

	produceStats, consumeStats string
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// throughputOnce produces n records of size bytes into a fresh cluster
// (opt.Partitions partitions, rf=3 where supported), measures the memory
// the cluster then holds, and consumes them all back with a fresh consumer.
func throughputOnce(ctx context.Context, t Target, opt Options, size, n int) (f throughputFigures, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	before := snapshotMem()
	inst, err := t.Start(ctx, []TopicSpec{{Name: "bench", Partitions: opt.Partitions, RecordSize: size}})
	if err != nil {
		return f, err
	}
	defer inst.Close()
	prod, err := kgo.NewClient(clientOpts(t, inst, kgo.DefaultProduceTopic("bench"), kgo.MaxBufferedRecords(100_000))...)
	if err != nil {
		return f, err
	}
	defer prod.Close()
	value := randomValue(size)
	// One record first, untimed: connections, metadata and the producer id.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		return f, fmt.Errorf("first record: %w", err)
	}

	var failed atomic.Pointer[error]
	cb := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	}
	st := startStats()
	start := time.Now()
	for range n {
		prod.Produce(ctx, &kgo.Record{Value: value}, cb)
	}
	if err := prod.Flush(ctx); err != nil {
		return f, err
	}
	took := time.Since(start)
	if e := failed.Load(); e != nil {
		return f, fmt.Errorf("produce: %w", *e)
	}
	f.produce = float64(n) / took.Seconds()
	f.produceStats = st.end()
	f.sent = int64(n + 1)
	if f.kept, err = countKept(ctx, prod, "bench"); err != nil {
		return f, err
	}
	prod.Close()

	if t.Caps().Stores {
		if g, ok := growth(t.Caps(), before, snapshotMem()); ok && f.kept > 0 {
			f.memory, f.memOK = g/float64(f.kept*int64(size)), true
		}
	}

	total := int(f.kept)
	st = startStats()
	start = time.Now()
	cons, err := kgo.NewClient(clientOpts(t, inst, kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return f, err
	}
	defer cons.Close()
	for got := 0; got < total; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return f, fmt.Errorf("consume after %d of %d records: %w", got, total, err)
		}
		got += fs.NumRecords()
	}
	f.consume = float64(total) / time.Since(start).Seconds()
	f.consumeStats = st.end()
	f.peakRSS, _ = peakRSSOf(inst)
	return f, nil
}

// countKept is how many records topic holds: the sum over its partitions
// of end offset minus start offset.
func countKept(ctx context.Context, cl *kgo.Client, topic string) (int64, error) {
	starts, ends, err := logOffsets(ctx, cl, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			n += o.Offset - s.Offset
		}
	})
	return n, nil
}

// logOffsets lists the log start and end offsets of topic's partitions.
func logOffsets(ctx context.Context, cl *kgo.Client, topic string) (starts, ends kadm.ListedOffsets, err error) {
	adm := kadm.NewClient(cl)
	starts, err = adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err = adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list end offsets: %w", err)
	}
	return starts, ends, nil
}
