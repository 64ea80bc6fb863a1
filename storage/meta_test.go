package storage

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/replication"
)

// golden is a data dir written by fakekafka before the format moved into
// this package (the server at 94ee3ed): a topic "golden" (rf=3,
// segment.bytes=150) with v0..v5 produced one batch each by an idempotent
// producer and records below 2 deleted, and an empty topic "empty" of
// two partitions.
const golden = "testdata/datadir-v1"

// copyDir copies the golden dir, which Open would lock and LoadLog may
// repair, to a temporary one.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// A data dir written before the move still loads, and writing what it
// holds again gives the same bytes: meta.json, the log start and the
// segment files.
func TestGoldenDataDir(t *testing.T) {
	dir := copyDir(t, golden)
	d, m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if m == nil || len(m.Topics) != 2 || m.NextProducerID != 1001 {
		t.Fatalf("meta: %+v", m)
	}
	var gt *MetaTopic
	for i := range m.Topics {
		if m.Topics[i].Name == "golden" {
			gt = &m.Topics[i]
		}
	}
	if gt == nil || len(gt.Partitions) != 1 || gt.Configs["segment.bytes"] != "150" {
		t.Fatalf("topic golden: %+v", gt)
	}
	mp := gt.Partitions[0]
	if fmt.Sprint(mp.Replicas, mp.ISR, mp.Leader, mp.HW) != "[1 2 3] [1 2 3] 1 6" {
		t.Fatalf("golden/0: %+v", mp)
	}
	start, batches, cut, err := LoadLog(d.LogDir("golden", 0))
	if err != nil || cut != 0 {
		t.Fatalf("load golden/0: cut %d, %v", cut, err)
	}
	if got := fmt.Sprint(values(t, batches)); start != 2 || got != "[v2 v3 v4 v5]" {
		t.Fatalf("golden/0: log start %d, values %s", start, got)
	}
	for i, b := range batches {
		if b.BaseOffset != int64(i+2) || b.ProducerID != 1001 || b.BaseSequence != int32(i+2) {
			t.Fatalf("batch %d: offset %d, producer %d, sequence %d", i, b.BaseOffset, b.ProducerID, b.BaseSequence)
		}
	}

	// The same state written again is the same bytes.
	if err := d.WriteMeta(*m); err != nil {
		t.Fatal(err)
	}
	sameFile(t, filepath.Join(golden, "meta.json"), filepath.Join(dir, "meta.json"))
	p := replication.NewPartition([]int32{1, 2, 3}, replication.Config{Segment: replication.SegmentConfig{Bytes: 150}}, time.Unix(0, 0))
	p.Restore(replication.Restored{Leader: mp.Leader, Epoch: mp.Epoch, ISR: mp.ISR, LogStart: start, HW: mp.HW, Batches: batches})
	out := filepath.Join(t.TempDir(), "golden-0")
	l := NewLog(out)
	if err := l.Reopen(p.Leader(), p.LeaderReplica().Log()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, name := range []string{"start", "00000000000000000002.log", "00000000000000000004.log"} {
		sameFile(t, filepath.Join(golden, "logs", "golden-0", name), filepath.Join(out, name))
	}
	if names, _ := filepath.Glob(filepath.Join(out, "*")); len(names) != 3 {
		t.Fatalf("rewritten golden/0 holds %v", names)
	}
}

func sameFile(t *testing.T, want, got string) {
	t.Helper()
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, g) {
		t.Fatalf("%s differs from %s:\n%q\n%q", got, want, g, w)
	}
}

// A second Open of a data dir in use fails; it succeeds once the first
// closed. An unreadable meta.json or one of another version is an error.
func TestOpenLocksAndChecks(t *testing.T) {
	dir := t.TempDir()
	d, m, err := Open(dir)
	if err != nil || m != nil {
		t.Fatalf("new data dir: %v, meta %v", err, m)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v", err)
	}
	d.Close()
	d, _, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteMeta(Meta{Version: MetaVersion, Topics: []MetaTopic{{Name: "t", ID: "00", Partitions: []MetaPartition{{Replicas: []int32{1}, ISR: []int32{1}}}}}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, m, err = Open(dir)
	if err != nil || m == nil || m.Topics[0].Name != "t" {
		t.Fatalf("reopen: %+v, %v", m, err)
	}
	d.Close()
	for raw, want := range map[string]string{
		"{not json":       "meta.json",
		`{"version": 2}`:  "version 2, want 1",
		`{"version": 1}x`: "meta.json",
	} {
		os.WriteFile(filepath.Join(dir, "meta.json"), []byte(raw), 0o644)
		if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("meta.json %q: %v, want an error with %q", raw, err, want)
		}
	}
	// A failed Open releases the lock.
	os.Remove(filepath.Join(dir, "meta.json"))
	d, _, err = Open(dir)
	if err != nil {
		t.Fatalf("open after failed opens: %v", err)
	}
	d.Close()
}

// RemoveLog deletes a partition's directory and an interrupted rewrite's
// leftovers beside it.
func TestRemoveLog(t *testing.T) {
	d, _, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dir := d.LogDir("t", 3)
	if filepath.Base(dir) != "t-3" {
		t.Fatalf("log dir %s", dir)
	}
	for _, x := range []string{dir, dir + ".tmp", dir + ".old"} {
		os.MkdirAll(x, 0o755)
	}
	d.RemoveLog("t", 3)
	for _, x := range []string{dir, dir + ".tmp", dir + ".old"} {
		if _, err := os.Stat(x); err == nil {
			t.Fatalf("%s is still there", x)
		}
	}
}
