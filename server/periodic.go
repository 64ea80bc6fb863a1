package server

// The cluster's clock. Every timer, deadline and timestamp decision reads
// c.cfg.Clock (package clock): the periodic ISR, checkpoint and idle-fetch
// jobs below, broker fencing, group and KIP-848 session and rebalance
// timers, the coordinator's write timeout, fault-rule delays, Fetch's
// max_wait, Produce's timeout, LogAppendTime and commit timestamps. Only
// request-latency logging and a second bound on Fetch's max_wait (an empty
// answer changes nothing, and idle consumers must not hang on a manual
// clock) read the wall clock.
//
// The periodic jobs are clock timers that re-arm themselves, not goroutines
// with tickers, so an AdvanceClock runs every round that falls due inline
// and at its own time: after "advance 45 s" the ISR checks and the idle
// followers' empty fetches of those 45 s have all happened.

import (
	"errors"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/clock"
)

// Clock is the cluster's clock (Config.Clock).
func (c *Cluster) Clock() *clock.Clock { return c.cfg.Clock }

// Now is the cluster's current time.
func (c *Cluster) Now() time.Time { return c.cfg.Clock.Now() }

func (c *Cluster) now() time.Time { return c.cfg.Clock.Now() }

// ErrNegativeAdvance is returned by AdvanceClock for a negative duration.
var ErrNegativeAdvance = errors.New("the clock cannot go back")

// AdvanceClock moves the cluster's clock forward by d and runs everything
// that fell due, in time order, before it returns: ISR checks, idle
// followers' fetches, fencing, group session and rebalance timeouts. On a
// real clock it jumps ahead of the wall clock for good. Requests parked on
// a deadline (a Fetch's max_wait, an acks=all Produce's timeout) are
// released by then and answer on their own connections right after. It
// must not be called from inside a clock callback.
func (c *Cluster) AdvanceClock(d time.Duration) error {
	if d < 0 {
		return ErrNegativeAdvance
	}
	c.cfg.Clock.Advance(d)
	return nil
}

// job is a periodic task on the cluster's clock: f runs every interval(),
// as one clock timer that re-arms itself after each round.
type job struct {
	interval func() time.Duration
	f        func()

	mu      sync.Mutex
	t       *clock.Timer
	stopped bool
	running sync.WaitGroup // a round in progress, for stop
}

// every starts a job whose first round is interval() from now.
func (c *Cluster) every(interval func() time.Duration, f func()) *job {
	return c.everyAfter(interval(), interval, f)
}

// everyAfter starts a job whose first round is first from now, the next
// ones interval() apart.
func (c *Cluster) everyAfter(first time.Duration, interval func() time.Duration, f func()) *job {
	j := &job{interval: interval, f: f}
	j.mu.Lock()
	j.t = c.cfg.Clock.AfterFunc(first, j.round)
	j.mu.Unlock()
	return j
}

func (j *job) round() {
	j.mu.Lock()
	if j.stopped {
		j.mu.Unlock()
		return
	}
	j.running.Add(1)
	j.mu.Unlock()
	defer j.running.Done()
	j.f()
	j.mu.Lock()
	if !j.stopped {
		j.t.Reset(j.interval())
	}
	j.mu.Unlock()
}

// retune brings the next round forward if the job's current interval,
// counted from now, ends before it: a shorter interval applies at once. A
// longer one applies from the next round, so frequent retunes (topics
// being created) never starve the job.
func (j *job) retune(now time.Time) {
	j.mu.Lock()
	if d := j.interval(); !j.stopped && now.Add(d).Before(j.t.When()) {
		j.t.Reset(d)
	}
	j.mu.Unlock()
}

// stop ends the job and waits for a round in progress.
func (j *job) stop() {
	j.mu.Lock()
	j.stopped = true
	j.t.Stop()
	j.mu.Unlock()
	j.running.Wait()
}

// ClockState reads the cluster's clock.
func (c *Cluster) ClockState() ClockState {
	clk := c.cfg.Clock
	mode := "real"
	if clk.Manual() {
		mode = "manual"
	}
	now := clk.Now()
	n, _ := clk.Pending()
	return ClockState{Mode: mode, Now: now.Round(0), NowMillis: now.UnixMilli(), AdvancedMillis: clk.Offset().Milliseconds(), Timers: n}
}
