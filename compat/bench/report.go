package bench

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// row is one line of the table: a metric, its unit and which way is better.
type row struct {
	key, label string
	kind       kind
	higher     bool // higher is better
}

type kind int

const (
	kindRate    kind = iota // records/s, with MB/s beside it
	kindSeconds             // a duration in seconds
	kindPerByte             // bytes held per byte sent
	kindBytes               // bytes
)

func rows(opt Options) []row {
	return []row{
		{"produce 100 B", "produce 100 B records, records/s", kindRate, true},
		{"consume 100 B", "consume 100 B records, records/s", kindRate, true},
		{"produce 1 KiB", "produce 1 KiB records, records/s", kindRate, true},
		{"consume 1 KiB", "consume 1 KiB records, records/s", kindRate, true},
		{"produce 100 B raw", "produce 100 B records, raw client (broker-bound), records/s", kindRate, true},
		{"consume 100 B raw", "consume 100 B records, raw client (broker-bound), records/s", kindRate, true},
		{"produce 1 KiB raw", "produce 1 KiB records, raw client (broker-bound), records/s", kindRate, true},
		{"consume 1 KiB raw", "consume 1 KiB records, raw client (broker-bound), records/s", kindRate, true},
		{"e2e latency p50", fmt.Sprintf("end-to-end latency p50 at %d records/s", opt.Rate), kindSeconds, false},
		{"e2e latency p99", fmt.Sprintf("end-to-end latency p99 at %d records/s", opt.Rate), kindSeconds, false},
		{"ack latency p50", fmt.Sprintf("produce ack latency p50 at %d records/s", opt.Rate), kindSeconds, false},
		{"ack latency p99", fmt.Sprintf("produce ack latency p99 at %d records/s", opt.Rate), kindSeconds, false},
		{"start to first ack", "cluster start to first acked record (median)", kindSeconds, false},
		{"rss idle", "process targets: peak RSS at the first ack (idle)", kindBytes, false},
		{"peak RSS 100 B", "process targets: peak RSS, produce and consume 100 B records", kindBytes, false},
		{"peak RSS 1 KiB", "process targets: peak RSS, produce and consume 1 KiB records", kindBytes, false},
		{"peak RSS 100 B raw", "process targets: peak RSS, raw client, 100 B records", kindBytes, false},
		{"peak RSS 1 KiB raw", "process targets: peak RSS, raw client, 1 KiB records", kindBytes, false},
		{"metadata time", fmt.Sprintf("Metadata, %d partitions (median call)", opt.MetadataPartitions), kindSeconds, false},
		{"metadata memory", fmt.Sprintf("memory for %d partitions", opt.MetadataPartitions), kindBytes, false},
		{"suite sequential", fmt.Sprintf("test suite, %d tests with a cluster each, sequential: time per test", suiteTests(opt)), kindSeconds, false},
		{"suite parallel", fmt.Sprintf("test suite, %d tests with a cluster each, t.Parallel: time per test", suiteTests(opt)), kindSeconds, false},
		{"suite peak RSS", "test suite: peak RSS of the test process", kindBytes, false},
		{"memory 100 B", "memory per byte of records held, 100 B records", kindPerByte, false},
		{"memory 1 KiB", "memory per byte of records held, 1 KiB records", kindPerByte, false},
	}
}

// Results holds every figure of a run.
type Results struct {
	opt     Options
	targets []string
	caps    map[string]Caps

	mu     sync.Mutex
	values map[string]map[string]float64   // row key -> target -> value
	bytes  map[string]map[string]float64   // row key -> target -> bytes/s
	runs   map[string]map[string][]float64 // row key -> target -> each measured run, in order
	notes  map[[2]string]string            // {row key, target} -> note
	errs   []string
}

func newResults(targets []Target, opt Options) *Results {
	r := &Results{opt: opt, caps: map[string]Caps{}, values: map[string]map[string]float64{}, bytes: map[string]map[string]float64{}, runs: map[string]map[string][]float64{}, notes: map[[2]string]string{}}
	for _, t := range targets {
		r.targets = append(r.targets, t.Name())
		r.caps[t.Name()] = t.Caps()
	}
	return r
}

func (r *Results) set(t Target, key string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values[key] == nil {
		r.values[key] = map[string]float64{}
	}
	r.values[key][t.Name()] = v
}

func (r *Results) setRuns(t Target, key string, vs []float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs[key] == nil {
		r.runs[key] = map[string][]float64{}
	}
	r.runs[key][t.Name()] = vs
}

// ratio is fakekafka's figure over a peer's: the median of the ratios
// between runs of the same round, with their range, when both have runs
// that were interleaved; else the ratio of the two medians.
func (r *Results) ratio(key, ref, peer string) (string, bool) {
	a, okA := r.values[key][ref]
	b, okB := r.values[key][peer]
	if !okA || !okB || b == 0 {
		return "", false
	}
	ra, rb := r.runs[key][ref], r.runs[key][peer]
	if len(ra) < 2 || len(ra) != len(rb) {
		return formatRatio(a / b), true
	}
	xs := make([]float64, 0, len(ra))
	for i := range ra {
		if rb[i] > 0 {
			xs = append(xs, ra[i]/rb[i])
		}
	}
	if len(xs) == 0 {
		return formatRatio(a / b), true
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	return fmt.Sprintf("%s (%s–%s)", formatRatio(median(xs)), strings.TrimSuffix(formatRatio(lo), "×"), formatRatio(hi)), true
}

func (r *Results) setBytesRate(key string, t Target, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bytes[key] == nil {
		r.bytes[key] = map[string]float64{}
	}
	r.bytes[key][t.Name()] = v
}

// note attaches a footnote to one figure.
func (r *Results) note(t Target, key, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[[2]string{key, t.Name()}] = text
}

func (r *Results) fail(target, workload string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf("%s, %s: %v", target, workload, err))
}

