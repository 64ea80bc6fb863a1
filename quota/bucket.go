package quota

import "math"

// TokenBucket is Kafka's TokenBucket stat of a controller mutation quota
// (KIP-599): it holds up to a burst of Samples windows' worth of the quota
// (partitions mutated), refills at the quota per second, and is over the
// quota while its tokens are below zero. A bucket starts full. Not safe
// for concurrent use: a sensor guards its own.
type TokenBucket struct {
	Samples  int   // quota.window.num
	WindowMs int64 // quota.window.size.seconds in ms
	tokens   float64
	lastMs   int64
	started  bool
}

func (b *TokenBucket) burst(bound float64) float64 {
	return float64(b.Samples) * float64(b.WindowMs) / 1000 * bound
}

// refill adds what bound per second gave back since the last update.
func (b *TokenBucket) refill(bound float64, nowMs int64) {
	burst := b.burst(bound)
	if !b.started {
		b.tokens, b.started = burst, true
	} else if nowMs > b.lastMs {
		b.tokens = math.Min(burst, b.tokens+bound*float64(nowMs-b.lastMs)/1000)
	}
	b.lastMs = max(b.lastMs, nowMs)
}

// Tokens is what is left at nowMs.
func (b *TokenBucket) Tokens(bound float64, nowMs int64) float64 {
	b.refill(bound, nowMs)
	return b.tokens
}

// throttleMs is the time until the tokens are back to zero, Kafka's
// ControllerMutationQuotaManager.throttleTimeMs; 0 when not below zero.
func (b *TokenBucket) throttleMs(bound float64) int64 {
	if b.tokens >= 0 {
		return 0
	}
	return int64(math.Round(-b.tokens / bound * 1000))
}

// RecordStrict is a strict quota's record (new request versions): a
// bucket already below zero refuses the mutation (ok false) and gives the
// throttle time; otherwise v is taken, even if that takes the bucket below
// zero, and the next mutation is the one refused.
func (b *TokenBucket) RecordStrict(v, bound float64, nowMs int64) (throttleMs int64, ok bool) {
	b.refill(bound, nowMs)
	if t := b.throttleMs(bound); t > 0 {
		return t, false
	}
	b.tokens -= v
	return 0, true
}

// RecordPermissive is a permissive quota's record (old request versions):
// v is always taken; the throttle time says how far below zero that went.
func (b *TokenBucket) RecordPermissive(v, bound float64, nowMs int64) (throttleMs int64) {
	b.refill(bound, nowMs)
	b.tokens -= v
	return b.throttleMs(bound)
}
