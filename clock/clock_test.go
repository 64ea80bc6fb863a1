package clock

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at is t0 plus d, for readable expectations.
func at(d time.Duration) time.Time { return t0.Add(d) }

// trace records "name@offset" for each callback, with the clock's time as
// the callback saw it.
type trace struct {
	clk *Clock
	got []string
}

func (tr *trace) fn(name string) func() {
	return func() { tr.got = append(tr.got, fmt.Sprintf("%s@%v", name, tr.clk.Now().Sub(t0))) }
}

func TestManualClockStandsStill(t *testing.T) {
	clk := NewManual(t0)
	if !clk.Manual() || !clk.Now().Equal(t0) {
		t.Fatalf("manual clock at %v, manual %v; want %v", clk.Now(), clk.Manual(), t0)
	}
	clk.Advance(1500 * time.Millisecond)
	if got := clk.Now(); !got.Equal(at(1500 * time.Millisecond)) {
		t.Fatalf("after Advance(1.5s) Now = %v", got)
	}
	if got := clk.Since(t0); got != 1500*time.Millisecond {
		t.Fatalf("Since(t0) = %v", got)
	}
	if got := clk.Offset(); got != 1500*time.Millisecond {
		t.Fatalf("Offset = %v", got)
	}
}

func TestAdvanceFiresInDeadlineOrderAtTheirTimes(t *testing.T) {
	clk := NewManual(t0)
	tr := &trace{clk: clk}
	clk.AfterFunc(3*time.Second, tr.fn("c"))
	clk.AfterFunc(1*time.Second, tr.fn("a"))
	clk.AfterFunc(2*time.Second, tr.fn("b1"))
	clk.AfterFunc(2*time.Second, tr.fn("b2")) // same deadline: creation order
	clk.AfterFunc(10*time.Second, tr.fn("late"))

	clk.Advance(3 * time.Second)
	want := []string{"a@1s", "b1@2s", "b2@2s", "c@3s"}
	if !slices.Equal(tr.got, want) {
		t.Fatalf("fired %v, want %v", tr.got, want)
	}
	if n, next := clk.Pending(); n != 1 || !next.Equal(at(10*time.Second)) {
		t.Fatalf("pending %d next %v, want 1 at 10s", n, next)
	}
	clk.Advance(7*time.Second - time.Nanosecond)
	if len(tr.got) != 4 {
		t.Fatalf("fired before its deadline: %v", tr.got)
	}
	clk.Advance(time.Nanosecond)
	if last := tr.got[len(tr.got)-1]; last != "late@10s" {
		t.Fatalf("last fired %q, want late@10s", last)
	}
}

func TestCallbacksScheduleWithinOneAdvance(t *testing.T) {
	clk := NewManual(t0)
	tr := &trace{clk: clk}
	// A periodic job that re-arms itself, and a callback that sets a timer
	// due before the target and one due after it.
	var tick *Timer
	tick = clk.AfterFunc(time.Second, func() {
		tr.fn("tick")()
		tick.Reset(time.Second)
	})
	clk.AfterFunc(1500*time.Millisecond, func() {
		tr.fn("spawn")()
		clk.AfterFunc(time.Second, tr.fn("child"))       // due at 2.5 s
		clk.AfterFunc(10*time.Second, tr.fn("grandkid")) // due at 11.5 s
	})
	clk.Advance(3 * time.Second)
	want := []string{"tick@1s", "spawn@1.5s", "tick@2s", "child@2.5s", "tick@3s"}
	if !slices.Equal(tr.got, want) {
		t.Fatalf("fired %v, want %v", tr.got, want)
	}
	if !clk.Now().Equal(at(3 * time.Second)) {
		t.Fatalf("Now after Advance = %v", clk.Now())
	}
}

