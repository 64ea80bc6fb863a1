package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	defer removeSuiteBinary()
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

// memSnapshot is the process's memory after a full collection.
type memSnapshot struct {
	heap  uint64 // Go heap in use by live objects
	cHeap int64  // C heap in use (-1: unknown)
}

// snapshotMem collects garbage and reads the heaps, until two readings
// 20 ms apart agree within 1 MiB (at most a second): a cluster closed just
// before may have goroutines that still hold its data for a moment. It
// does not return memory to the OS, so the timed work after it pays no
// extra page faults.
func snapshotMem() memSnapshot {
	read := func() memSnapshot {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		s := memSnapshot{heap: m.HeapAlloc, cHeap: -1}
		if n, ok := cHeapInUse(); ok {
			s.cHeap = n
		}
		return s
	}
	s := read()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		next := read()
		if absDiff(next.heap, s.heap) < 1<<20 && absDiff(uint64(next.cHeap), uint64(s.cHeap)) < 1<<20 {
			return next
		}
		s = next
	}
	return s
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// growth is what the target holds between two snapshots: Go heap for Go
// targets, C heap for librdkafka (whose Go side, the client, is closed).
func growth(caps Caps, before, after memSnapshot) (float64, bool) {
	if caps.GoHeap {
		return float64(after.heap) - float64(before.heap), true
	}
	if before.cHeap < 0 || after.cHeap < 0 {
		return 0, false
	}
	return float64(after.cHeap - before.cHeap), true
}

func randomValue(size int) []byte {
	v := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
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
	opt.Progress("%s: %s run %d: produce %s (%s), consume %s (%s)", t.Name(), shape.label(), run,
		formatRate(f.produce), f.produceStats, formatRate(f.consume), f.consumeStats)
}

// recordThroughput keeps the median of each figure over the measured runs,
// and every run's figure in order, for ratios between neighbouring runs.
func recordThroughput(t Target, shape throughputShape, figs []throughputFigures, res *Results) {
	label, size := shape.label(), shape.size
	var prod, cons, mem []float64
	for _, f := range figs {
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
}

type throughputFigures struct {
	produce, consume float64 // records/s
	memory           float64 // bytes held per byte of record values kept
	memOK            bool
	sent, kept       int64 // records produced, records the target still has

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
	return f, nil
}

// countKept is how many records topic holds: the sum over its partitions
// of end offset minus start offset.
func countKept(ctx context.Context, cl *kgo.Client, topic string) (int64, error) {
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("list end offsets: %w", err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			n += o.Offset - s.Offset
		}
	})
	return n, nil
}

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
func startup(ctx context.Context, t Target, opt Options, res *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	times := make([]time.Duration, 0, opt.StartupRuns)
	for range opt.StartupRuns {
		d, err := startOnce(ctx, t)
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	res.set(t, "start to first ack", percentile(times, 50).Seconds())
	return nil
}

func startOnce(ctx context.Context, t Target) (time.Duration, error) {
	start := time.Now()
	inst, err := t.Start(ctx, []TopicSpec{{Name: "first", Partitions: 1, RecordSize: 100}})
	if err != nil {
		return 0, err
	}
	defer inst.Close()
	cl, err := kgo.NewClient(clientOpts(t, inst, kgo.DefaultProduceTopic("first"))...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 100)}).FirstErr(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// metadata starts a cluster with one topic of opt.MetadataPartitions
// partitions, reports the memory that took, and times kadm Metadata calls
// for the topic (median of opt.MetadataCalls after one warm-up call).
func metadata(ctx context.Context, t Target, opt Options, res *Results) error {
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
type phaseStats struct {
	start         time.Time
	cpu, faults   int64
	gcs           uint32
	haveProcStats bool
}

func startStats() phaseStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	cpu, faults, ok := procStats()
	return phaseStats{start: time.Now(), cpu: cpu, faults: faults, gcs: m.NumGC, haveProcStats: ok}
}

func (s phaseStats) end() string {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	wall := time.Since(s.start)
	out := fmt.Sprintf("%v, %d GCs", wall.Round(time.Millisecond), m.NumGC-s.gcs)
	if cpu, faults, ok := procStats(); ok && s.haveProcStats {
		out += fmt.Sprintf(", %.0f%% CPU, %d page faults", 100*float64(cpu-s.cpu)/float64(wall), faults-s.faults)
	}
	return out
}

// procStats reads this process's CPU time (ns) and minor page faults from
// /proc/self/stat.
func procStats() (cpu, faults int64, ok bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0, false
	}
	// After the command: state(0) ppid pgrp session tty tpgid flags
	// minflt(7) cminflt majflt cmajflt utime(11) stime(12), in clock ticks.
	minflt, _ := strconv.ParseInt(f[7], 10, 64)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = int64(time.Second / 100) // USER_HZ is 100 on Linux
	return (utime + stime) * tick, minflt, true
}
