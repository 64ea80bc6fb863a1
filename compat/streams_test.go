package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka Streams 4.4 at group.protocol=streams (KIP-1071) against fakekafka:
// the Java app of compat/matrix/clients/java (StreamsApp: re-key, then
// count, exactly_once_v2) scales from one instance to three and back to
// one through a broker crash and a group coordinator crash, and every
// input record is counted exactly once; Kafka 4.4's admin (StreamsAdmin)
// lists, describes and resets the group.
//
// The app is built by scripts/matrix-clients.sh java; without it the test
// skips, unless FAKEKAFKA_STREAMS_JAVA=1 (as CI sets) says it must run.

const streamsJavaDir = "matrix/clients/java"

func streamsJava(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(streamsJavaDir, "target/classes/fakekafka/matrix/StreamsApp.class")); err != nil {
		if os.Getenv("FAKEKAFKA_STREAMS_JAVA") != "" {
			t.Fatalf("the Kafka Streams app is not built (bash scripts/matrix-clients.sh java): %v", err)
		}
		t.Skip("the Kafka Streams app is not built: bash scripts/matrix-clients.sh java (FAKEKAFKA_STREAMS_JAVA=1 makes this a failure)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	return []string{"java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k",
		"-cp", "target/classes:target/streams-lib/*:target/lib/*"}
}

// streamsApp is the running StreamsApp JVM and what its instances said.
type streamsApp struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mu    sync.Mutex
	state map[string]string // instance → last state
	lines []string
	done  chan struct{}
}

func startStreamsApp(t *testing.T, java []string, bootstrap, appID string) *streamsApp {
	args := append(slices.Clone(java[1:]), "fakekafka.matrix.StreamsApp", bootstrap, appID, "words", "counts", t.TempDir())
	cmd := exec.Command(java[0], args...)
	cmd.Dir = streamsJavaDir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &streamsApp{t: t, cmd: cmd, stdin: stdin, state: map[string]string{}, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.lines = append(a.lines, line)
			// CLOSED is final: a late NOT_RUNNING does not undo it.
			if f := strings.Fields(line); len(f) == 3 && f[0] == "STATE" && a.state[f[1]] != "CLOSED" {
				a.state[f[1]] = f[2]
			} else if len(f) == 2 && f[0] == "CLOSED" {
				a.state[f[1]] = "CLOSED"
			}
			a.mu.Unlock()
			t.Logf("streams app: %s", line)
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-a.done:
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
			<-a.done
		}
		cmd.Wait()
	})
	return a
}

func (a *streamsApp) send(cmd string) {
	if _, err := io.WriteString(a.stdin, cmd+"\n"); err != nil {
		a.t.Fatal(err)
	}
}

// waitState waits until every named instance is in state.
func (a *streamsApp) waitState(timeout time.Duration, state string, names ...string) {
	a.t.Helper()
	waitFor(a.t, timeout, fmt.Sprintf("instances %v %s", names, state), func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, n := range names {
			if a.state[n] != state {
				return false
			}
		}
		return true
	})
}

func (a *streamsApp) linesWith(prefix string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, l := range a.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func (a *streamsApp) errors() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, l := range a.lines {
		if strings.HasPrefix(l, "ERROR") {
			out = append(out, l)
		}
	}
	return out
}

