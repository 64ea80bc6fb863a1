package server

import (
	"context"
	"fmt"
	"sync"
)

// faultCounter is what every kind of fault rule counts (the Kafka API's
// and the schema registry's): the requests it fired on, the ones it has
// left, whether it was removed, and a channel closed on each change so
// that WaitHits needs no polling.
type faultCounter struct {
	mu        sync.Mutex
	limit     int // Count: 0 for no limit
	hits      int
	remaining int           // when limit > 0
	removed   bool          // no longer fires
	changed   chan struct{} // closed and replaced on every hit and on removal
}

// newFaultCounter is a counter allowing limit hits (0: any number). It is
// a composite literal so that the rule's literal can hold it.
func newFaultCounter(limit int) faultCounter {
	return faultCounter{limit: limit, remaining: limit, changed: make(chan struct{})}
}

// signal wakes the waiters; fc.mu is held.
func (fc *faultCounter) signal() {
	close(fc.changed)
	fc.changed = make(chan struct{})
}

// take uses one hit if the rule has one left. The lock makes the last hit
// go to exactly one request.
func (fc *faultCounter) take() (hits int, ok bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.removed || (fc.limit > 0 && fc.remaining == 0) {
		return 0, false
	}
	if fc.limit > 0 {
		fc.remaining--
	}
	fc.hits++
	fc.signal()
	return fc.hits, true
}

// markRemoved stops the rule; false when it was removed already.
func (fc *faultCounter) markRemoved() bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.removed {
		return false
	}
	fc.removed = true
	fc.signal()
	return true
}

// Hits is how many requests the rule has fired on.
func (fc *faultCounter) Hits() int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.hits
}

// counts are the hits and the hits left (-1: no limit).
func (fc *faultCounter) counts() (hits, remaining int) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.limit == 0 {
		return fc.hits, -1
	}
	return fc.hits, fc.remaining
}

// waitHits waits until the rule has fired n times. It fails when ctx ends,
// closing is closed, or the rule can no longer get there (removed, or its
// count used up). name says which rule, in the errors.
func (fc *faultCounter) waitHits(ctx context.Context, closing <-chan struct{}, name string, n int) error {
	for {
		fc.mu.Lock()
		hits, removed, changed := fc.hits, fc.removed, fc.changed
		usedUp := fc.limit > 0 && fc.remaining == 0
		fc.mu.Unlock()
		switch {
		case hits >= n:
			return nil
		case removed:
			return fmt.Errorf("%s was removed after %d of %d hits", name, hits, n)
		case usedUp:
			return fmt.Errorf("%s used up its count of %d; %d hits can never happen", name, fc.limit, n)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%s: %d of %d hits: %w", name, hits, n, context.Cause(ctx))
		case <-closing:
			return fmt.Errorf("%s: cluster closed after %d of %d hits", name, hits, n)
		}
	}
}