func TestStopAndReset(t *testing.T) {
	clk := NewManual(t0)
	tr := &trace{clk: clk}
	a := clk.AfterFunc(time.Second, tr.fn("a"))
	b := clk.AfterFunc(2*time.Second, tr.fn("b"))
	if !a.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	if a.Stop() {
		t.Fatal("second Stop returned true")
	}
	if !b.Reset(5 * time.Second) {
		t.Fatal("Reset of a pending timer returned false")
	}
	clk.Advance(4 * time.Second)
	if len(tr.got) != 0 {
		t.Fatalf("fired %v, want nothing before 5s", tr.got)
	}
	if a.Reset(500 * time.Millisecond) { // stopped: not pending
		t.Fatal("Reset of a stopped timer returned true")
	}
	clk.Advance(time.Second)
	want := []string{"a@4.5s", "b@5s"}
	if !slices.Equal(tr.got, want) {
		t.Fatalf("fired %v, want %v", tr.got, want)
	}
	if b.Stop() {
		t.Fatal("Stop of a fired timer returned true")
	}
	// A timer stopped by an earlier callback of the same Advance does not fire.
	var victim *Timer
	clk.AfterFunc(time.Second, func() { victim.Stop() })
	victim = clk.AfterFunc(2*time.Second, tr.fn("victim"))
	clk.Advance(time.Minute)
	if len(tr.got) != 2 {
		t.Fatalf("a stopped timer fired: %v", tr.got)
	}
}

func TestChannelTimer(t *testing.T) {
	clk := NewManual(t0)
	tm := clk.NewTimer(100 * time.Millisecond)
	clk.Advance(99 * time.Millisecond)
	select {
	case v := <-tm.C:
		t.Fatalf("fired early with %v", v)
	default:
	}
	clk.Advance(time.Second)
	select {
	case v := <-tm.C:
		if !v.Equal(at(100 * time.Millisecond)) {
			t.Fatalf("fired with %v, want its deadline", v.Sub(t0))
		}
	default:
		t.Fatal("did not fire by the time Advance returned")
	}
	// A value nobody received is discarded by Reset, as with time.Timer.
	tm.Reset(time.Second)
	clk.Advance(time.Second)
	tm.Reset(time.Second)
	select {
	case v := <-tm.C:
		t.Fatalf("stale value %v after Reset", v)
	default:
	}
	clk.Advance(time.Second)
	if v := <-tm.C; !v.Equal(at(3099 * time.Millisecond)) {
		t.Fatalf("fired with %v", v.Sub(t0))
	}
}

// NewTimerAt fires at its deadline however far the clock moved since the
// caller computed it; one set in the past fires at once.
func TestNewTimerAt(t *testing.T) {
	clk := NewManual(t0)
	deadline := at(250 * time.Millisecond)
	clk.Advance(200 * time.Millisecond) // between computing the deadline and setting the timer
	tm := clk.NewTimerAt(deadline)
	clk.Advance(50 * time.Millisecond)
	select {
	case v := <-tm.C:
		if !v.Equal(deadline) {
			t.Fatalf("fired with %v", v.Sub(t0))
		}
	default:
		t.Fatal("did not fire at its deadline")
	}
	past := clk.NewTimerAt(t0)
	select {
	case <-past.C:
	case <-time.After(10 * time.Second):
		t.Fatal("a timer set in the past never fired")
	}
}

