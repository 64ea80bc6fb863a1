package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readAll consumes topic/0 from the start up to its HW and returns
// offset -> value.
func readAll(t *testing.T, c *Cluster, topic string) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, r := range consumeAll(t, c, topic) {
		out[r.Offset] = string(r.Value)
	}
	return out
}

// A restart of the whole process with a data dir keeps topics (with their
// ids and configs), every record at its offset, the log start offset,
// committed group offsets, and an idempotent producer's sequence state.
func TestDataDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("orders", 1, 3, map[string]string{"retention.ms": "-1"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c1, kgo.DefaultProduceTopic("orders"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testContext(t)
	for i := range 30 {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("o-%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteRecords(ctx, kadm.Offsets{"orders": {0: {Topic: "orders", At: 5}}}); err != nil {
		t.Fatal(err)
	}
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 17, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "billing", commits); err != nil {
		t.Fatal(err)
	}
	before := readAll(t, c1, "orders")
	id1 := c1.topic("orders").id
	cl.Close()
	c1.Close()

	c2 := NewTestCluster(t, Config{DataDir: dir})
	if c2.topic("orders") == nil || c2.topic("orders").id != id1 {
		t.Fatal("the topic or its id did not survive")
	}
	if v := c2.topic("orders").cfg().configs["retention.ms"]; v != "-1" {
		t.Fatalf("retention.ms after restart %q", v)
	}
	ps, _ := c2.Partition("orders", 0)
	if ps.HighWatermark != 30 || ps.Replicas[0].LogStartOffset != 5 || ps.Replicas[2].LogEndOffset != 30 {
		t.Fatalf("partition after restart: %+v", ps)
	}
	after := readAll(t, c2, "orders")
	if fmt.Sprint(after) != fmt.Sprint(before) || len(after) != 25 || after[29] != "o-29" {
		t.Fatalf("records after restart %v, before %v", after, before)
	}
	cl2 := newClient(t, c2, kgo.DefaultProduceTopic("orders"))
	fetched, err := kadm.NewClient(cl2).FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("orders", 0); !ok || o.At != 17 {
		t.Fatalf("committed offset after restart: %+v %v", o, ok)
	}
	// New writes go on at 30, and survive another restart.
	r, err := cl2.ProduceSync(ctx, kgo.StringRecord("o-30")).First()
	if err != nil || r.Offset != 30 {
		t.Fatalf("produce after restart: offset %v, %v", r, err)
	}
}

// A torn write at the end of a segment file (a crash in the middle of an
// append) is detected by its checksum and cut at load; everything before
// it is intact. A corrupt entry in an earlier segment cuts from there,
// later segment files included.
func TestDataDirCutsATornTail(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Segments of two batches: 0-1, 2-3, ... 8-9.
	if err := c1.CreateTopic("t", 1, 1, map[string]string{"segment.bytes": "150"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c1, kgo.DefaultProduceTopic("t"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for i := range 10 {
		if err := cl.ProduceSync(testContext(t), kgo.StringRecord(fmt.Sprintf("v%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	c1.Close()
	seg := func(base int64) string { return storage.SegmentFile(filepath.Join(dir, "logs", "t-0"), base) }
	if _, err := os.Stat(seg(8)); err != nil {
		t.Fatalf("segment files: %v", err)
	}
	raw, err := os.ReadFile(seg(8))
	if err != nil {
		t.Fatal(err)
	}
	// Tear the last entry in half.
	last := lastEntryStart(t, raw)
	if err := os.WriteFile(seg(8), raw[:last+(len(raw)-last)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := NewTestCluster(t, Config{DataDir: dir})
	got := readAll(t, c2, "t")
	if len(got) != 9 || got[8] != "v8" {
		t.Fatalf("after a torn tail: %v", got)
	}
	cl2 := newClient(t, c2, kgo.DefaultProduceTopic("t"))
	if r, err := cl2.ProduceSync(testContext(t), kgo.StringRecord("v9")).First(); err != nil || r.Offset != 9 {
		t.Fatalf("produce after the cut: %v %v", r, err)
	}
	cl2.Close()
	c2.Close()

	// A corrupt byte in the second batch of segment 2 cuts 3 and all after.
	raw, _ = os.ReadFile(seg(2))
	raw[entryStartOf(t, raw, 1)+20] ^= 0xff
	os.WriteFile(seg(2), raw, 0o644)
	c3 := NewTestCluster(t, Config{DataDir: dir})
	if got := readAll(t, c3, "t"); len(got) != 3 || got[2] != "v2" {
		t.Fatalf("after a corrupt entry: %v", got)
	}
	if _, err := os.Stat(seg(8)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("segment 8 after the cut in segment 2: %v", err)
	}
}

// Retention deletes whole segment files and records the new log start;
// a restart comes back with it.
func TestDataDirRetentionDeletesSegmentFiles(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("r", 1, 3, map[string]string{"segment.bytes": "150", "retention.bytes": "300"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c1, kgo.DefaultProduceTopic("r"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 10 {
		if err := cl.ProduceSync(testContext(t), kgo.StringRecord(fmt.Sprintf("v%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	files := func() int {
		names, _ := filepath.Glob(filepath.Join(dir, "logs", "r-0", "*.log"))
		return len(names)
	}
	if n := files(); n != 5 {
		t.Fatalf("%d segment files, want 5", n)
	}
	res, err := c1.CleanPartition("r", 0)
	if err != nil || res.SegmentsDeleted == 0 {
		t.Fatalf("retention: %+v %v", res, err)
	}
	if n := files(); n != 5-res.SegmentsDeleted {
		t.Fatalf("%d segment files after deleting %d of 5", n, res.SegmentsDeleted)
	}
	cl.Close()
	c1.Close()
	c2 := NewTestCluster(t, Config{DataDir: dir})
	if ps, _ := c2.Partition("r", 0); ps.Replicas[0].LogStartOffset != res.LogStartOffset || ps.Replicas[0].LogEndOffset != 10 {
		t.Fatalf("after the restart: %+v, want log start %d", ps.Replicas[0], res.LogStartOffset)
	}
}

// entryStartOf is where the i-th entry of a file begins.
func entryStartOf(t *testing.T, raw []byte, i int) int {
	t.Helper()
	starts := storage.Entries(raw)
	if i >= len(starts) {
		t.Fatalf("entry %d unreadable: the file has %d", i, len(starts))
	}
	return starts[i]
}

func lastEntryStart(t *testing.T, raw []byte) int {
	t.Helper()
	starts := storage.Entries(raw)
	if len(starts) == 0 {
		t.Fatal("no readable entry")
	}
	return starts[len(starts)-1]
}

// The simulated power loss works with a data dir too: the broker that
// loses power loses its unflushed records, the new leader's log is what is
// persisted, and a restart of the whole process has every acks=all record.
func TestDataDirWithPowerLoss(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("p", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c1, kgo.DefaultProduceTopic("p"), kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(testContext(t), kgo.StringRecord(fmt.Sprintf("v%d", i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 10)
	if err := c1.StopBroker(1, StopPowerLoss); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c1.Partition("p", 0); ps.Leader == 1 {
		t.Fatal("broker 1 still leads after its power loss")
	}
	produce(10, 15)
	if err := c1.StartBroker(1); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	c1.Close()

	c2 := NewTestCluster(t, Config{DataDir: dir})
	got := readAll(t, c2, "p")
	for i := range 15 {
		if got[int64(i)] != fmt.Sprintf("v%d", i) {
			t.Fatalf("offset %d after power loss and restart: %q (all %v)", i, got[int64(i)], got)
		}
	}
}

// Transaction state comes back with __transaction_state: after a restart
// the transactional id keeps its producer id, a read_committed consumer
// sees the committed records and not the aborted ones, and the producer
// can go on (its epoch is bumped, as after any InitProducerId).
func TestDataDirKeepsTransactions(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir, TransactionStatePartitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("tx", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	txn := func(c *Cluster, commit bool, value string) {
		t.Helper()
		cl := newClient(t, c, kgo.TransactionalID("tid"), kgo.DefaultProduceTopic("tx"))
		ctx := testContext(t)
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, kgo.StringRecord(value)).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	txn(c1, true, "committed-1")
	txn(c1, false, "aborted")
	before := c1.Transactions()
	c1.Close()

	c2 := NewTestCluster(t, Config{DataDir: dir, TransactionStatePartitions: 1})
	// The abort may still have been writing its markers at the stop
	// (PrepareAbort): the restored coordinator finishes it.
	var after []TransactionState
	waitFor(t, 10*time.Second, "the restored transaction to complete its abort", func() bool {
		after = c2.Transactions()
		return len(after) == 1 && after[0].State == "CompleteAbort"
	})
	if len(before) != 1 || after[0].ProducerID != before[0].ProducerID {
		t.Fatalf("transactions before %+v, after the restart %+v", before, after)
	}
	txn(c2, true, "committed-2")
	cons := newClient(t, c2, kgo.ConsumeTopics("tx"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := cons.PollFetches(testContext(t))
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if fmt.Sprint(got) != "[committed-1 committed-2]" {
		t.Fatalf("read_committed after the restart: %v", got)
	}
	if tr := c2.Transactions(); tr[0].ProducerID != before[0].ProducerID || tr[0].ProducerEpoch <= before[0].ProducerEpoch {
		t.Fatalf("after a new transaction: %+v, before the restart %+v", tr, before)
	}
}

// BenchmarkProduceDataDir compares acks=all produce in memory and with a
// data dir (every batch written to its file before the answer).
func BenchmarkProduceDataDir(b *testing.B) {
	for _, mode := range []string{"memory", "data-dir"} {
		b.Run(mode, func(b *testing.B) {
			cfg := Config{}
			if mode == "data-dir" {
				cfg.DataDir = b.TempDir()
			}
			c := NewTestCluster(b, cfg)
			if err := c.CreateTopic("bench", 6, 3, nil); err != nil {
				b.Fatal(err)
			}
			prod := newClient(b, c, kgo.DefaultProduceTopic("bench"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(100_000))
			value := make([]byte, 100)
			b.SetBytes(int64(len(value)))
			b.ResetTimer()
			results := make(chan error, 1)
			var n int
			for range b.N {
				prod.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						select {
						case results <- err:
						default:
						}
					}
				})
				n++
			}
			if err := prod.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			select {
			case err := <-results:
				b.Fatal(err)
			default:
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// A second cluster cannot open a data dir in use; it can once the first
// closed. A meta.json it cannot read is an error, not an empty cluster.
func TestDataDirIsLockedAndChecked(t *testing.T) {
	dir := t.TempDir()
	c1 := NewTestCluster(t, Config{DataDir: dir})
	if _, err := NewCluster(Config{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second cluster on the same data dir: %v", err)
	}
	c1.Close()
	c2, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCluster(Config{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "meta.json") {
		t.Fatalf("unreadable meta.json: %v", err)
	}
}

// A rewrite interrupted between its two renames (the old directory moved
// away, the complete new one not yet in place) is finished at load; one
// interrupted while writing (a partial .tmp beside the directory) is
// dropped.
func TestDataDirFinishesAnInterruptedRewrite(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("w", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c1, kgo.DefaultProduceTopic("w"))
	for i := range 3 {
		if err := cl.ProduceSync(testContext(t), kgo.StringRecord(fmt.Sprintf("v%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	c1.Close()
	logDir := filepath.Join(dir, "logs", "w-0")
	if err := os.Rename(logDir, logDir+".tmp"); err != nil {
		t.Fatal(err)
	}
	c2 := NewTestCluster(t, Config{DataDir: dir})
	if got := readAll(t, c2, "w"); len(got) != 3 {
		t.Fatalf("after finishing the rewrite: %v", got)
	}
	c2.Close()
	if err := os.MkdirAll(logDir+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(storage.SegmentFile(logDir+".tmp", 0), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	c3 := NewTestCluster(t, Config{DataDir: dir})
	if got := readAll(t, c3, "w"); len(got) != 3 {
		t.Fatalf("with a partial rewrite beside it: %v", got)
	}
	if _, err := os.Stat(logDir + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the partial rewrite is still there: %v", err)
	}
}

// A data dir written before the format moved into package storage
// (storage/testdata/datadir-v1) still loads: the records left after
// DeleteRecords are served at their offsets through a real client, the
// idempotent producer's id is not handed out again, and producing goes on
// after them.
func TestDataDirWrittenBeforeTheMoveLoads(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../storage/testdata/datadir-v1")); err != nil {
		t.Fatal(err)
	}
	c := NewTestCluster(t, Config{DataDir: dir})
	if ps, _ := c.Partition("golden", 0); ps.Replicas[0].LogStartOffset != 2 || ps.HighWatermark != 6 {
		t.Fatalf("golden/0 after loading: %+v", ps)
	}
	got := readAll(t, c, "golden")
	for i := 2; i < 6; i++ {
		if got[int64(i)] != fmt.Sprintf("v%d", i) {
			t.Fatalf("offset %d: %q (all %v)", i, got[int64(i)], got)
		}
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("golden"))
	r, err := cl.ProduceSync(testContext(t), kgo.StringRecord("v6")).First()
	if err != nil || r.Offset != 6 || r.ProducerID <= 1001 {
		t.Fatalf("produce after loading: %+v %v", r, err)
	}
	if ps, _ := c.Partition("empty", 1); ps.Leader != 2 {
		t.Fatalf("empty/1 after loading: %+v", ps)
	}
}
