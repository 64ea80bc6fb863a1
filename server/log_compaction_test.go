package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeAll reads topic/0 from the start up to its HW and returns the
// records.
func consumeAll(t *testing.T, c *Cluster, topic string) []*kgo.Record {
	t.Helper()
	ps, _ := c.Partition(topic, 0)
	cl := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var out []*kgo.Record
	ctx := testContext(t)
	for len(out) == 0 || out[len(out)-1].Offset < ps.HighWatermark-1 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// A compacted topic read from the start shows the latest value of each key,
// at its original offset, and a tombstone only until delete.retention.ms
// after the cleaner first saw it; the periodic cleaner does it on the
// cluster clock (log.cleaner.backoff.ms) once the dirty ratio is reached.
func TestCompactedTopicKeepsLatestValuePerKey(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Time{})})
	if err := c.CreateTopic("kt", 1, 3, map[string]string{
		"cleanup.policy": "compact", "internal.segment.bytes": "300", "delete.retention.ms": "60000",
	}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("kt"))
	ctx := testContext(t)
	produce := func(k, v string) {
		r := &kgo.Record{Key: []byte(k)}
		if v != "" {
			r.Value = []byte(v)
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		for _, k := range []string{"a", "b", "c", "d"} {
			produce(k, fmt.Sprintf("%s%d", k, round))
		}
	}
	produce("b", "") // tombstone at 20
	produce("e", "e0")
	for i := range 4 { // fill and roll so 20-21 are in a closed segment
		produce(fmt.Sprintf("z%d", i), "z")
	}
	since := seqOf(c.Events(0))
	if err := c.AdvanceClock(15 * time.Second); err != nil { // the cleaner's round
		t.Fatal(err)
	}
	ev, err := c.WaitFor(ctx, func(e Event) bool { return e.Seq > since && e.Type == EventLogCleaned && e.Topic == "kt" })
	if err != nil || ev.Reason != "compaction" {
		t.Fatalf("log_cleaned: %+v %v", ev, err)
	}
	got := map[string]string{}
	var offsets []int64
	for _, r := range consumeAll(t, c, "kt") {
		got[string(r.Key)] = string(r.Value)
		if string(r.Key) < "z" {
			offsets = append(offsets, r.Offset)
		}
	}
	want := map[string]string{"a": "a4", "b": "", "c": "c4", "d": "d4", "e": "e0"}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// The latest records keep their offsets: a4 16, c4 18, d4 19, the
	// tombstone 20, e0 21.
	if fmt.Sprint(offsets) != "[16 18 19 20 21]" {
		t.Fatalf("offsets of the kept records %v", offsets)
	}
	// Past delete.retention.ms the next cleaner round drops the tombstone.
	since = seqOf(c.Events(0))
	if err := c.AdvanceClock(75 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Seq > since && e.Type == EventLogCleaned && e.Topic == "kt" }); err != nil {
		t.Fatal(err)
	}
	for _, r := range consumeAll(t, c, "kt") {
		if string(r.Key) == "b" {
			t.Fatalf("tombstone of b at %d still there after delete.retention.ms", r.Offset)
		}
	}
}

// __consumer_offsets is compacted too: after many commits of the same
// group, cleaning it leaves the latest commit per partition, and a new
// coordinator that loads the compacted log answers the latest offsets.
func TestConsumerOffsetsIsCompacted(t *testing.T) {
	c := NewTestCluster(t, Config{OffsetsTopicPartitions: 1})
	if err := c.CreateTopic("src", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	for i := range 50 {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "src", Partition: 0, At: int64(i), LeaderEpoch: -1})
		if _, err := adm.CommitOffsets(ctx, "g", os); err != nil {
			t.Fatal(err)
		}
	}
	// Roll the active segment so the commits are cleanable: set a tiny
	// segment.bytes and write one more commit.
	if err := c.setTopicConfigsByName(offsetsTopic, map[string]string{"cleanup.policy": "compact", "segment.bytes": "100"}); err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "src", Partition: 0, At: 50, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}
	res, err := c.CleanTopic(offsetsTopic)
	if err != nil || !res[0].Compacted || res[0].RecordsRemoved < 49 || res[0].BytesAfter >= res[0].BytesBefore {
		t.Fatalf("clean: %+v %v", res, err)
	}
	// Move the coordinator: the new leader loads the compacted log.
	ps, _ := c.Partition(offsetsTopic, 0)
	next := ps.ISR[0]
	for _, id := range ps.ISR {
		if id != ps.Leader {
			next = id
			break
		}
	}
	if _, err := c.ElectLeader(offsetsTopic, 0, next, false); err != nil {
		t.Fatal(err)
	}
	fetched, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("src", 0); !ok || o.At != 50 {
		t.Fatalf("committed offset after compaction and a coordinator move: %+v %v", o, ok)
	}
}

// setTopicConfigsByName is setTopicConfigs for a test.
func (c *Cluster) setTopicConfigsByName(name string, configs map[string]string) error {
	c.configMu.Lock()
	defer c.configMu.Unlock()
	if e := validateTopicConfigs(configs, true); e != nil {
		return kafkaError(e.err, *e.msg)
	}
	c.setTopicConfigs(c.topic(name), configs)
	return nil
}

// A compacted topic refuses records without a key with INVALID_RECORD, as
// Kafka does; keyed records go in.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("kc", 1, 1, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("kc"), kgo.RecordRetries(0))
	err := cl.ProduceSync(testContext(t), kgo.StringRecord("no key")).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record: %v, want INVALID_RECORD", err)
	}
	if err := cl.ProduceSync(testContext(t), kgo.KeyStringRecord("k", "v")).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
