// Package suite is the workload most CI users have: a Go test package whose
// tests each start their own cluster, create a topic, produce and consume a
// few records and close it. The bench command (workload "suite") compiles it
// and runs it as a child process, so it measures what `go test` pays: total
// time, time per test and peak RSS. Run by itself it is a small check that a
// cluster per test leaves no goroutine and no socket behind.
//
//	SUITE_TARGET=fakekafka|kfake  (default fakekafka)
//	SUITE_TESTS=N                 (default 20)
//	SUITE_PARALLEL=1              (tests call t.Parallel)
package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Result is the line TestMain prints for the bench command to read.
type Result struct {
	Target     string  `json:"target"`
	Tests      int     `json:"tests"`
	Parallel   bool    `json:"parallel"`
	Seconds    float64 `json:"seconds"`
	Goroutines int     `json:"goroutines_left"`
	Sockets    int     `json:"sockets_left"`
	// PeakRSS is this process's VmHWM: wait4's maxrss of a child started
	// from a large parent counts the parent's pages (exec records the old
	// mm's high-water mark), so the bench asks the child itself.
	PeakRSS int64 `json:"peak_rss_bytes"`
}

const resultPrefix = "suite-result: "

var (
	target   = envOr("SUITE_TARGET", "fakekafka")
	tests    = envInt("SUITE_TESTS", 20)
	parallel = os.Getenv("SUITE_PARALLEL") == "1"
)

func TestMain(m *testing.M) {
	g0, s0 := runtime.NumGoroutine(), sockets()
	start := time.Now()
	code := m.Run()
	r := Result{Target: target, Tests: tests, Parallel: parallel, Seconds: time.Since(start).Seconds()}
	// Goroutines of a closed cluster may still be returning; give them a
	// bounded moment before counting what is left behind.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.Goroutines, r.Sockets = runtime.NumGoroutine()-g0, sockets()-s0
		if (r.Goroutines <= 0 && r.Sockets <= 0) || time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond) // polling a condition, not synchronising
	}
	r.PeakRSS = peakRSS()
	b, _ := json.Marshal(r)
	fmt.Println(resultPrefix + string(b))
	if code == 0 && (r.Goroutines > 0 || r.Sockets > 0) {
		fmt.Fprintf(os.Stderr, "left behind: %d goroutines, %d sockets\n", r.Goroutines, r.Sockets)
		code = 1
	}
	os.Exit(code)
}

// TestMany is the package's tests, as subtests so their number is a knob.
func TestMany(t *testing.T) {
	for i := range tests {
		t.Run(fmt.Sprintf("test%04d", i), func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			oneTest(t, i)
		})
	}
}

// oneTest is what a typical integration test does with its own cluster.
func oneTest(t *testing.T, i int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seeds := startCluster(t)
	topic := fmt.Sprintf("orders-%d", i)
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Created first, as the bench's process targets do: a topic a client
	// auto-creates costs franz-go a 250 ms retry (Kafka answers the creating
	// Metadata request UNKNOWN_TOPIC_OR_PARTITION), which would measure the
	// client's backoff rather than the cluster; so does a consumer asking
	// for a topic that is not there yet.
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl.AddConsumeTopics(topic)
	const n = 5
	for j := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(strconv.Itoa(j)), Value: []byte("value")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Errorf("fetch: %v", err) })
		got += fs.NumRecords()
	}
	if got != n {
		t.Fatalf("consumed %d records, want %d", got, n)
	}
}

func startCluster(t *testing.T) []string {
	switch target {
	case "fakekafka":
		c := server.NewTestCluster(t, server.Config{})
		return c.Bootstrap()
	case "kfake":
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.AllowAutoTopicCreation())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.ListenAddrs()
	}
	t.Fatalf("unknown SUITE_TARGET %q", target)
	return nil
}

// sockets counts this process's open sockets (Linux; 0 elsewhere).
func sockets() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}

// peakRSS is VmHWM from /proc/self/status in bytes (Linux; 0 elsewhere).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
