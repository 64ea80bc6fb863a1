// Command bench runs fakekafka's side-by-side benchmarks: the same
// workloads, through the same franz-go client, against fakekafka
// (in-process, 3 brokers, rf=3, min.insync.replicas=2, acks=all), franz-go's
// kfake, librdkafka's mock cluster and a null broker, then prints one
// Markdown table of absolute figures and fakekafka/peer ratios. The
// wire-100 and wire-1k workloads replace franz-go with a raw client that
// sends pre-encoded requests, so that their figures are the brokers' own.
//
//	go run ./compat/cmd/bench                    # everything, full size (a few minutes)
//	go run ./compat/cmd/bench -scale 0.05        # a quick run
//	go run ./compat/cmd/bench -targets fakekafka -cpuprofile cpu.out
//	go run ./compat/cmd/bench -targets fakekafka,kfake,null -workloads wire-100,wire-1k
//	go run ./compat/cmd/bench -targets fakekafka,fakekafka-bin,kafka,kfake,null   # against Apache Kafka (needs Java)
//	BENCH_KAFKA=1 go run ./compat/cmd/bench      # the default targets, fakekafka-bin and kafka
//	go run ./compat/cmd/bench -gomaxprocs 1      # GOMAXPROCS for this process and the fakekafka binary
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/compat/bench"
)

func main() {
	var (
		scale   = flag.Float64("scale", 1, "multiplies the record counts (1: 1,000,000 × 100 B and 250,000 × 1 KiB)")
		targets = flag.String("targets", "", "comma-separated targets (default: "+strings.Join(names(bench.Targets()), ",")+
			"; also "+strings.Join(names(bench.OptionalTargets()), ",")+", or all of them with BENCH_KAFKA=1)")
		workloads  = flag.String("workloads", "", "comma-separated workloads (default all: "+strings.Join(bench.WorkloadNames, ",")+")")
		partitions = flag.Int("partitions", 12, "partitions of the throughput and latency topic")
		runs       = flag.Int("runs", 5, "measured runs of each throughput workload, each on a fresh cluster after one warm-up run (the median is shown)")
		rate       = flag.Int("rate", 5000, "records/s of the latency workload")
		latFor     = flag.Duration("latency-for", 5*time.Second, "duration of the latency workload")
		startRuns  = flag.Int("startup-runs", 10, "cold starts timed by the startup workload")
		slowStarts = flag.Int("slow-starts", 3, "cold starts (startup workload) and tests (suite workload) for Kafka, which starts in seconds")
		procs      = flag.Int("gomaxprocs", 0, "GOMAXPROCS for this process and the fakekafka binary (0: the GOMAXPROCS environment variable or every CPU)")
		metaParts  = flag.Int("metadata-partitions", 10000, "partitions of the metadata workload's topic")
		cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of the fakekafka target's workloads to this file")
		quiet      = flag.Bool("q", false, "no progress lines on stderr")
		timeout    = flag.Duration("timeout", 30*time.Minute, "give up after this long, printing every goroutine's stack")
	)
	flag.Parse()
	if *procs > 0 {
		// Through the environment, so that the re-executed command and the
		// fakekafka binary's processes get it too.
		os.Setenv("GOMAXPROCS", strconv.Itoa(*procs))
		runtime.GOMAXPROCS(*procs)
	}
	reexecWithMadvFree()
	time.AfterFunc(*timeout, func() {
		fmt.Fprintf(os.Stderr, "bench: timed out after %v\n", *timeout)
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		os.Exit(2)
	})

	chosen := bench.Targets()
	all := append(bench.Targets(), bench.OptionalTargets()...)
	if os.Getenv("BENCH_KAFKA") == "1" {
		chosen = all
	}
	if *targets != "" {
		chosen = nil
		for _, n := range strings.Split(*targets, ",") {
			i := slices.IndexFunc(all, func(t bench.Target) bool { return t.Name() == strings.TrimSpace(n) })
			if i < 0 {
				fmt.Fprintf(os.Stderr, "unknown target %q (have %s)\n", n, strings.Join(names(all), ", "))
				os.Exit(2)
			}
			chosen = append(chosen, all[i])
		}
	}
	opt := bench.Options{
		Scale:              *scale,
		Partitions:         int32(*partitions),
		Runs:               *runs,
		Rate:               *rate,
		LatencyFor:         *latFor,
		StartupRuns:        *startRuns,
		SlowStarts:         *slowStarts,
		MetadataPartitions: int32(*metaParts),
	}
	if *workloads != "" {
		for _, w := range strings.Split(*workloads, ",") {
			w = strings.TrimSpace(w)
			if !slices.Contains(bench.WorkloadNames, w) {
				fmt.Fprintf(os.Stderr, "unknown workload %q (have %s)\n", w, strings.Join(bench.WorkloadNames, ", "))
				os.Exit(2)
			}
			opt.Workloads = append(opt.Workloads, w)
		}
	}
	start := time.Now()
	if !*quiet {
		opt.Progress = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "%7.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
		}
	}
	if *cpuprofile != "" {
		opt.Around = func(target string, run func()) {
			if target != "fakekafka" {
				run()
				return
			}
			f, err := os.Create(*cpuprofile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
			run()
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res := bench.Run(ctx, chosen, opt)

	rounds := "interleaved rounds (ratios: the median of each round's ratio, with their range)"
	if opt.Around != nil || len(chosen) < 2 {
		rounds = "runs"
	}
	fmt.Printf("%d × %s, GOMAXPROCS %d, %s; scale %g, %d partitions, throughput: median of %d %s, GODEBUG=%s\n\n",
		runtime.NumCPU(), cpuModel(), runtime.GOMAXPROCS(0), runtime.Version(), *scale, *partitions, *runs, rounds, os.Getenv("GODEBUG"))
	res.WriteTable(os.Stdout)
	if len(res.Errors()) > 0 {
		os.Exit(1)
	}
}

func names(ts []bench.Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
