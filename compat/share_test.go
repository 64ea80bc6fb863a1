package compat

// Share groups (KIP-932) with Kafka's own KafkaShareConsumer
// (kafka-clients 4.4, compat/matrix/clients/java's Share class), driven
// step by step: implicit and explicit acknowledgement, a record never
// acknowledged coming back after the lock duration on the manual clock,
// the delivery count limit, two consumers sharing one partition, and a
// leader failover with records in flight. The adapter is built by
// scripts/matrix-clients.sh java; without it these tests skip unless
// SHARE_JAVA_REQUIRED=1 (as .ci/run sets).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// javaShare is one KafkaShareConsumer process.
type javaShare struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
}

type shareRec struct {
	Partition     int32  `json:"partition"`
	Offset        int64  `json:"offset"`
	Value         string `json:"value"`
	DeliveryCount int    `json:"deliveryCount"`
}

func (r shareRec) String() string { return fmt.Sprintf("%d/%d", r.Offset, r.DeliveryCount) }

type shareAnswer struct {
	Type    string            `json:"type"`
	Records []shareRec        `json:"records"`
	Errors  map[string]string `json:"errors"`
	Error   map[string]any    `json:"error"`
}

func javaShareDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("matrix/clients/java")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "target/classes/fakekafka/matrix/Share.class")); err != nil {
		if os.Getenv("SHARE_JAVA_REQUIRED") != "" {
			t.Fatalf("the Java share adapter is not built (bash scripts/matrix-clients.sh java): %v", err)
		}
		t.Skip("the Java share adapter is not built (bash scripts/matrix-clients.sh java); SHARE_JAVA_REQUIRED=1 makes this fail")
	}
	return dir
}

