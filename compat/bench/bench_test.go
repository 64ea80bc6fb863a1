package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRunTiny runs every workload against every target at a tiny size:
// it checks the harness, not anyone's speed.
func TestRunTiny(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The storing null broker too (named only in cmd/bench): every
	// workload must run on it.
	targets := append(Targets(), nullTarget{brokers: 3, store: true, checksum: true})
	res := Run(ctx, targets, Options{
		Scale:              0.001,
		Partitions:         3,
		Runs:               1,
		Rate:               500,
		LatencyFor:         100 * time.Millisecond,
		StartupRuns:        1,
		MetadataPartitions: 50,
		MetadataCalls:      1,
		Progress:           t.Logf,
	})
	for _, e := range res.Errors() {
		t.Error(e)
	}
	for _, tg := range targets {
		keys := []string{"produce 100 B", "consume 100 B", "produce 1 KiB", "consume 1 KiB",
			"produce 100 B raw", "consume 100 B raw", "produce 1 KiB raw", "consume 1 KiB raw",
			"ack latency p50", "ack latency p99", "start to first ack", "metadata time"}
		if tg.Caps().Stores {
			keys = append(keys, "e2e latency p50", "e2e latency p99", "memory 100 B", "memory 1 KiB")
		}
		if suiteTargets[tg.Name()] {
			keys = append(keys, "suite sequential", "suite parallel", "suite peak RSS")
		}
		for _, k := range keys {
			if v, ok := res.Value(k, tg.Name()); !ok || v <= 0 {
				t.Errorf("%s: %s = %v, %v", tg.Name(), k, v, ok)
			}
		}
	}
	var table bytes.Buffer
	res.WriteTable(&table)
	if !strings.Contains(table.String(), "| fakekafka/kfake |") && !strings.Contains(table.String(), "fakekafka/kfake") {
		t.Errorf("no ratio column in\n%s", table.String())
	}
	t.Logf("\n%s", table.String())
}

// TestNullBroker checks that the null broker acknowledges produces with
// increasing offsets and answers a fetch at any offset with records
// starting there.
func TestNullBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nb, err := NewNullBroker(3, []TopicSpec{{Name: "n", Partitions: 2, RecordSize: 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nb.Addrs()...), kgo.DefaultProduceTopic("n"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range int64(3) {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("v")}).First()
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset != i {
			t.Fatalf("record %d got offset %d", i, r.Offset)
		}
	}

	const from = 123_456
	cons, err := kgo.NewClient(kgo.SeedBrokers(nb.Addrs()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"n": {0: kgo.NewOffset().At(from)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	fs := cons.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) == 0 || recs[0].Offset != from {
		t.Fatalf("fetch from %d: %d records, first %v", from, len(recs), recs)
	}
	for i, r := range recs {
		if r.Offset != from+int64(i) || len(r.Value) != 10 {
			t.Fatalf("record %d: offset %d, %d bytes", i, r.Offset, len(r.Value))
		}
	}
	if _, err := protocol.ParseBatchHeader(nb.topics["n"].canned); err != nil {
		t.Fatal(err)
	}
}

// TestNullBrokerStoring checks the null broker's storing variant: it keeps
// every request frame it reads, acknowledges a good batch and refuses one
// whose CRC-32C does not match with CORRUPT_MESSAGE.
func TestNullBrokerStoring(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nb, err := NewNullBrokerStoring(1, []TopicSpec{{Name: "n", Partitions: 1, RecordSize: 10}}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nb.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(corrupt bool) int16 {
		b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
			[]protocol.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		if corrupt {
			b[len(b)-1] ^= 0xff // in the record, which the CRC covers
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = "n", nb.topics["n"].id // by id from v13
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := produce(false); code != 0 {
		t.Fatalf("a good batch: %v", kerr.ErrorForCode(code))
	}
	if code := produce(true); code != kerr.CorruptMessage.Code {
		t.Fatalf("a corrupt batch: %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
	}
	nb.mu.Lock()
	kept := len(nb.kept)
	nb.mu.Unlock()
	if kept < 3 { // ApiVersions at least, and the two Produce requests
		t.Fatalf("kept %d frames, want every request's", kept)
	}
}

// TestWireCount checks the raw client's record count: a fetch may start in
// the middle of a batch, end in a partial one, or (the null broker) run
// past the partition's end.
func TestWireCount(t *testing.T) {
	batchAt := func(base int64, n int) []byte {
		recs := make([]protocol.Record, n)
		b, err := protocol.BuildBatch(protocol.BatchHeader{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	two := append(batchAt(0, 10), batchAt(10, 10)...)
	for _, tc := range []struct {
		name           string
		records        []byte
		from, end      int64
		wantNext, want int64
	}{
		{"whole", two, 0, 100, 20, 20},
		{"from mid-batch", two, 4, 100, 20, 16},
		{"partial last batch", two[:len(two)-3], 0, 100, 10, 10},
		{"past the end", two, 0, 15, 15, 15},
		{"empty", nil, 7, 100, 7, 0},
	} {
		next, n := wireCount(tc.records, tc.from, tc.end)
		if next != tc.wantNext || n != tc.want {
			t.Errorf("%s: next %d, %d records; want %d, %d", tc.name, next, n, tc.wantNext, tc.want)
		}
	}
}

// TestProcessTargetsTiny runs the fakekafka binary as a target (built by
// the harness) through the startup, throughput, latency and suite
// workloads at a tiny size, and checks its RSS figures; with
// BENCH_KAFKA=1 (Java and the Kafka jars: scripts/reference.sh) Kafka too.
func TestProcessTargetsTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/fakekafka")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	targets := []Target{binTarget{}}
	if os.Getenv("BENCH_KAFKA") == "1" {
		targets = append(targets, kafkaTarget{name: "kafka-small"})
	}
	res := Run(ctx, targets, Options{
		Scale:       0.001,
		Partitions:  3,
		Runs:        1,
		Rate:        500,
		LatencyFor:  100 * time.Millisecond,
		StartupRuns: 2,
		SlowStarts:  1,
		Workloads:   []string{"throughput-100", "wire-1k", "latency", "startup", "suite"},
		Progress:    t.Logf,
	})
	for _, e := range res.Errors() {
		t.Error(e)
	}
	for _, tg := range targets {
		for _, k := range []string{"produce 100 B", "consume 100 B", "produce 1 KiB raw", "consume 1 KiB raw",
			"ack latency p99", "e2e latency p99", "start to first ack", "rss idle", "peak RSS 100 B", "peak RSS 1 KiB raw",
			"suite sequential", "suite parallel", "suite peak RSS"} {
			if v, ok := res.Value(k, tg.Name()); !ok || v <= 0 {
				t.Errorf("%s: %s = %v, %v", tg.Name(), k, v, ok)
			}
		}
		if _, ok := res.Value("memory 100 B", tg.Name()); ok {
			t.Errorf("%s: a process target's memory is not this process's heap", tg.Name())
		}
	}
	var table bytes.Buffer
	res.WriteTable(&table)
	t.Logf("\n%s", table.String())
}
