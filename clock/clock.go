// Package clock is the one clock a fakekafka cluster reads for every timer,
// deadline and timestamp decision, so a test can move time instead of
// waiting for it.
//
// A Clock runs in one of two modes. A real clock (New) follows the wall
// clock; a manual clock (NewManual) stands still until Advance moves it. Both
// can be advanced: a real clock then runs ahead of the wall clock by the sum
// of its advances.
//
// Advance fires every timer that became due, in deadline order, before it
// returns. AfterFunc callbacks run synchronously on the caller's goroutine,
// and on a manual clock each one sees Now equal to its own deadline, so
// advancing one minute in one step or in six hundred steps of 100 ms runs
// the same callbacks at the same times. A callback may start, stop and reset
// timers (a new one fires within the same Advance if it falls due before
// its target) but must not call Advance itself.
//
//	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	clk.AfterFunc(30*time.Second, func() { fmt.Println("fired at", clk.Now()) })
//	clk.Advance(time.Minute) // prints "fired at 2026-01-01 00:00:30 +0000 UTC"
package clock

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a real or manual clock with its timers. It is safe for
// concurrent use.
type Clock struct {
	manual bool

	// fireMu lets one pass fire timers at a time (an Advance, or the wake
	// that fires timers falling due on their own), so callbacks never run
	// concurrently with each other or out of deadline order.
	fireMu sync.Mutex

	mu     sync.Mutex
	now    time.Time     // manual: the current time
	offset time.Duration // real: how far advances moved it ahead of the wall clock
	timers timerHeap
	seq    uint64      // creation order breaks deadline ties
	wake   *time.Timer // fires the timers that fall due without an Advance

	// realOffset mirrors offset so that Now on a real clock, which every
	// produce and fetch reads, takes no lock shared by the whole cluster.
	realOffset atomic.Int64
}

// New returns a real clock: Now is the wall clock plus whatever Advance
// added, and timers fire when that time reaches them.
func New() *Clock {
	c := &Clock{}
	c.wake = time.AfterFunc(time.Hour, c.fireDue)
	c.wake.Stop()
	return c
}

// NewManual returns a manual clock standing at start (the wall clock, to
// the millisecond, if start is zero). Its time moves only in Advance.
func NewManual(start time.Time) *Clock {
	if start.IsZero() {
		start = time.Now().Truncate(time.Millisecond)
	}
	c := New()
	c.manual, c.now = true, start.Round(0)
	return c
}

// Manual reports whether the clock moves only when advanced.
func (c *Clock) Manual() bool { return c.manual }

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	if !c.manual {
		if off := c.realOffset.Load(); off != 0 {
			return time.Now().Add(time.Duration(off))
		}
		return time.Now() // what Add(0) gives, without its cost
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.manual {
		return c.now
	}
	return time.Now().Add(c.offset)
}

// Since is Now().Sub(t).
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Offset is how far the clock has been advanced in total. On a real clock
// it is how far Now runs ahead of the wall clock.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Pending is the number of timers waiting to fire, and the earliest
// deadline among them (zero when none is).
func (c *Clock) Pending() (n int, next time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) > 0 {
		next = c.timers[0].when
	}
	return len(c.timers), next
}

// Advance moves the clock forward by d and, before it returns, fires every
// timer due by the new time in deadline order (timers with the same
// deadline in the order they were set). Time passes through each deadline
// on the way: on a manual clock each callback runs with Now at its
// deadline; on a real clock Now is moved up to the deadline (it never goes
// back, so a callback of a timer that was already overdue sees a later
// time). Now is the target once Advance returns. Advance(0) fires whatever
// is due already. It panics if d is negative: time does not go back.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("clock: negative advance")
	}
	c.fireMu.Lock()
	defer c.fireMu.Unlock()
	c.mu.Lock()
	target, targetOffset := c.now.Add(d), c.offset+d // now: manual only
	for len(c.timers) > 0 {
		limit := target
		if !c.manual {
			limit = time.Now().Add(targetOffset)
		}
		t := c.timers[0]
		if t.when.After(limit) {
			break
		}
		heap.Pop(&c.timers)
		if c.manual && t.when.After(c.now) {
			c.now = t.when
		}
		if off := t.when.Sub(time.Now()); !c.manual && off > c.offset {
			c.setOffsetLocked(min(off, targetOffset))
		}
		now := c.nowLocked()
		c.mu.Unlock()
		t.fire(now)
		c.mu.Lock()
	}
	if c.manual {
		c.now = target
	}
	c.setOffsetLocked(targetOffset)
	c.armLocked()
	c.mu.Unlock()
}

