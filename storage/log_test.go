package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

// testPartition is a one-replica partition whose segments hold two
// one-record batches each.
func testPartition(t *testing.T) *replication.Partition {
	t.Helper()
	return replication.NewPartition([]int32{1}, replication.Config{MinInsyncReplicas: 1, Segment: replication.SegmentConfig{Bytes: 150}}, time.Unix(0, 0))
}

// appendValues appends one batch per value to p's leader.
func appendValues(t *testing.T, p *replication.Partition, values ...string) {
	t.Helper()
	for _, v := range values {
		raw, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone, []protocol.Record{{Value: []byte(v)}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := batchFromDisk(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, code := p.Append(b, 1, time.Unix(0, 0)); code != 0 {
			t.Fatalf("append %q: error code %d", v, code)
		}
	}
}

// values reads the record values of batches, in order.
func values(t *testing.T, batches []*replication.Batch) []string {
	t.Helper()
	var out []string
	for _, b := range batches {
		recs, err := protocol.Records(b.Raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
	}
	return out
}

func leaderLog(p *replication.Partition) *replication.Log { return p.LeaderReplica().Log() }

// Appends are written as they come, segment by segment; a moved log start
// is recorded and the files of whole segments below it go; LoadLog reads
// back the same log.
func TestLogSyncAppendsTrimsAndLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	p := testPartition(t)
	d := NewLog(dir)
	appendValues(t, p, "v0", "v1", "v2")
	if err := d.Sync(1, leaderLog(p)); err != nil {
		t.Fatal(err)
	}
	appendValues(t, p, "v3", "v4", "v5")
	if err := d.Sync(1, leaderLog(p)); err != nil {
		t.Fatal(err)
	}
	if d.rewrites != leaderLog(p).Rewrites() || len(d.files) != 3 {
		t.Fatalf("after appends: %d segment files, want 3", len(d.files))
	}
	if _, code := p.DeleteRecords(3); code != 0 {
		t.Fatalf("delete records: %d", code)
	}
	if err := d.Sync(1, leaderLog(p)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(names) != 2 || filepath.Base(names[0]) != "00000000000000000002.log" {
		t.Fatalf("segment files after the log start moved to 3: %v", names)
	}
	start, batches, cut, err := LoadLog(dir)
	if err != nil || cut != 0 {
		t.Fatalf("load: cut %d, %v", cut, err)
	}
	if got := fmt.Sprint(values(t, batches)); start != 3 || got != "[v2 v3 v4 v5]" {
		t.Fatalf("loaded log start %d, values %s; want 3, [v2 v3 v4 v5] (v2 shares the segment at 2)", start, got)
	}
	for i, b := range batches {
		if b.BaseOffset != int64(i+2) {
			t.Fatalf("batch %d at offset %d", i, b.BaseOffset)
		}
	}
}

// A torn entry at the end of a segment is cut; a corrupt entry in an
// earlier segment cuts the rest of its file and every later segment.
func TestLoadLogCutsTornAndCorruptEntries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	p := testPartition(t)
	appendValues(t, p, "v0", "v1", "v2", "v3", "v4", "v5")
	d := NewLog(dir)
	if err := d.Sync(1, leaderLog(p)); err != nil {
		t.Fatal(err)
	}
	d.Close()

	last := SegmentFile(dir, 4)
	raw, _ := os.ReadFile(last)
	starts := Entries(raw)
	if len(starts) != 2 {
		t.Fatalf("segment 4 holds %d entries, want 2", len(starts))
	}
	torn := starts[1] + (len(raw)-starts[1])/2
	os.WriteFile(last, raw[:torn], 0o644)
	_, batches, cut, err := LoadLog(dir)
	if err != nil || cut != int64(torn-starts[1]) || len(batches) != 5 {
		t.Fatalf("torn tail: %d batches, cut %d bytes, %v", len(batches), cut, err)
	}
	if st, _ := os.Stat(last); st.Size() != int64(starts[1]) {
		t.Fatalf("segment 4 is %d bytes after the cut, want %d", st.Size(), starts[1])
	}

	mid := SegmentFile(dir, 2)
	raw, _ = os.ReadFile(mid)
	raw[Entries(raw)[1]+20] ^= 0xff
	os.WriteFile(mid, raw, 0o644)
	_, batches, _, err = LoadLog(dir)
	if got := fmt.Sprint(values(t, batches)); err != nil || got != "[v0 v1 v2]" {
		t.Fatalf("corrupt entry in segment 2: %s, %v", got, err)
	}
	if _, err := os.Stat(last); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("segment 4 after a cut in segment 2: %v", err)
	}
}

// A rewrite (here: a new leader whose log does not hold the files' last
// batch) replaces the directory whole; one interrupted between its two
// renames is finished at load, one interrupted while writing is dropped.
func TestLogRewriteAndInterruptedRewrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	p := testPartition(t)
	appendValues(t, p, "a0", "a1", "a2")
	d := NewLog(dir)
	if err := d.Sync(1, leaderLog(p)); err != nil {
		t.Fatal(err)
	}
	other := testPartition(t)
	appendValues(t, other, "b0")
	if err := d.Sync(2, leaderLog(other)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, batches, _, err := LoadLog(dir); err != nil || fmt.Sprint(values(t, batches)) != "[b0]" {
		t.Fatalf("after the rewrite: %v, %v", values(t, batches), err)
	}

	if err := os.Rename(dir, dir+".tmp"); err != nil {
		t.Fatal(err)
	}
	if _, batches, _, err := LoadLog(dir); err != nil || len(batches) != 1 {
		t.Fatalf("finishing an interrupted rewrite: %d batches, %v", len(batches), err)
	}
	os.MkdirAll(dir+".tmp", 0o755)
	os.WriteFile(SegmentFile(dir+".tmp", 0), []byte("partial"), 0o644)
	if _, batches, _, err := LoadLog(dir); err != nil || len(batches) != 1 {
		t.Fatalf("beside a partial rewrite: %d batches, %v", len(batches), err)
	}
	if _, err := os.Stat(dir + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the partial rewrite is still there: %v", err)
	}
}

// A missing directory is an empty log.
func TestLoadLogMissingDir(t *testing.T) {
	start, batches, cut, err := LoadLog(filepath.Join(t.TempDir(), "nothing-0"))
	if start != 0 || len(batches) != 0 || cut != 0 || err != nil {
		t.Fatalf("missing dir: start %d, %d batches, cut %d, %v", start, len(batches), cut, err)
	}
}