// startShare starts a share consumer of topic in group.
func startShare(t *testing.T, c *server.Cluster, group, topic, ackMode string, props map[string]string) *javaShare {
	t.Helper()
	dir := javaShareDir(t)
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", "target/classes:target/lib/*", "fakekafka.matrix.Share")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	js := &javaShare{t: t, cmd: cmd, in: in, lines: make(chan string, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = js.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(js.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			js.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	cfg := map[string]any{"bootstrap": strings.Join(c.Bootstrap(), ","), "group": group, "topic": topic, "ackMode": ackMode, "props": props}
	js.send(cfg)
	js.want("ready")
	return js
}

func (js *javaShare) send(v any) {
	js.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := js.in.Write(append(b, '\n')); err != nil {
		js.t.Fatalf("share consumer: %v; stderr: %s", err, js.stderr)
	}
}

func (js *javaShare) read() shareAnswer {
	js.t.Helper()
	select {
	case line, ok := <-js.lines:
		if !ok {
			js.t.Fatalf("the share consumer exited; stderr: %s", js.stderr)
		}
		var a shareAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			js.t.Fatalf("share consumer said %q: %v", line, err)
		}
		return a
	case <-time.After(90 * time.Second):
		js.t.Fatalf("the share consumer did not answer; stderr: %s", js.stderr)
	}
	return shareAnswer{}
}

func (js *javaShare) want(typ string) shareAnswer {
	js.t.Helper()
	a := js.read()
	if a.Type != typ {
		js.t.Fatalf("share consumer: %+v, want %s", a, typ)
	}
	return a
}

func (js *javaShare) poll(d time.Duration) []shareRec {
	js.t.Helper()
	js.send(map[string]any{"op": "poll", "ms": d.Milliseconds()})
	return js.want("records").Records
}

// pollUntil polls until cond holds for what one poll returned.
func (js *javaShare) pollUntil(what string, cond func([]shareRec) bool) []shareRec {
	js.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rs := js.poll(500 * time.Millisecond)
		if cond(rs) {
			return rs
		}
		if time.Now().After(deadline) {
			js.t.Fatalf("%s: the last poll returned %v", what, rs)
		}
	}
}

func (js *javaShare) ack(offset int64, typ string) {
	js.t.Helper()
	js.send(map[string]any{"op": "ack", "offset": offset, "ackType": typ})
	js.want("acked")
}

func (js *javaShare) commit() map[string]string {
	js.t.Helper()
	js.send(map[string]any{"op": "commit"})
	return js.want("committed").Errors
}

func (js *javaShare) close() {
	js.t.Helper()
	js.send(map[string]any{"op": "close"})
	js.want("closed")
}

// shareCluster is a 3-broker cluster on a manual clock with topic q.
func shareCluster(t *testing.T, partitions int32) (*server.Cluster, *clock.Clock) {
	clk := clock.NewManual(time.Time{})
	cfg := server.Config{Clock: clk}
	if os.Getenv("SHARE_DEBUG") != "" {
		cfg.LogRequests, cfg.Logger = true, slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	c := server.NewTestCluster(t, cfg)
	if err := c.CreateTopic("q", partitions, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func produceValues(t *testing.T, c *server.Cluster, partition int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("q"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Value: []byte(v), Partition: partition})
	}
	if err := cl.ProduceSync(t.Context(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// shareReady waits until group's share partitions are initialised (the
// consumer has fetched once): records produced after it are delivered
// under share.auto.offset.reset=latest.
func shareReady(t *testing.T, c *server.Cluster, js *javaShare, group string, partitions int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if gs, ok := c.Group(group); ok && len(gs.SharePartitions) >= partitions {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s has no share partitions", group)
		}
		js.poll(200 * time.Millisecond)
	}
}

func offsetsOf(rs []shareRec) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

// Implicit acknowledgement: the next poll accepts what the last returned;
// nothing comes back, even after the lock duration.
func TestShareConsumerJavaImplicit(t *testing.T) {
	c, _ := shareCluster(t, 1)
	js := startShare(t, c, "sg-implicit", "q", "implicit", nil)
	shareReady(t, c, js, "sg-implicit", 1)
	produceValues(t, c, 0, "a", "b", "c")
	rs := js.pollUntil("three records", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"0/1", "1/1", "2/1"}) {
		t.Fatalf("first poll: %v", got)
	}
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	if err := c.AdvanceClock(31 * time.Second); err != nil {
		t.Fatal(err)
	}
	if rs := js.poll(500 * time.Millisecond); len(rs) != 0 {
		t.Fatalf("accepted records came back: %v", offsetsOf(rs))
	}
	gs, _ := c.Group("sg-implicit")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 3 || len(sp.InFlight) != 0 {
		t.Fatalf("share partition after acceptance: %+v", sp)
	}
	js.close()
}

// Explicit acknowledgement: ACCEPT, RELEASE (delivered again with count
// 2), REJECT (never again); RELEASE up to the delivery limit (5) archives
// the record.
func TestShareConsumerJavaExplicit(t *testing.T) {
	c, _ := shareCluster(t, 1)
	js := startShare(t, c, "sg-explicit", "q", "explicit", nil)
	shareReady(t, c, js, "sg-explicit", 1)
	produceValues(t, c, 0, "a", "b", "c")
	rs := js.pollUntil("three records", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"0/1", "1/1", "2/1"}) {
		t.Fatalf("first poll: %v", got)
	}
	js.ack(0, "ACCEPT")
	js.ack(1, "RELEASE")
	js.ack(2, "REJECT")
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	for deliveries := 2; deliveries <= 5; deliveries++ {
		rs = js.pollUntil("1 again", func(rs []shareRec) bool { return len(rs) > 0 })
		if got := offsetsOf(rs); !slices.Equal(got, []string{fmt.Sprintf("1/%d", deliveries)}) {
			t.Fatalf("delivery %d: %v", deliveries, got)
		}
		js.ack(1, "RELEASE")
		if errs := js.commit(); len(errs) != 0 {
			t.Fatalf("commit: %v", errs)
		}
	}
	// The fifth delivery's release archived it.
	if rs := js.poll(500 * time.Millisecond); len(rs) != 0 {
		t.Fatalf("an archived record came back: %v", offsetsOf(rs))
	}
	gs, _ := c.Group("sg-explicit")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 3 || len(sp.InFlight) != 0 {
		t.Fatalf("share partition at the end: %+v", sp)
	}
	archived := false
	for _, e := range c.Events(0) {
		archived = archived || e.Type == server.EventShareRecordsArchived && e.Group == "sg-explicit" && e.From == 1 && e.To == 1
	}
	if !archived {
		t.Fatal("no share_records_archived event for offset 1")
	}
	js.close()
}

// A consumer that stalls (its process stopped) with records acquired: after
// the lock duration on the cluster's clock they go to another member with
// a second delivery, and the stalled consumer's late acknowledgement is
// refused (INVALID_RECORD_STATE).
func TestShareConsumerJavaLockExpiry(t *testing.T) {
	c, _ := shareCluster(t, 1)
	props := map[string]string{"fetch.max.wait.ms": "200"}
	a := startShare(t, c, "sg-stall", "q", "explicit", props)
	shareReady(t, c, a, "sg-stall", 1)
	produceValues(t, c, 0, "a", "b", "c")
	rs := a.pollUntil("a's records", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"0/1", "1/1", "2/1"}) {
		t.Fatalf("a: %v", got)
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Once a is stopped, its last long poll ends on the wall clock
	// (fetch.max.wait.ms) and it cannot send another.
	stat := fmt.Sprintf("/proc/%d/stat", a.cmd.Process.Pid)
	waitFor(t, 30*time.Second, "a stopped", func() bool {
		b, err := os.ReadFile(stat)
		i := bytes.LastIndexByte(b, ')')
		return err == nil && i > 0 && i+2 < len(b) && b[i+2] == 'T'
	})
	waitShare(t, c, "sg-stall", "a's fetch to end", func(sp api.SharePartitionState) bool { return sp.WaitingFetches == 0 })
	b := startShare(t, c, "sg-stall", "q", "explicit", props)
	if rs := b.poll(300 * time.Millisecond); len(rs) != 0 {
		t.Fatalf("b got records a holds: %v", offsetsOf(rs))
	}
	if err := c.AdvanceClock(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	rs = b.pollUntil("a's records at b", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"0/2", "1/2", "2/2"}) {
		t.Fatalf("b after a's locks expired: %v", got)
	}
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, r := range []int64{0, 1, 2} {
		a.ack(r, "ACCEPT")
	}
	if errs := a.commit(); errs["q-0"] != "InvalidRecordStateException" {
		t.Fatalf("a's late acknowledgement: %v", errs)
	}
	for _, r := range []int64{0, 1, 2} {
		b.ack(r, "ACCEPT")
	}
	if errs := b.commit(); len(errs) != 0 {
		t.Fatalf("b's acknowledgement: %v", errs)
	}
	released := false
	for _, e := range c.Events(0) {
		released = released || e.Type == server.EventShareRecordsReleased && e.Group == "sg-stall" && e.From == 0 && e.To == 2 &&
			e.Reason == "acquisition lock expired"
	}
	if !released {
		t.Fatal("no share_records_released event for 0-2")
	}
	a.close()
	b.close()
}

// waitShare waits until group's first share partition satisfies cond.
func waitShare(t *testing.T, c *server.Cluster, group, what string, cond func(api.SharePartitionState) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if gs, ok := c.Group(group); ok && len(gs.SharePartitions) > 0 && cond(gs.SharePartitions[0]) {
			return
		}
		if time.Now().After(deadline) {
			gs, _ := c.Group(group)
			t.Fatalf("%s: %+v", what, gs.SharePartitions)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
}

// Two consumers share one partition: every record is delivered to one of
// them, once, and a consumer that closes with records acquired gives them
// to the other.
func TestShareConsumerJavaTwoMembers(t *testing.T) {
	c, _ := shareCluster(t, 1)
	a := startShare(t, c, "sg-two", "q", "explicit", map[string]string{"max.poll.records": "2", "share.acquire.mode": "record_limit"})
	shareReady(t, c, a, "sg-two", 1)
	b := startShare(t, c, "sg-two", "q", "explicit", map[string]string{"max.poll.records": "2", "share.acquire.mode": "record_limit"})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if gs, _ := c.Group("sg-two"); len(gs.Members) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b did not join")
		}
		b.poll(200 * time.Millisecond)
	}
	produceValues(t, c, 0, "0", "1", "2", "3")
	ra := a.pollUntil("a's records", func(rs []shareRec) bool { return len(rs) > 0 })
	rb := b.pollUntil("b's records", func(rs []shareRec) bool { return len(rs) > 0 })
	// Which consumer's fetch comes first is the clients' timing: each gets
	// two (max.poll.records, record_limit), together 0-3 once.
	got := append(offsetsOf(ra), offsetsOf(rb)...)
	slices.Sort(got)
	if len(ra) != 2 || !slices.Equal(got, []string{"0/1", "1/1", "2/1", "3/1"}) {
		t.Fatalf("a got %v, b got %v", offsetsOf(ra), offsetsOf(rb))
	}
	// a closes holding its records (explicit mode, none acknowledged): they
	// go to b with a second delivery.
	b.ack(rb[0].Offset, "ACCEPT")
	b.ack(rb[1].Offset, "ACCEPT")
	b.commit()
	a.close()
	rs := b.pollUntil("a's records at b", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{fmt.Sprintf("%d/2", ra[0].Offset), fmt.Sprintf("%d/2", ra[1].Offset)}) {
		t.Fatalf("b after a closed: %v", got)
	}
	b.close()
}

// A leader failover with records in flight: acknowledged records stay
// done on the new leader (it reads the state the old one wrote), and the
// consumer carries on there; records acquired but not acknowledged when
// the leader moves are not in the written state: the member's later
// acknowledgement is refused and they come again with the same delivery
// count, unless the consumer's background fetch took them on the new
// leader first (then its acknowledgement holds).
func TestShareConsumerJavaFailover(t *testing.T) {
	c, _ := shareCluster(t, 1)
	js := startShare(t, c, "sg-failover", "q", "implicit", nil)
	shareReady(t, c, js, "sg-failover", 1)
	produceValues(t, c, 0, "a", "b", "c")
	rs := js.pollUntil("records", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"0/1", "1/1", "2/1"}) {
		t.Fatalf("first poll: %v", got)
	}
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	leaderOfQ := func() int32 {
		for _, tp := range c.State().Topics {
			if tp.Name == "q" {
				return tp.Partitions[0].Leader
			}
		}
		return -1
	}
	first := leaderOfQ()
	if _, err := c.ElectLeader("q", 0, first%3+1, false); err != nil {
		t.Fatal(err)
	}
	produceValues(t, c, 0, "d", "e")
	rs = js.pollUntil("on the new leader", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, []string{"3/1", "4/1"}) {
		t.Fatalf("on the new leader: %v (accepted records must not come back)", got)
	}
	// 3 and 4 are acquired, not yet acknowledged: the leader moves back.
	if _, err := c.ElectLeader("q", 0, first, false); err != nil {
		t.Fatal(err)
	}
	// The acknowledgement goes to the leader the client knew
	// (NOT_LEADER_OR_FOLLOWER) or reaches the new one, which holds 3-4
	// only if the consumer's background fetch re-acquired them first.
	if errs := js.commit(); errs["q-0"] != "" && errs["q-0"] != "NotLeaderOrFollowerException" && errs["q-0"] != "InvalidRecordStateException" {
		t.Fatalf("commit after the second failover: %v", errs)
	}
	// Until everything is accepted, what comes again is 3-4, at the
	// delivery count the written state gives them (1): 0-2 never.
	deadline := time.Now().Add(60 * time.Second)
	for {
		rs := js.poll(300 * time.Millisecond)
		for _, r := range rs {
			if r.Offset < 3 || r.DeliveryCount != 1 {
				t.Fatalf("after the second failover: %v", offsetsOf(rs))
			}
		}
		if len(rs) == 0 {
			if gs, _ := c.Group("sg-failover"); len(gs.SharePartitions) == 1 && gs.SharePartitions[0].StartOffset == 5 {
				break
			}
		}
		if time.Now().After(deadline) {
			gs, _ := c.Group("sg-failover")
			t.Fatalf("3-4 never accepted: %+v", gs.SharePartitions)
		}
	}
	waitShare(t, c, "sg-failover", "everything accepted", func(sp api.SharePartitionState) bool {
		return sp.Leader == first && sp.StartOffset == 5 && len(sp.InFlight) == 0
	})
	js.close()
}
