package replication

import "testing"

// A retry of an idempotent batch answers the max timestamp the first
// append stored, which a Produce answers as the retry's LogAppendTime; a
// new batch answers none.
func TestDuplicateAnswersStoredTimestamp(t *testing.T) {
	p := newPartition(t, 1)
	first := idemBatch(7, 0, 0, 2)
	first.MaxTimestamp = 1_700_000_000_123
	if res := mustAppend(t, p, first, 1); res.Duplicate || res.BaseOffset != 0 || res.Timestamp != 0 {
		t.Fatalf("first append = %+v, want offset 0 and no timestamp", res)
	}
	second := idemBatch(7, 0, 2, 1)
	second.MaxTimestamp = 1_700_000_000_456
	mustAppend(t, p, second, 1) // offset 2
	retry := idemBatch(7, 0, 0, 2)
	retry.MaxTimestamp = 1_800_000_000_000 // the retry's own is not what counts
	if res := mustAppend(t, p, retry, 1); !res.Duplicate || res.BaseOffset != 0 || res.Timestamp != 1_700_000_000_123 {
		t.Fatalf("retry = %+v, want the duplicate at 0 with the stored timestamp 1700000000123", res)
	}
	if res := mustAppend(t, p, idemBatch(7, 0, 2, 1), 1); !res.Duplicate || res.BaseOffset != 2 || res.Timestamp != 1_700_000_000_456 {
		t.Fatalf("retry of the second = %+v, want the duplicate at 2 with 1700000000456", res)
	}
}
