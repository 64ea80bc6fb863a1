package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/control"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ctlEnv starts a cluster with a control API and returns it with a
// function running "fakekafka ctl ARGS" against it.
func ctlEnv(t *testing.T) (*server.Cluster, func(args ...string) (int, string, string)) {
	c, _, ctl := ctlEnvURL(t)
	return c, ctl
}

// ctlEnvURL is ctlEnv that also returns the control URL.
func ctlEnvURL(t *testing.T) (*server.Cluster, string, func(args ...string) (int, string, string)) {
	t.Helper()
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(control.Handler(c))
	t.Cleanup(srv.Close)
	e := env(map[string]string{"FAKEKAFKA_CONTROL": srv.URL})
	return c, srv.URL, func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"ctl"}, args...), e, &out, &errb)
		return code, out.String(), errb.String()
	}
}

// ctlFor runs "fakekafka ctl ARGS..." against c's control API (served
// for the test) and returns the exit code, stdout and stderr.
func ctlFor(t *testing.T, c *server.Cluster) func(args ...string) (int, string, string) {
	srv := httptest.NewServer(control.Handler(c))
	t.Cleanup(srv.Close)
	e := env(map[string]string{"FAKEKAFKA_CONTROL": srv.URL})
	return func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"ctl"}, args...), e, &out, &errb)
		return code, out.String(), errb.String()
	}
}

func mustCtl(t *testing.T, ctl func(...string) (int, string, string), args ...string) string {
	t.Helper()
	code, out, errs := ctl(args...)
	if code != 0 {
		t.Fatalf("ctl %v: exit %d, stderr %q", args, code, errs)
	}
	return out
}

