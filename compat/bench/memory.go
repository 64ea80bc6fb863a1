package bench

import (
	"runtime"
	"time"
)

// memSnapshot is the process's memory after a full collection.
type memSnapshot struct {
	heap  uint64 // Go heap in use by live objects
	cHeap int64  // C heap in use (-1: unknown)
}

// snapshotMem collects garbage and reads the heaps, until three readings
// 50 ms apart agree within 1 MiB with the same number of goroutines (at
// most two seconds): a cluster or client closed just before may have
// goroutines that still hold their data for a moment, longer when other
// processes load the machine (a franz-go consumer's buffered fetches, freed
// during the next target's run, once made its memory figure negative). It
// does not return memory to the OS, so the timed work after it pays no
// extra page faults.
func snapshotMem() memSnapshot {
	read := func() (memSnapshot, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		s := memSnapshot{heap: m.HeapAlloc, cHeap: -1}
		if n, ok := cHeapInUse(); ok {
			s.cHeap = n
		}
		return s, runtime.NumGoroutine()
	}
	deadline := time.Now().Add(2 * time.Second)
	s, g := read()
	for agreed := 0; agreed < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polling a condition, not synchronising
		next, ng := read()
		if absDiff(next.heap, s.heap) < 1<<20 && absDiff(uint64(next.cHeap), uint64(s.cHeap)) < 1<<20 && ng == g {
			agreed++
		} else {
			agreed = 0
		}
		s, g = next, ng
	}
	return s
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// growth is what the target holds between two snapshots: Go heap for Go
// targets, C heap for librdkafka (whose Go side, the client, is closed).
func growth(caps Caps, before, after memSnapshot) (float64, bool) {
	if caps.Process {
		return 0, false // its memory is not in this process
	}
	if caps.GoHeap {
		return float64(after.heap) - float64(before.heap), true
	}
	if before.cHeap < 0 || after.cHeap < 0 {
		return 0, false
	}
	return float64(after.cHeap - before.cHeap), true
}
