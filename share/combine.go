package share

import (
	"cmp"
	"slices"
)

// CombineBatches merges the state batches a share partition had with the
// ones a write brings, as Kafka 4.4's share coordinator does: batches (or
// their parts) below startOffset are dropped (startOffset -1: none), and
// where batches overlap, the one with the higher delivery count wins, then
// the higher delivery state; adjacent runs with the same state and count
// coalesce. The result is sorted and without overlaps.
func CombineBatches(soFar, updates []StateBatch, startOffset int64) []StateBatch {
	var in []StateBatch
	for _, src := range [][]StateBatch{soFar, updates} {
		for _, b := range src {
			if startOffset != -1 && b.LastOffset < startOffset {
				continue
			}
			if startOffset != -1 && b.FirstOffset < startOffset {
				b.FirstOffset = startOffset
			}
			in = append(in, b)
		}
	}
	if len(in) <= 1 {
		return in
	}
	// A sweep over the batches' boundaries: at every boundary the highest
	// priority batch still open decides the run that starts there.
	type event struct {
		offset int64
		begin  bool
		b      StateBatch
	}
	evs := make([]event, 0, 2*len(in))
	for _, b := range in {
		evs = append(evs, event{b.FirstOffset, true, b}, event{b.LastOffset + 1, false, b})
	}
	slices.SortStableFunc(evs, func(x, y event) int {
		if c := cmp.Compare(x.offset, y.offset); c != 0 {
			return c
		}
		// Ends before begins at one offset.
		switch {
		case x.begin == y.begin:
			return 0
		case !x.begin:
			return -1
		}
		return 1
	})
	type prio struct {
		count int16
		state RecordState
	}
	active := map[prio]int{}
	winner := func() (prio, bool) {
		var best prio
		found := false
		for p := range active {
			if !found || p.count > best.count || p.count == best.count && p.state > best.state {
				best, found = p, true
			}
		}
		return best, found
	}
	var out []StateBatch
	var openFrom int64
	var open prio
	haveOpen := false
	for i := 0; i < len(evs); {
		off := evs[i].offset
		if haveOpen && off > openFrom {
			out = appendRun(out, StateBatch{FirstOffset: openFrom, LastOffset: off - 1, DeliveryState: open.state, DeliveryCount: open.count})
		}
		for ; i < len(evs) && evs[i].offset == off; i++ {
			p := prio{evs[i].b.DeliveryCount, evs[i].b.DeliveryState}
			if evs[i].begin {
				active[p]++
			} else if active[p]--; active[p] == 0 {
				delete(active, p)
			}
		}
		open, haveOpen = winner()
		openFrom = off
	}
	return out
}

// appendRun appends r, extending the last run when r continues it with the
// same state and count.
func appendRun(out []StateBatch, r StateBatch) []StateBatch {
	if n := len(out); n > 0 {
		t := &out[n-1]
		if t.LastOffset+1 == r.FirstOffset && t.DeliveryState == r.DeliveryState && t.DeliveryCount == r.DeliveryCount {
			t.LastOffset = r.LastOffset
			return out
		}
	}
	return append(out, r)
}
