package replication

import "testing"

// locate's shortcut for the log's tail finds what a search from the start
// finds, for every offset around and inside a log of several segments,
// including one with a single batch.
func TestLocateAgreesWithScan(t *testing.T) {
	for _, perSeg := range []int{1, 2, 3} {
		p := NewPartition([]int32{1}, Config{Segment: SegmentConfig{Bytes: int64(100 * perSeg)}}, t0)
		for range 7 {
			mustAppend(t, p, sized(3, 100, 1), 1) // offsets 0-2, 3-5, ...
		}
		l := p.Replica(1).Log()
		scan := func(offset int64) (int, int) {
			for si, s := range l.segs {
				for bi, b := range s.batches {
					if b.LastOffset >= offset {
						return si, bi
					}
				}
			}
			return len(l.segs), 0
		}
		for offset := int64(-1); offset <= l.EndOffset()+2; offset++ {
			si, bi := l.locate(offset)
			if wsi, wbi := scan(offset); si != wsi || bi != wbi {
				t.Fatalf("%d batches per segment, offset %d: locate (%d, %d), scan (%d, %d)", perSeg, offset, si, bi, wsi, wbi)
			}
		}
	}
}
