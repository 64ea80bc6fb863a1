package server

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
)

// BenchmarkPartitionMemory reports the heap an idle partition holds: a
// topic of 10,000 partitions (rf 3, and rf 1 to compare with brokers that
// do not replicate) is created on a fresh cluster (on a manual clock),
// every follower fetches it once (as its first idle round would), a minute
// passes in which every periodic task (ISR checks, HW checkpoints,
// retention, the cleaner) and the followers run once more, and the live
// heap after a full collection is compared with the heap before. Each op
// creates one such topic; bytes/partition is the growth divided by the
// partitions created. FAKEKAFKA_HEAPPROFILE=file writes a heap profile of
// the last op, taken while the topic still exists.
//
//	go test ./server -run '^$' -bench PartitionMemory -benchtime 3x
func BenchmarkPartitionMemory(b *testing.B) {
	b.Run("rf=3", func(b *testing.B) { partitionMemory(b, 3) })
	b.Run("rf=1", func(b *testing.B) { partitionMemory(b, 1) })
}

func partitionMemory(b *testing.B, rf int16) {
	const partitions = 10_000
	if os.Getenv("FAKEKAFKA_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1 // every allocation, not a sample
	}
	var total float64
	for i := range b.N {
		c, err := NewCluster(Config{Clock: clock.NewManual(clockStart)})
		if err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		if err := c.CreateTopic("idle", partitions, rf, nil); err != nil {
			b.Fatal(err)
		}
		idleMinute(c)
		after := liveHeap()
		total += float64(after) - float64(before)
		if path := os.Getenv("FAKEKAFKA_HEAPPROFILE"); path != "" && i == b.N-1 {
			writeHeapProfile(b, path)
		}
		c.Close()
	}
	b.ReportMetric(total/float64(b.N*partitions), "bytes/partition")
}

// idleMinute runs what an idle cluster does: the followers' first fetch
// round, then a minute later each periodic task and another round.
func idleMinute(c *Cluster) {
	for _, f := range c.fetchers {
		f.pollAll()
	}
	c.AdvanceClock(time.Minute)
	c.checkISRs()
	c.checkpoint()
	c.checkRetention()
	c.cleanLogs()
	for _, f := range c.fetchers {
		f.pollAll()
	}
}

// liveHeap is the heap in use after full collections.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
