package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The suite workload is the test package CI users have: SuiteTests tests,
// each with its own cluster (package bench/suite), run once one after the
// other and once with t.Parallel. It runs the compiled package as a child
// process, so its figures are what `go test` pays, including peak RSS.

// suiteTargets are the targets the suite package can start.
var suiteTargets = map[string]bool{"fakekafka": true, "kfake": true}

// suiteResult mirrors the line bench/suite's TestMain prints.
type suiteResult struct {
	Seconds    float64 `json:"seconds"`
	Goroutines int     `json:"goroutines_left"`
	Sockets    int     `json:"sockets_left"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
}

func suite(ctx context.Context, t Target, opt Options, res *Results) error {
	if !suiteTargets[t.Name()] {
		if t.Caps().Process {
			return suiteProcesses(ctx, t, opt, res)
		}
		return nil // not a Go library a test can start
	}
	bin, err := suiteBinary.build(ctx)
	if err != nil {
		return err
	}
	n := suiteTests(opt)
	var peak int64
	for _, parallel := range []bool{false, true} {
		r, rss, err := runSuite(ctx, bin, t.Name(), n, parallel)
		if err != nil {
			return err
		}
		if r.Goroutines > 0 || r.Sockets > 0 {
			return fmt.Errorf("suite (parallel=%v) left %d goroutines and %d sockets behind", parallel, r.Goroutines, r.Sockets)
		}
		key := "suite sequential"
		if parallel {
			key = "suite parallel"
		}
		res.set(t, key, r.Seconds/float64(n))
		peak = max(peak, rss)
	}
	res.set(t, "suite peak RSS", float64(peak))
	return nil
}

// suiteTests is how many tests the suite has: 1,000 at scale 1.
func suiteTests(opt Options) int { return max(1, int(1000*opt.Scale)) }

// runSuite runs the compiled suite and returns its result line and the
// child's peak RSS in bytes.
func runSuite(ctx context.Context, bin, target string, n int, parallel bool) (suiteResult, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.timeout=19m")
	p := "0"
	if parallel {
		p = "1"
	}
	cmd.Env = append(os.Environ(), "SUITE_TARGET="+target, "SUITE_TESTS="+strconv.Itoa(n), "SUITE_PARALLEL="+p)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return suiteResult{}, 0, fmt.Errorf("suite %s parallel=%v: %v\n%s", target, parallel, err, tail(out.String(), 2000))
	}
	var r suiteResult
	found := false
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "suite-result: "); ok {
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return r, 0, err
			}
			found = true
		}
	}
	if !found {
		return r, 0, fmt.Errorf("suite %s: no result line in its output", target)
	}
	// The child's own VmHWM: wait4's maxrss would include this process's
	// pages (exec keeps the high-water mark of the mm it replaces, which
	// after a vfork-style start is ours).
	rss := r.PeakRSS
	if rss == 0 {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss) * 1024 // Linux reports KiB
		}
	}
	return r, rss, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
