package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestHelperProcess is the fakekafka binary when a test runs this test
// binary as a subprocess with FAKEKAFKA_HELPER_PROCESS=1.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("FAKEKAFKA_HELPER_PROCESS") != "1" {
		t.Skip("only a subprocess of another test")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	os.Exit(run(ctx, args, os.Getenv, os.Stdout, os.Stderr))
}

// startProcess runs fakekafka as a subprocess and returns it with its
// bootstrap address once it is ready.
func startProcess(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "FAKEKAFKA_HELPER_PROCESS=1", "FAKEKAFKA_SCHEMA_REGISTRY=127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "fakekafka ready: bootstrap="); ok {
				ready <- strings.Fields(line)[0]
			}
		}
	}()
	select {
	case b := <-ready:
		return cmd, b
	case <-time.After(60 * time.Second):
		t.Fatal("fakekafka did not become ready")
	}
	return nil, ""
}

// A fakekafka process killed with SIGKILL in the middle of heavy acks=all
// produce restarts from its data dir with every acknowledged record at its
// offset, and the log is readable to its end (nothing corrupt).
func TestSIGKILLMidProduceKeepsAcknowledgedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fakekafka as a subprocess twice")
	}
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0", "--control", "", "--topics", "k:2:3"}
	proc, bootstrap := startProcess(t, args...)

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.DefaultProduceTopic("k"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(0), kgo.RecordDeliveryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		p   int32
		off int64
	}
	var mu sync.Mutex
	acked := map[key]string{}
	var wg sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for i := 0; ctx.Err() == nil; i++ {
		v := fmt.Sprintf("value-%06d-%s", i, strings.Repeat("x", i%200))
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				return
			}
			mu.Lock()
			acked[key{r.Partition, r.Offset}] = string(r.Value)
			n := len(acked)
			mu.Unlock()
			if n == 3000 {
				proc.Process.Kill() // SIGKILL: no clean shutdown, no final flush
				stop()
			}
		})
	}
	proc.Wait()
	cl.Close() // fails what was never answered
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < 3000 {
		t.Fatalf("only %d records acknowledged", len(acked))
	}

	_, bootstrap = startProcess(t, args...)
	want := map[int32]int64{} // partition -> highest acknowledged offset
	for k := range acked {
		want[k.p] = max(want[k.p], k.off)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ConsumeTopics("k"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[key]string{}
	for done := false; !done; {
		fs := cons.PollFetches(rctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consuming after the restart: %v (seen %d)", err, len(seen))
		}
		fs.EachRecord(func(r *kgo.Record) { seen[key{r.Partition, r.Offset}] = string(r.Value) })
		done = true
		for p, hi := range want {
			if _, ok := seen[key{p, hi}]; !ok {
				done = false
			}
		}
	}
	for k, v := range acked {
		if seen[k] != v {
			t.Fatalf("acknowledged record %d/%d: %q after the restart, want %q", k.p, k.off, seen[k], v)
		}
	}
	t.Logf("%d acknowledged records, %d read back after SIGKILL and restart", len(acked), len(seen))
}
