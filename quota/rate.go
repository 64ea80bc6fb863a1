package quota

import (
	"math"
	"time"
)

// Kafka's quota window defaults (quota.window.num, quota.window.size.seconds).
const (
	DefaultSamples  = 11
	DefaultWindowMs = 1000
)

// Rate is Kafka's sampled Rate of a quota sensor: the sum of the samples
// still in the window over the window's length. Samples start when the
// first value after the previous sample's window arrives; samples older
// than Samples windows are forgotten. Not safe for concurrent use: a
// sensor guards its own.
type Rate struct {
	Samples  int   // quota.window.num
	WindowMs int64 // quota.window.size.seconds in ms
	samples  []sample
	current  int
}

type sample struct {
	start int64 // ms
	value float64
}

// NewRate returns a rate with Kafka's default window.
func NewRate() *Rate { return &Rate{Samples: DefaultSamples, WindowMs: DefaultWindowMs} }

// Record adds v at nowMs.
func (r *Rate) Record(v float64, nowMs int64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: nowMs})
	}
	s := &r.samples[r.current]
	if nowMs-s.start >= r.WindowMs {
		// The current sample is complete: the next one starts now.
		r.current = (r.current + 1) % r.Samples
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: nowMs})
		} else {
			r.samples[r.current] = sample{start: nowMs}
		}
		s = &r.samples[r.current]
	}
	s.value += v
}

// purge forgets samples that ended before the whole window.
func (r *Rate) purge(nowMs int64) {
	for i := range r.samples {
		if nowMs-r.samples[i].start >= int64(r.Samples)*r.WindowMs {
			r.samples[i] = sample{start: nowMs}
		}
	}
}

// WindowMs is the length the rate divides by, as Kafka's Rate.windowSize:
// from the oldest sample to now, but at least Samples-1 full windows so
// that a new sensor does not see a burst as a huge rate; at least 1 ms.
func (r *Rate) windowMs(nowMs int64) int64 {
	r.purge(nowMs)
	oldest := nowMs
	for _, s := range r.samples {
		oldest = min(oldest, s.start)
	}
	elapsed := nowMs - oldest
	if full, minFull := elapsed/r.WindowMs, int64(r.Samples-1); full < minFull {
		elapsed += (minFull - full) * r.WindowMs
	}
	return max(elapsed, 1)
}

// Measure is the rate per second at nowMs.
func (r *Rate) Measure(nowMs int64) float64 {
	w := r.windowMs(nowMs)
	total := 0.0
	for _, s := range r.samples {
		total += s.value
	}
	return total / (float64(w) / 1000)
}

// RecordAndThrottle records v and, if the rate now exceeds bound (per
// second), returns Kafka's throttle time: the overshoot relative to the
// bound times the window, (rate-bound)/bound*window, rounded to ms.
func (r *Rate) RecordAndThrottle(v, bound float64, nowMs int64) int64 {
	r.Record(v, nowMs)
	rate := r.Measure(nowMs)
	if rate <= bound {
		return 0
	}
	return int64(math.Round((rate - bound) / bound * float64(r.windowMs(nowMs))))
}

// Unrecord takes v back out of the current sample, as Kafka does for a
// fetch it answers empty because it throttles.
func (r *Rate) Unrecord(v float64, nowMs int64) {
	r.Record(-v, nowMs)
}

// MaxValueInWindow is the most a sensor may take in one window without
// overshooting bound, Kafka's getMaxValueInQuotaWindow: bound times
// Samples-1 windows. A fetch is capped to it so that one response can
// never throttle by itself.
func (r *Rate) MaxValueInWindow(bound float64) float64 {
	return bound * float64(r.Samples-1) * float64(r.WindowMs) / 1000
}

// RequestTime is what a request quota records for a request that held a
// request handler for d: Kafka's nanosToPercentage, the percent of one
// thread over one second, so that a rate of 100 is one thread kept busy.
func RequestTime(d time.Duration) float64 {
	return float64(d.Nanoseconds()) * 100 / float64(time.Second)
}

// RecordRequest records a request's handler time against a
// request_percentage bound and returns the throttle time in ms, capped at
// one window as Kafka's ClientRequestQuotaManager caps it (a request quota
// never mutes a client for longer than quota.window.size.seconds).
func (r *Rate) RecordRequest(d time.Duration, bound float64, nowMs int64) int64 {
	return min(r.RecordAndThrottle(RequestTime(d), bound, nowMs), r.WindowMs)
}