func TestCtlStateTableAndJSON(t *testing.T) {
	_, ctl := ctlEnv(t)
	out := mustCtl(t, ctl, "state")
	for _, want := range []string{"BROKER", "controller", "TOPIC", "t  ", "1:leader 0/0/0"} {
		if !strings.Contains(out, want) {
			t.Errorf("state table lacks %q:\n%s", want, out)
		}
	}
	var st server.ClusterState
	if err := json.Unmarshal([]byte(mustCtl(t, ctl, "--json", "state")), &st); err != nil || len(st.Brokers) != 3 || st.Topics[0].Name != "t" {
		t.Fatalf("ctl --json state: %+v, %v", st, err)
	}
	// --json also after the verb.
	if err := json.Unmarshal([]byte(mustCtl(t, ctl, "state", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, ctl, "groups"); !strings.HasPrefix(out, "GROUP") {
		t.Errorf("ctl groups on a cluster without groups:\n%s", out)
	}
	if code, _, errs := ctl("groups", "nope"); code != 1 || !strings.Contains(errs, "HTTP 404") {
		t.Errorf("ctl groups nope: exit %d, %q", code, errs)
	}
}

func TestCtlBrokerAndPartitionVerbs(t *testing.T) {
	c, ctl := ctlEnv(t)
	broker := func(id int32) server.BrokerState { return c.State().Brokers[id-1] }

	out := mustCtl(t, ctl, "crash", "2")
	if b := broker(2); b.Up || !b.Fenced {
		t.Fatalf("after ctl crash 2: %+v", b)
	}
	if !strings.Contains(out, "down, fenced") {
		t.Errorf("crash answer does not show broker 2 down:\n%s", out)
	}
	mustCtl(t, ctl, "restart", "2")
	mustCtl(t, ctl, "stop", "3", "--mode", "powerloss")
	if b := broker(3); b.Up {
		t.Fatalf("broker 3 up after ctl stop --mode powerloss")
	}
	mustCtl(t, ctl, "start", "3")
	mustCtl(t, ctl, "isolate", "3")
	if !broker(3).Isolated {
		t.Fatal("ctl isolate 3 did not isolate")
	}
	mustCtl(t, ctl, "heal", "3")

	mustCtl(t, ctl, "pause", "t", "0", "3")
	ps, _ := c.Partition("t", 0)
	if !ps.Replicas[2].Paused {
		t.Fatalf("ctl pause t 0 3: %+v", ps.Replicas[2])
	}
	mustCtl(t, ctl, "step", "t", "0", "3", "--up-to", "0")
	mustCtl(t, ctl, "resume", "t", "0", "3")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Broker 2 came back; wait until it is in the ISR again to elect it.
	waitISR := func(want []int32) {
		t.Helper()
		for {
			if ps, _ := c.Partition("t", 0); slices.Equal(ps.ISR, want) {
				return
			}
			if _, err := c.WaitFor(ctx, server.ISRExpanded("t", 0)); err != nil {
				t.Fatalf("ISR never became %v", want)
			}
		}
	}
	waitISR([]int32{1, 2, 3})
	out = mustCtl(t, ctl, "elect", "t", "0", "2")
	if ps, _ := c.Partition("t", 0); ps.Leader != 2 || !strings.Contains(out, "t      0          2") {
		t.Fatalf("ctl elect t 0 2: leader %d, output\n%s", ps.Leader, out)
	}
	mustCtl(t, ctl, "elect", "t", "0", "--preferred")
	if ps, _ := c.Partition("t", 0); ps.Leader != 1 {
		t.Fatalf("ctl elect --preferred: leader %d", ps.Leader)
	}
	mustCtl(t, ctl, "pause", "t", "0", "3")
	mustCtl(t, ctl, "isr", "t", "0", "1", "2")
	if ps, _ := c.Partition("t", 0); !slices.Equal(ps.ISR, []int32{1, 2}) {
		t.Fatalf("ctl isr t 0 1 2: ISR %v", ps.ISR)
	}
	// An election Kafka refuses is the API's 409, exit 1.
	if code, _, errs := ctl("elect", "t", "0", "3"); code != 1 || !strings.Contains(errs, "ELIGIBLE_LEADERS_NOT_AVAILABLE") {
		t.Fatalf("clean election of an out-of-sync replica: exit %d, %q", code, errs)
	}
	mustCtl(t, ctl, "elect", "t", "0", "3", "--unclean")
	if ps, _ := c.Partition("t", 0); ps.Leader != 3 {
		t.Fatalf("ctl elect --unclean: leader %d", ps.Leader)
	}
}

func TestCtlFaults(t *testing.T) {
	c, ctl := ctlEnv(t)
	out := mustCtl(t, ctl, "fault", "add", "--api", "Produce", "--error", "NOT_ENOUGH_REPLICAS", "--count", "3", "--topic", "t", "--partition", "0")
	fs := c.Faults()
	if len(fs) != 1 || fs[0].API != "Produce" || fs[0].Error != "NOT_ENOUGH_REPLICAS" || fs[0].Count != 3 || *fs[0].Partition != 0 {
		t.Fatalf("after ctl fault add: %+v", fs)
	}
	if !strings.Contains(out, "NOT_ENOUGH_REPLICAS") {
		t.Errorf("fault add output:\n%s", out)
	}
	if out := mustCtl(t, ctl, "faults"); !strings.Contains(out, fs[0].ID) || !strings.Contains(out, "Produce") {
		t.Errorf("ctl faults:\n%s", out)
	}
	mustCtl(t, ctl, "fault", "rm", fs[0].ID)
	if fs := c.Faults(); len(fs) != 0 {
		t.Fatalf("after ctl fault rm: %+v", fs)
	}
	if code, _, errs := ctl("fault", "add", "--api", "Produce", "--error", "NO_SUCH_ERROR"); code != 1 || !strings.Contains(errs, "NO_SUCH_ERROR") {
		t.Fatalf("bad fault: exit %d, %q", code, errs)
	}
}

func TestCtlErrors(t *testing.T) {
	_, ctl := ctlEnv(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"crash", "9"}, 1, "unknown broker 9 (HTTP 404)"},
		{[]string{"restart", "1"}, 1, "already running (HTTP 409)"},
		{[]string{"pause", "nope", "0", "1"}, 1, "unknown topic"},
		{[]string{"crash", "x"}, 2, "broker id \"x\" is not a number"},
		{[]string{"crash"}, 2, "crash wants BROKER"},
		{[]string{"pause", "t", "0"}, 2, "TOPIC PARTITION BROKER"},
		{[]string{"explode"}, 2, "unknown verb"},
		{[]string{}, 2, "missing verb"},
		{[]string{"events", "--type", "nope"}, 1, "unknown event type"},
		{[]string{"--control", "127.0.0.1:1", "state"}, 1, "cannot reach the control API"},
	} {
		code, _, errs := ctl(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("ctl %v: exit %d, stderr %q; want %d mentioning %q", c.args, code, errs, c.code, c.want)
		}
	}
	if code, out, _ := ctl("help"); code != 0 || !strings.Contains(out, "usage: fakekafka ctl") {
		t.Errorf("ctl help: %d %q", code, out)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCtlEvents(t *testing.T) {
	c, url, ctl := ctlEnvURL(t)
	if err := c.StopBroker(2, server.StopClean); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, ctl, "events", "--type", "broker_stopped,isr_shrunk")
	for _, want := range []string{"SEQ", "broker_stopped", "broker 2", "mode clean", "isr_shrunk", "t/0", "(controlled shutdown)"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl events lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "topic_created") {
		t.Errorf("--type did not filter:\n%s", out)
	}

	// --follow prints events as they happen until interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCtl(ctx, []string{"--control", url, "events", "--follow", "--type", "broker_started", "--json"}, env(nil), &buf, &buf)
	}()
	if err := c.StartBroker(2); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), `"type":"broker_started"`) {
		if time.Now().After(deadline) {
			t.Fatalf("ctl events --follow printed %q", buf.String())
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("ctl events --follow exited %d after an interrupt: %s", code, buf.String())
	}
}

