package server

import (
	"slices"
	"testing"
)

// A fetcher's queue keeps each partition once, in the order first marked,
// below and past the length where it starts to index, and again after a
// reset.
func TestPartitionSet(t *testing.T) {
	ps := make([]*partition, 3*partitionSetScan)
	for i := range ps {
		ps[i] = &partition{index: int32(i)}
	}
	var s partitionSet
	for round := range 2 {
		for _, n := range []int{5, partitionSetScan, len(ps)} {
			for i := range n {
				s.add(ps[i])
				s.add(ps[i/2]) // already there
			}
			if !slices.Equal(s.list, ps[:n]) {
				t.Fatalf("round %d, %d partitions: queue of %d, not each once in order", round, n, len(s.list))
			}
			s.reset()
			if len(s.list) != 0 || len(s.index) != 0 {
				t.Fatalf("reset left %d queued, %d indexed", len(s.list), len(s.index))
			}
		}
	}
}
