package quota

import "testing"

// BenchmarkRecordAndThrottle is one sensor update of the produce path.
func BenchmarkRecordAndThrottle(b *testing.B) {
	r := NewRate()
	now := int64(0)
	for b.Loop() {
		now++
		r.RecordAndThrottle(1000, 1e9, now)
	}
}
