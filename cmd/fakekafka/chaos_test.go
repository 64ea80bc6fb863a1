package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --chaos starts a run once the cluster is up and prints its seed; at
// shutdown the binary stops it and summarises the report.
func TestRunWithChaos(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--topics", "c:2", "--chaos", "gentle,seed=31,duration=1h"}, env(nil), pw, &stderr)
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	var lines []string
	for range 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	go io.Copy(io.Discard, pr)
	if !strings.HasPrefix(lines[0], "fakekafka ready") || !strings.HasPrefix(lines[1], "fakekafka chaos: seed=31 preset=gentle duration=1h0m0s") {
		t.Fatalf("output %q", lines)
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 || !strings.Contains(stderr.String(), "fakekafka chaos: seed=31, 0 actions, 0 violations") {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fakekafka did not stop after cancellation")
	}
}

func TestCtlChaos(t *testing.T) {
	c, ctl := ctlEnv(t)
	out := mustCtl(t, ctl, "chaos", "start", "gentle,seed=5,duration=1h")
	if !strings.HasPrefix(out, "chaos started: seed=5, ") {
		t.Fatalf("chaos start:\n%s", out)
	}
	if code, _, errs := ctl("chaos", "start", "rough"); code != 1 || !strings.Contains(errs, "already active") {
		t.Fatalf("second start: exit %d, %q", code, errs)
	}
	if out := mustCtl(t, ctl, "chaos", "report"); !strings.HasPrefix(out, "seed 5, running, 0 actions run, 0 violations") {
		t.Fatalf("chaos report:\n%s", out)
	}
	if out := mustCtl(t, ctl, "chaos", "stop"); !strings.HasPrefix(out, "seed 5, stopped") {
		t.Fatalf("chaos stop:\n%s", out)
	}
	file := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(file, []byte(`{"seed":8,"duration_ms":3600000,"actions":[{"at_ms":3000000,"kind":"crash","broker":2,"hold_ms":1000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, ctl, "chaos", "start", file); !strings.Contains(out, "seed=8, 2 actions") || !strings.Contains(out, "#1 at 50m0s: crash broker 2 for 1s") {
		t.Fatalf("chaos start FILE:\n%s", out)
	}
	if _, err := c.StopChaos(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"chaos"}, {"chaos", "start"}, {"chaos", "start", "gentle,seed=x"}, {"chaos", "dance"}} {
		if code, _, _ := ctl(bad...); code != 2 {
			t.Errorf("ctl %v: exit %d, want 2", bad, code)
		}
	}
}
