package compat

// Share-group configs set through Kafka's Admin (the adapter's configs
// operation, Configs.java: incrementalAlterConfigs on the GROUP resource)
// and obeyed by Kafka's KafkaShareConsumer: share.auto.offset.reset,
// share.isolation.level and share.record.lock.duration.ms.

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adminSetGroupConfigs sets group's configs (name, value pairs) with the
// Java Admin's incrementalAlterConfigs, one JVM that exits when done.
func adminSetGroupConfigs(t *testing.T, c *server.Cluster, group string, kv ...string) {
	t.Helper()
	dir := javaShareDir(t)
	var ops []map[string]string
	for i := 0; i+1 < len(kv); i += 2 {
		ops = append(ops, map[string]string{"name": kv[i], "value": kv[i+1], "op": "SET"})
	}
	cfg, _ := json.Marshal(map[string]any{"bootstrap": strings.Join(c.Bootstrap(), ","), "backoffMs": "20",
		"resourceType": "GROUP", "resourceName": group, "configOps": ops})
	cmd := exec.CommandContext(t.Context(), "java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", "target/classes:target/lib/*",
		"fakekafka.matrix.Adapter", "configs")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(cfg) + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin: %v\n%s", err, out)
	}
	altered := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l struct {
			Type    string         `json:"type"`
			Error   map[string]any `json:"error"`
			Configs []struct {
				Name   string  `json:"name"`
				Value  *string `json:"value"`
				Source string  `json:"source"`
			} `json:"configs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("admin said %q: %v", sc.Text(), err)
		}
		switch l.Type {
		case "altered":
			if l.Error != nil {
				t.Fatalf("incrementalAlterConfigs: %v", l.Error)
			}
			altered = true
		case "configs":
			for i := 0; i+1 < len(kv); i += 2 {
				ok := false
				for _, d := range l.Configs {
					ok = ok || d.Name == kv[i] && d.Value != nil && *d.Value == kv[i+1] && d.Source == "DYNAMIC_GROUP_CONFIG"
				}
				if !ok {
					t.Fatalf("describeConfigs does not show %s=%s as the group's: %+v", kv[i], kv[i+1], l.Configs)
				}
			}
		case "fatal", "error":
			t.Fatalf("admin: %s", sc.Text())
		}
	}
	if !altered {
		t.Fatalf("admin gave no answer: %s", out)
	}
}

// runTxnValues produces values to q/0 in one transaction, committed or
// aborted.
func runTxnValues(t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte(v), Partition: 0}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(t.Context(), kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// The Admin sets share.auto.offset.reset=earliest,
// share.isolation.level=read_committed and a 15 s lock on a group: its
// KafkaShareConsumer reads from the log start, never sees an aborted
// record, and a record it leaves unacknowledged comes back after 15 s on
// the cluster's clock (the default would hold it 30 s).
func TestShareConsumerJavaGroupConfigs(t *testing.T) {
	c, _ := shareCluster(t, 1)
	const group = "sg-configs"
	produceValues(t, c, 0, "a", "b") // 0-1, before the group exists
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.TransactionalID("share-cfg-tx"),
		kgo.DefaultProduceTopic("q"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	runTxnValues(t, txn, false, "x", "y") // 2-3 aborted, marker 4
	runTxnValues(t, txn, true, "z")       // 5, marker 6
	adminSetGroupConfigs(t, c, group, "share.auto.offset.reset", "earliest", "share.isolation.level", "read_committed",
		"share.record.lock.duration.ms", "15000")

	js := startShare(t, c, group, "q", "explicit", map[string]string{"fetch.max.wait.ms": "200"})
	var got []shareRec
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < 3 && time.Now().Before(deadline) {
		rs := js.poll(500 * time.Millisecond)
		got = append(got, rs...)
		for _, r := range rs {
			if r.Value != "b" {
				js.ack(r.Offset, "ACCEPT")
			}
		}
	}
	vals := func(rs []shareRec) (out []string) {
		for _, r := range rs {
			out = append(out, r.Value+"@"+r.String())
		}
		return out
	}
	if !slices.Equal(vals(got), []string{"a@0/1", "b@1/1", "z@5/1"}) {
		t.Fatalf("read_committed from earliest: %v, want a@0/1 b@1/1 z@5/1", vals(got))
	}
	// b is left unacknowledged.
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	waitShare(t, c, group, "a, z accepted; b held; nothing parked", func(sp api.SharePartitionState) bool {
		return sp.StartOffset == 1 && sp.EndOffset == 7 && len(sp.InFlight) > 0 && sp.InFlight[0].State == "ACQUIRED" && sp.WaitingFetches == 0
	})
	gs, _ := c.Group(group)
	for _, r := range gs.SharePartitions[0].InFlight {
		want := map[int64]string{1: "ACQUIRED", 2: "ARCHIVED", 3: "ARCHIVED", 4: "ARCHIVED", 5: "ACKNOWLEDGED", 6: "ARCHIVED"}[r.Offset]
		if r.State != want {
			t.Fatalf("offset %d %s, want %s (%+v)", r.Offset, r.State, want, gs.SharePartitions[0].InFlight)
		}
	}
	// 14 s: b is still locked; 15 s: the group's lock duration ran out.
	if err := c.AdvanceClock(14 * time.Second); err != nil {
		t.Fatal(err)
	}
	if gs, _ := c.Group(group); gs.SharePartitions[0].InFlight[0].State != "ACQUIRED" {
		t.Fatalf("b released before 15 s: %+v", gs.SharePartitions[0].InFlight[0])
	}
	if err := c.AdvanceClock(time.Second); err != nil {
		t.Fatal(err)
	}
	waitShare(t, c, group, "b released at 15 s", func(sp api.SharePartitionState) bool {
		return sp.InFlight[0].Offset == 1 && sp.InFlight[0].State == "AVAILABLE" && sp.InFlight[0].DeliveryCount == 1
	})
	// The consumer's acknowledgement comes too late; b comes again, second
	// delivery.
	js.ack(1, "ACCEPT")
	if errs := js.commit(); errs["q-0"] != "InvalidRecordStateException" {
		t.Fatalf("late acknowledgement: %v", errs)
	}
	rs := js.pollUntil("b again", func(rs []shareRec) bool { return len(rs) > 0 })
	if !slices.Equal(vals(rs), []string{"b@1/2"}) {
		t.Fatalf("after the lock ran out: %v, want b@1/2", vals(rs))
	}
	js.ack(1, "ACCEPT")
	// More transactions: still only committed records.
	runTxnValues(t, txn, false, "p") // 7, marker 8
	runTxnValues(t, txn, true, "q")  // 9, marker 10
	rs = js.pollUntil("q", func(rs []shareRec) bool { return len(rs) > 0 })
	if !slices.Equal(vals(rs), []string{"q@9/1"}) {
		t.Fatalf("after more transactions: %v, want q@9/1", vals(rs))
	}
	js.ack(9, "ACCEPT")
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	waitShare(t, c, group, "everything done", func(sp api.SharePartitionState) bool {
		return sp.StartOffset == 11 && len(sp.InFlight) == 0
	})
	js.close()
}
