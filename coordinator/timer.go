package coordinator

import (
	"time"

	"github.com/fakekafka/fakekafka/clock"
)

// AfterFunc runs fire after d on the runtime's clock if the shard is then
// still current at e (loaded at e, its partition led at e); otherwise it
// runs stale, if set, so the old load's state can stop its other timers
// and answer its waiters. Neither runs under a runtime lock. The timer is
// bound to e: once the shard moved on, fire never runs into the state of
// a newer load, because that state is another value armed by its own
// timers.
func (s *Shard[S]) AfterFunc(e Epoch, d time.Duration, fire, stale func()) *clock.Timer {
	return s.rt.cfg.Clock.AfterFunc(d, func() {
		if s.Current(e) {
			fire()
			return
		}
		if stale != nil {
			stale()
		}
	})
}

// Clock is the runtime's clock.
func (r *Runtime[S]) Clock() *clock.Clock { return r.cfg.Clock }
