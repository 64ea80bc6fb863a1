package server

import (
	"time"

	"github.com/fakekafka/fakekafka/clock"
)

// connPark is what a connection parks a request with (an acks=all produce
// waiting for its HW): the channel the partitions signal and a timer on the
// cluster clock for the request's deadline. A connection handles one
// request at a time, so it keeps one of each instead of making them for
// every request.
type connPark struct {
	wake  chan struct{}
	timer *clock.Timer
	// parked is the scratch list of an acks=all produce's partitions.
	parked []parkedProduce
}

// park returns the connection's wake channel, emptied of any signal left
// from an earlier request, and its timer set to fire after d. Callers stop
// the timer when done.
func (cn *conn) park(d time.Duration) (chan struct{}, *clock.Timer) {
	pk := &cn.parking
	if pk.wake == nil {
		pk.wake = make(chan struct{}, 1)
		pk.timer = cn.b.c.cfg.Clock.NewTimer(d)
		return pk.wake, pk.timer
	}
	select {
	case <-pk.wake:
	default:
	}
	pk.timer.Reset(d)
	return pk.wake, pk.timer
}