// Value returns one figure: records/s, seconds, bytes or bytes per byte.
func (r *Results) Value(key, target string) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.values[key][target]
	return v, ok
}

// Errors lists the workloads that failed.
func (r *Results) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// WriteTable writes the results as a Markdown table: one column of
// absolute figures per target, then one column per peer with the ratio
// fakekafka/peer. ↑ marks rows where higher is better, ↓ where lower is.
func (r *Results) WriteTable(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	const ref = "fakekafka"
	var peers []string
	for _, t := range r.targets {
		if t != ref {
			peers = append(peers, t)
		}
	}
	head := []string{"workload"}
	head = append(head, r.targets...)
	// Ratio columns: fakekafka over every peer, and the fakekafka binary
	// over Kafka (both separate processes, so the fairer pair for memory).
	var pairs [][2]string
	if _, ok := r.caps[ref]; ok {
		for _, p := range peers {
			pairs = append(pairs, [2]string{ref, p})
		}
	}
	for _, k := range []string{"kafka", "kafka-small"} {
		_, bin := r.caps["fakekafka-bin"]
		if _, ok := r.caps[k]; ok && bin {
			pairs = append(pairs, [2]string{"fakekafka-bin", k})
		}
	}
	for _, p := range pairs {
		head = append(head, p[0]+"/"+p[1])
	}
	fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	align := make([]string, len(head))
	align[0] = "---"
	for i := 1; i < len(align); i++ {
		align[i] = "---:"
	}
	fmt.Fprintln(w, "|"+strings.Join(align, "|")+"|")
	for _, rw := range rows(r.opt) {
		vals := r.values[rw.key]
		if len(vals) == 0 {
			continue
		}
		arrow := " ↓"
		if rw.higher {
			arrow = " ↑"
		}
		cells := []string{rw.label + arrow}
		for _, t := range r.targets {
			v, ok := vals[t]
			if !ok {
				cells = append(cells, "—")
				continue
			}
			cell := r.format(rw, t, v)
			if _, ok := r.notes[[2]string{rw.key, t}]; ok {
				cell += " *"
			}
			cells = append(cells, cell)
		}
		for _, p := range pairs {
			if x, ok := r.ratio(rw.key, p[0], p[1]); ok {
				cells = append(cells, x)
			} else {
				cells = append(cells, "—")
			}
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	// One footnote per target and text, naming every row it applies to.
	type noteKey struct{ target, text string }
	var order []noteKey
	noted := map[noteKey][]string{}
	for _, rw := range rows(r.opt) {
		for _, t := range r.targets {
			if n, ok := r.notes[[2]string{rw.key, t}]; ok {
				k := noteKey{t, n}
				if noted[k] == nil {
					order = append(order, k)
				}
				noted[k] = append(noted[k], rw.key)
			}
		}
	}
	if len(order) > 0 {
		fmt.Fprintln(w)
		for _, k := range order {
			fmt.Fprintf(w, "\\* %s (%s): %s  \n", k.target, strings.Join(noted[k], ", "), k.text)
		}
	}
	if len(r.errs) > 0 {
		fmt.Fprintln(w)
		errs := append([]string(nil), r.errs...)
		sort.Strings(errs)
		for _, e := range errs {
			fmt.Fprintln(w, "failed: "+e)
		}
	}
}

func (r *Results) format(rw row, target string, v float64) string {
	switch rw.kind {
	case kindRate:
		s := formatRate(v)
		if b, ok := r.bytes[rw.key][target]; ok {
			s += fmt.Sprintf(" (%.0f MB/s)", b/1e6)
		}
		return s
	case kindSeconds:
		return formatDuration(time.Duration(v * float64(time.Second)))
	case kindPerByte:
		return fmt.Sprintf("%.2f", v)
	case kindBytes:
		return formatBytes(v)
	}
	return fmt.Sprint(v)
}

func formatRate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k/s", v/1e3)
	}
	return fmt.Sprintf("%.0f/s", v)
}

func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
}

func formatBytes(v float64) string {
	neg := ""
	if v < 0 {
		neg, v = "-", -v
	}
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%s%.2f GiB", neg, v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%s%.1f MiB", neg, v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%s%.0f KiB", neg, v/(1<<10))
	}
	return fmt.Sprintf("%s%.0f B", neg, v)
}

func formatRatio(x float64) string {
	switch {
	case x > 0 && x < 0.02:
		// Far below 1 (start and memory against Kafka): the inverse reads
		// better, 0.0021× as 1/476×.
		return fmt.Sprintf("1/%.0f×", 1/x)
	case x < 0.1:
		return fmt.Sprintf("%.3f×", x)
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}