// streamsAdmin runs StreamsAdmin once and returns its lines.
func streamsAdmin(t *testing.T, java []string, bootstrap string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append(slices.Clone(java[1:]), append([]string{"fakekafka.matrix.StreamsAdmin", bootstrap}, args...)...)
	cmd := exec.CommandContext(ctx, java[0], full...)
	cmd.Dir = streamsJavaDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("StreamsAdmin %v: %v\n%s", args, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

var waitFor = testkit.WaitFor

var streamsWords = []string{"ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay"}

func TestKafkaStreamsCountExactlyOnce(t *testing.T) {
	java := streamsJava(t)
	c := server.NewTestCluster(t, server.Config{
		StreamsGroupHeartbeatInterval:     300 * time.Millisecond,
		StreamsGroupInitialRebalanceDelay: 500 * time.Millisecond,
		StreamsGroupNumStandbyReplicas:    1, // the count's state gets a standby on another instance
	})
	for _, name := range []string{"words", "counts"} {
		if err := c.CreateTopic(name, 3, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	bootstrap := strings.Join(c.Bootstrap(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	want := map[string]int64{}
	n := 0
	produce := func(count int) {
		t.Helper()
		for range count {
			w := streamsWords[n%len(streamsWords)]
			n++
			want[w]++
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "words", Key: []byte(fmt.Sprint(n)), Value: []byte(w)}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}

	app := startStreamsApp(t, java, bootstrap, "wordcount")
	app.send("start s1 7001")
	app.waitState(90*time.Second, "RUNNING", "s1")
	produce(200)

	// One to three instances, records flowing meanwhile.
	app.send("start s2 7002")
	app.send("start s3 7003")
	produce(100)
	app.waitState(90*time.Second, "RUNNING", "s2", "s3")
	waitFor(t, 60*time.Second, "three members with tasks each, and the count's standbys", func() bool {
		gs, ok := c.Group("wordcount")
		if !ok || gs.State != "Stable" || len(gs.Members) != 3 {
			return false
		}
		standbys := 0
		for _, m := range gs.Members {
			if len(m.Streams.Tasks.Active) == 0 {
				return false
			}
			for _, ps := range m.Streams.Tasks.Standby {
				standbys += len(ps)
			}
		}
		return standbys == 3 // one per task of the stateful subtopology (3 partitions)
	})
	// Each instance learns every instance's partitions from the heartbeat's
	// endpoint-to-partitions map (interactive queries' metadata).
	var asked time.Time
	waitFor(t, 60*time.Second, "s1's metadata of the three instances", func() bool {
		if time.Since(asked) > 250*time.Millisecond { // ask again now and then, not on every poll
			app.send("meta s1")
			asked = time.Now()
		}
		want := "META s1 7001:"
		for _, l := range app.linesWith("META s1 ") {
			f := strings.Fields(l)
			if strings.HasPrefix(l, want) && len(f) == 5 && !slices.ContainsFunc(f[2:], func(e string) bool { return strings.HasSuffix(e, ":0") }) {
				return true
			}
		}
		return false
	})
	produce(200)

	// A broker that is not the group's coordinator crashes and comes back.
	gs, _ := c.Group("wordcount")
	other := int32(1)
	if gs.Coordinator == other {
		other = 2
	}
	if err := c.StopBroker(other, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	produce(100)
	if err := c.StartBroker(other); err != nil {
		t.Fatal(err)
	}
	produce(100)

	// The group coordinator crashes: the group moves with its state.
	gs, _ = c.Group("wordcount")
	coord := gs.Coordinator
	if err := c.StopBroker(coord, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	produce(100)
	waitFor(t, 60*time.Second, "the group on its new coordinator", func() bool {
		gs, ok := c.Group("wordcount")
		return ok && gs.Coordinator != coord && len(gs.Members) == 3
	})
	if err := c.StartBroker(coord); err != nil {
		t.Fatal(err)
	}
	produce(100)

	// Back to one instance.
	app.send("stop s2")
	app.send("stop s3")
	app.waitState(90*time.Second, "CLOSED", "s2", "s3")
	produce(100)

	// Every record counted once: per word the committed counts are 1, 2,
	// ... up to its number of records, each once and in order.
	seen := map[string][]int64{}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumeTopics("counts"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	done := func() bool {
		for w, n := range want {
			if s := seen[w]; len(s) == 0 || s[len(s)-1] != n {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("counts %v, want last counts %v; app errors %v", lastCounts(seen), want, app.errors())
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cons.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			var v int64
			for _, b := range r.Value { // a big-endian long (Serdes.Long)
				v = v<<8 | int64(b)
			}
			seen[string(r.Key)] = append(seen[string(r.Key)], v)
		})
	}
	for w, s := range seen {
		for i, v := range s {
			if v != int64(i+1) {
				t.Fatalf("word %s: counts %v, want 1..%d each once", w, s, want[w])
			}
		}
	}

	// Kafka 4.4's admin: the group listed as a streams group, described
	// with its one member owning every task.
	if got := streamsAdmin(t, java, bootstrap, "list"); !slices.Contains(got, "GROUP wordcount Streams Stable") {
		t.Fatalf("list: %v", got)
	}
	desc := streamsAdmin(t, java, bootstrap, "describe", "wordcount")
	// (One instance: no other process for the standbys.)
	if len(desc) != 2 || !strings.HasPrefix(desc[0], "DESCRIBE Stable ") || !strings.HasSuffix(desc[0], " 1") ||
		!strings.HasSuffix(desc[1], " 0:0,1,2;1:0,1,2 -") {
		t.Fatalf("describe: %v", desc)
	}
	// Its offsets reset once it is empty (Kafka refuses while members run).
	app.send("stop s1")
	app.waitState(90*time.Second, "CLOSED", "s1")
	if got := streamsAdmin(t, java, bootstrap, "reset", "wordcount", "words", "3", "0"); !slices.Contains(got, "RESET 3") {
		t.Fatalf("reset: %v", got)
	}
	gs, _ = c.Group("wordcount")
	for _, o := range gs.Offsets {
		if o.Topic == "words" && o.Offset != 0 {
			t.Fatalf("offset %+v after the reset", o)
		}
	}
	if errs := app.errors(); len(errs) > 0 {
		t.Logf("stream threads replaced after errors: %v", errs)
	}
}

func lastCounts(seen map[string][]int64) map[string]int64 {
	out := map[string]int64{}
	for w, s := range seen {
		out[w] = s[len(s)-1]
	}
	return out
}
