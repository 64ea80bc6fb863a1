package matrix

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMatrixJavaShareOffsets drives the Java Admin's share-group offset
// calls (kafka-clients: alterShareGroupOffsets, listShareGroupOffsets,
// deleteShareGroupOffsets) against fakekafka: the start offset it sets is
// the one it lists, with Kafka 4.4's lag, and a delete leaves none; then
// its listGroups and describeShareGroups, of the empty group the alter made
// and with a franz-go share consumer in it. It runs
// when MATRIX_CLIENTS selects kafka-clients (CI's "langs" step); an
// adapter that is not built fails it unless MATRIX_SKIP_ABSENT is set.
func TestMatrixJavaShareOffsets(t *testing.T) {
	requireJavaCell(t)
	c := server.NewTestCluster(t, server.Config{ShareStatePartitions: 3})
	if err := c.CreateTopic("shared", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("shared"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for range 10 {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	cfg := newAdapterConfig(c.Bootstrap(), "share-offsets")
	cfg.Group, cfg.Topic, cfg.Partition, cfg.Offset = "java-share", "shared", 0, 3
	lines := runAdapter(t, ctx, KafkaClients, "share-offsets", cfg)
	want := []map[string]any{
		{"type": "shareAltered", "partition": 0.0},
		{"type": "shareOffset", "partition": 0.0, "present": true, "offset": 3.0, "leaderEpoch": 0.0, "lag": 7.0},
		{"type": "shareDeleted", "topic": "shared"},
		{"type": "shareOffset", "partition": 0.0, "present": false},
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("adapter answered\n%v\nwant\n%v", lines, want)
	}
	var inits, dels int
	for _, ev := range c.Events(0) {
		switch ev.Type {
		case server.EventShareStateInitialized:
			inits++
		case server.EventShareStateDeleted:
			dels++
		}
	}
	if inits != 1 || dels != 1 {
		t.Fatalf("%d share_state_initialized, %d share_state_deleted", inits, dels)
	}

	// The Admin lists and describes the share group: empty (the alter made
	// it, as Kafka's does), then with a franz-go share consumer in it.
	describe := func() map[string]any {
		t.Helper()
		dcfg := newAdapterConfig(c.Bootstrap(), "share-groups")
		dcfg.Group = "java-share"
		got := runAdapter(t, ctx, KafkaClients, "share-groups", dcfg)
		if len(got) != 1 {
			t.Fatalf("share-groups answered %v", got)
		}
		return got[0]
	}
	wantEmpty := map[string]any{"type": "shareGroup", "listed": true, "listedState": "Empty", "state": "Empty",
		"members": 0.0, "assignedPartitions": 0.0, "epochMatches": true}
	if got := describe(); !reflect.DeepEqual(got, wantEmpty) {
		t.Fatalf("empty share group: %v, want %v", got, wantEmpty)
	}
	member, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ShareGroup("java-share"), kgo.ConsumeTopics("shared"),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	// The group starts at the latest offset once the member is assigned
	// the partition: produce until the member gets a record.
	for n := 0; n == 0; {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("for the member")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		n = len(member.PollFetches(pctx).Records())
		pcancel()
		if ctx.Err() != nil {
			t.Fatal("the share consumer got nothing")
		}
	}
	wantStable := map[string]any{"type": "shareGroup", "listed": true, "listedState": "Stable", "state": "Stable",
		"members": 1.0, "assignedPartitions": 1.0, "epochMatches": true}
	if got := describe(); !reflect.DeepEqual(got, wantStable) {
		t.Fatalf("share group with a member: %v, want %v", got, wantStable)
	}
}

// runAdapter runs p for op with cfg and returns its output lines as JSON
// objects (the fields this operation's lines have that adapterLine lacks).
func runAdapter(t *testing.T, ctx context.Context, p Process, op string, cfg adapterConfig) []map[string]any {
	t.Helper()
	argv := append(slices.Clone(p.argv), op)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = p.dir
	if strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
		cmd.Path = filepath.Join(p.dir, argv[0])
	}
	first, _ := json.Marshal(cfg)
	cmd.Stdin = strings.NewReader(string(first) + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", p.name, op, err, stderr.String())
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s wrote %q: %v", p.name, sc.Text(), err)
		}
		if m["type"] == "fatal" {
			t.Fatalf("%s %s: %v", p.name, op, m["error"])
		}
		lines = append(lines, m)
	}
	return lines
}