// setOffsetLocked moves a real clock's offset. Callers hold c.mu.
func (c *Clock) setOffsetLocked(d time.Duration) {
	c.offset = d
	c.realOffset.Store(int64(d))
}

// fireDue fires the timers that fell due without an Advance: on a real
// clock as the wall clock reaches them, on a manual one those set with a
// deadline not after Now.
func (c *Clock) fireDue() { c.Advance(0) }

// armLocked sets the wake for the earliest timer: when the wall clock
// reaches it on a real clock; on a manual clock only if it is already due,
// since time will not move by itself. Callers hold c.mu.
func (c *Clock) armLocked() {
	if len(c.timers) == 0 {
		c.wake.Stop()
		return
	}
	wait := c.timers[0].when.Sub(c.nowLocked())
	if c.manual && wait > 0 {
		c.wake.Stop()
		return
	}
	c.wake.Reset(max(wait, 0))
}

// AfterFunc calls f once the clock reaches Now()+d, as time.AfterFunc does.
// Stop returns false once f has started.
func (c *Clock) AfterFunc(d time.Duration, f func()) *Timer {
	t := &Timer{c: c, f: f, index: -1}
	t.Reset(d)
	return t
}

// NewTimer returns a timer that sends the clock's time on its channel C
// once the clock reaches Now()+d. The send does not block: C holds one value.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	ch := make(chan time.Time, 1)
	t := &Timer{C: ch, c: c, ch: ch, index: -1}
	t.Reset(d)
	return t
}

// NewTimerAt is NewTimer with a deadline instead of a duration: it fires
// once the clock reaches when (at the next chance if it already has).
// Unlike NewTimer(when.Sub(c.Now())), no Advance can slip in between
// reading the time and setting the timer and push the deadline back.
func (c *Clock) NewTimerAt(when time.Time) *Timer {
	ch := make(chan time.Time, 1)
	t := &Timer{C: ch, c: c, ch: ch, index: -1}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.resetLocked(when)
	return t
}

// Timer is a clock's timer, made by AfterFunc or NewTimer.
type Timer struct {
	// C receives the time the timer fired (NewTimer only).
	C <-chan time.Time

	c     *Clock
	ch    chan time.Time
	f     func()
	when  time.Time
	seq   uint64
	index int // in c.timers, or -1 when not pending
}

// Stop keeps the timer from firing. It reports whether the timer was
// pending: false if it already fired (or its callback started) or was
// stopped. A value not yet received from C is discarded.
func (t *Timer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	pending := t.index >= 0
	if pending {
		heap.Remove(&c.timers, t.index)
		c.armLocked()
	}
	t.drain()
	return pending
}

// Reset makes the timer fire d after the clock's current time, whether it
// was pending, fired or stopped. It reports whether it was pending. A value
// not yet received from C is discarded.
func (t *Timer) Reset(d time.Duration) bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.resetLocked(c.nowLocked().Add(d))
}

// resetLocked sets the timer for when. Callers hold c.mu.
func (t *Timer) resetLocked(when time.Time) bool {
	c := t.c
	pending := t.index >= 0
	t.when = when
	c.seq++
	t.seq = c.seq
	if pending {
		heap.Fix(&c.timers, t.index)
	} else {
		heap.Push(&c.timers, t)
	}
	t.drain()
	c.armLocked()
	return pending
}

// When is the deadline the timer was last set for.
func (t *Timer) When() time.Time {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.when
}

func (t *Timer) drain() {
	if t.ch != nil {
		select {
		case <-t.ch:
		default:
		}
	}
}

func (t *Timer) fire(now time.Time) {
	if t.f != nil {
		t.f()
		return
	}
	select {
	case t.ch <- now:
	default:
	}
}

// timerHeap orders pending timers by deadline, then by when they were set.
type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}
