package quota

import "testing"

func TestTokenBucketStrict(t *testing.T) {
	// 2 partitions/s over 11 windows of 1 s: a burst of 22 partitions.
	b := &TokenBucket{Samples: 11, WindowMs: 1000}
	if got := b.Tokens(2, 0); got != 22 {
		t.Fatalf("a new bucket holds %v, want the burst of 22", got)
	}
	if d, ok := b.RecordStrict(20, 2, 0); !ok || d != 0 {
		t.Fatalf("20 of 22: throttle %d ok %v", d, ok)
	}
	// 2 left: 10 more is accepted and takes the bucket to -8...
	if d, ok := b.RecordStrict(10, 2, 0); !ok || d != 0 {
		t.Fatalf("the mutation that crosses zero: throttle %d ok %v, want accepted", d, ok)
	}
	// ...so the next is refused until -8 refills at 2/s: 4000 ms.
	if d, ok := b.RecordStrict(1, 2, 0); ok || d != 4000 {
		t.Fatalf("below zero: throttle %d ok %v, want refused with 4000", d, ok)
	}
	// 1.5 s later: -8 + 3 = -5, 2500 ms to go.
	if d, ok := b.RecordStrict(1, 2, 1500); ok || d != 2500 {
		t.Fatalf("at 1.5 s: throttle %d ok %v, want refused with 2500", d, ok)
	}
	// 4 s: back to zero, accepted again.
	if d, ok := b.RecordStrict(1, 2, 4000); !ok || d != 0 {
		t.Fatalf("at 4 s: throttle %d ok %v", d, ok)
	}
	// Refill stops at the burst.
	if got := b.Tokens(2, 1_000_000); got != 22 {
		t.Fatalf("after a long idle: %v tokens, want 22", got)
	}
}

func TestTokenBucketPermissive(t *testing.T) {
	b := &TokenBucket{Samples: 11, WindowMs: 1000}
	if d := b.RecordPermissive(22, 2, 0); d != 0 {
		t.Fatalf("the whole burst: throttle %d", d)
	}
	// Always accepted; the throttle is the time back to zero: 6/2 s.
	if d := b.RecordPermissive(6, 2, 0); d != 3000 {
		t.Fatalf("throttle %d, want 3000", d)
	}
}