func TestCtlClockAndTransactions(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Clock: clock.NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), TransactionStatePartitions: 3})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctl := ctlFor(t, c)
	if out := mustCtl(t, ctl, "clock"); !strings.Contains(out, "clock manual: now 2030-01-01T00:00:00Z") {
		t.Fatalf("ctl clock: %q", out)
	}
	var cs server.ClockState
	if err := json.Unmarshal([]byte(mustCtl(t, ctl, "--json", "advance", "31s")), &cs); err != nil || cs.AdvancedMillis != 31000 {
		t.Fatalf("ctl --json advance 31s: %+v, %v", cs, err)
	}
	if !c.Now().Equal(time.Date(2030, 1, 1, 0, 0, 31, 0, time.UTC)) {
		t.Fatalf("cluster clock at %v after advancing 31 s", c.Now())
	}
	if code, _, errs := ctl("advance", "5 parsecs"); code != 2 || !strings.Contains(errs, "non-negative Go duration") {
		t.Fatalf("ctl advance '5 parsecs': exit %d, %q", code, errs)
	}
	if code, _, _ := ctl("advance", "-5s"); code != 2 {
		t.Fatalf("ctl advance -5s: exit %d, want 2", code)
	}
	if out := mustCtl(t, ctl, "transactions"); !strings.Contains(out, "no transactional ids") {
		t.Fatalf("ctl transactions before any: %q", out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, ctl, "transactions")
	for _, want := range []string{"TRANSACTIONAL ID", "tx", "Ongoing", "t/0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("ctl transactions lacks %q:\n%s", want, out)
		}
	}
	// The transaction's events, by id.
	out = mustCtl(t, ctl, "events", "--transactional_id", "tx", "--type", "txn_state_changed")
	for _, want := range []string{"txn tx producer", "Empty -> Ongoing t/0", "(implicit add)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("ctl events --transactional_id tx lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "topic_created") {
		t.Fatalf("ctl events --transactional_id tx shows other events:\n%s", out)
	}
}

// ctl clean runs retention now: with retention.bytes 0 every segment below
// the HW goes (the active one after a roll, as in Kafka) and the log start
// moves to the LEO.
func TestCtlClean(t *testing.T) {
	c, ctl := ctlEnv(t)
	if err := c.CreateTopic("r", 1, 1, map[string]string{"retention.bytes": "0", "segment.bytes": "100", "retention.ms": "-1"}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 5 {
		if err := cl.ProduceSync(context.Background(), kgo.StringRecord(strings.Repeat("x", 60))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := mustCtl(t, ctl, "clean", "r", "0")
	ps, _ := c.Partition("r", 0)
	if ps.Replicas[0].LogStartOffset != 5 || !strings.Contains(out, "SEGMENTS DELETED") {
		t.Fatalf("after ctl clean r 0: log start %d, output\n%s", ps.Replicas[0].LogStartOffset, out)
	}
	var rs []server.CleanResult
	if err := json.Unmarshal([]byte(mustCtl(t, ctl, "--json", "clean", "r")), &rs); err != nil || len(rs) != 1 || rs[0].LogStartOffset != 5 || rs[0].SegmentsDeleted != 0 {
		t.Fatalf("ctl --json clean r: %+v %v", rs, err)
	}
	if code, _, errs := ctl("clean", "nope"); code != 1 || !strings.Contains(errs, "404") {
		t.Fatalf("ctl clean nope: exit %d %q", code, errs)
	}
}