// A timer that is due when it is set fires without an Advance, as
// time.AfterFunc(0, f) does: time does not need to move for it.
func TestDueTimerFiresWithoutAdvance(t *testing.T) {
	clk := NewManual(t0)
	done := make(chan time.Time, 1)
	clk.AfterFunc(0, func() { done <- clk.Now() })
	select {
	case got := <-done:
		if !got.Equal(t0) {
			t.Fatalf("fired at %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a due timer on a manual clock never fired")
	}
	tm := clk.NewTimer(-time.Second)
	select {
	case <-tm.C:
	case <-time.After(10 * time.Second):
		t.Fatal("a due channel timer never fired")
	}
	if !clk.Now().Equal(t0) {
		t.Fatalf("manual clock moved by itself to %v", clk.Now())
	}
}

func TestRealClock(t *testing.T) {
	clk := New()
	if clk.Manual() {
		t.Fatal("New is manual")
	}
	before := time.Now()
	clk.Advance(time.Hour)
	if got := clk.Now().Sub(before); got < time.Hour || got > time.Hour+time.Minute {
		t.Fatalf("after Advance(1h) the clock is %v ahead of the wall clock", got)
	}
	// Advancing fires far timers now, in order, each seeing the clock at
	// (about) its deadline: time passes through them.
	var got []string
	start := clk.Now()
	note := func(name string) func() {
		return func() { got = append(got, fmt.Sprintf("%s@%v", name, clk.Since(start).Round(time.Hour))) }
	}
	clk.AfterFunc(2*time.Hour, note("far"))
	clk.AfterFunc(time.Hour, note("near"))
	clk.Advance(3 * time.Hour)
	if !slices.Equal(got, []string{"near@1h0m0s", "far@2h0m0s"}) {
		t.Fatalf("fired %v", got)
	}
	if ahead := clk.Since(start); ahead < 3*time.Hour || ahead > 3*time.Hour+time.Minute {
		t.Fatalf("after Advance(3h) the clock moved %v", ahead)
	}
	// A short timer fires by itself as the wall clock passes.
	tm := clk.NewTimer(time.Millisecond)
	select {
	case <-tm.C:
	case <-time.After(10 * time.Second):
		t.Fatal("a real clock's timer never fired")
	}
	done := make(chan struct{})
	clk.AfterFunc(time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a real clock's AfterFunc never fired")
	}
}

func TestNegativeAdvancePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Advance(-1) did not panic")
		}
	}()
	NewManual(t0).Advance(-1)
}

// schedule sets up a random population of timers on clk: one-shots,
// periodic jobs that re-arm themselves, callbacks that start new timers and
// callbacks that stop or reset others. Every firing is logged with its time.
func schedule(clk *Clock, seed uint64, log *[]string) {
	r := rand.New(rand.NewPCG(seed, 1))
	var timers []*Timer
	ms := func(n int) time.Duration { return time.Duration(1+r.IntN(n)) * time.Millisecond }
	note := func(s string) { *log = append(*log, fmt.Sprintf("%s@%v", s, clk.Now().Sub(t0))) }
	for i := range 40 {
		name := fmt.Sprint(i)
		switch i % 4 {
		case 0:
			timers = append(timers, clk.AfterFunc(ms(20000), func() { note(name) }))
		case 1:
			period := ms(3000)
			var tm *Timer
			tm = clk.AfterFunc(period, func() { note("p" + name); tm.Reset(period) })
			timers = append(timers, tm)
		case 2:
			d1, d2 := ms(10000), ms(10000)
			timers = append(timers, clk.AfterFunc(d1, func() {
				note("s" + name)
				clk.AfterFunc(d2, func() { note("c" + name) })
			}))
		case 3:
			victim, d, reset := r.IntN(len(timers)), ms(15000), ms(5000)
			timers = append(timers, clk.AfterFunc(d, func() {
				note(fmt.Sprintf("r%s>%d", name, victim))
				if victim%2 == 0 {
					timers[victim].Stop()
				} else {
					timers[victim].Reset(reset)
				}
			}))
		}
	}
}

// Advancing in many small steps and in one big step fire the same
// callbacks at the same times, in the same order.
func TestManySmallStepsEqualOneBigStep(t *testing.T) {
	for seed := range uint64(20) {
		var big, small []string
		clk := NewManual(t0)
		schedule(clk, seed, &big)
		clk.Advance(30 * time.Second)

		clk2 := NewManual(t0)
		schedule(clk2, seed, &small)
		r := rand.New(rand.NewPCG(seed, 2))
		for clk2.Now().Before(at(30 * time.Second)) {
			step := min(time.Duration(r.IntN(700))*time.Millisecond, at(30*time.Second).Sub(clk2.Now()))
			clk2.Advance(step)
		}
		if len(big) < 100 {
			t.Fatalf("seed %d: only %d firings; the schedule is too thin to prove anything", seed, len(big))
		}
		if !slices.Equal(big, small) {
			t.Fatalf("seed %d: one step and small steps differ:\n%s\n%s", seed, strings.Join(big, " "), strings.Join(small, " "))
		}
	}
}
