package control

import (
	"net/http"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

// maxAdvance caps one HTTP advance at 30 days, past any Kafka default (7
// days of retention): advancing runs every periodic round in between (a
// day is seconds of work), and the request holds until it is done.
const maxAdvance = 30 * 24 * time.Hour

// registerClockRoutes adds the cluster's clock:
//
//	GET  /v1/clock                  ClockState
//	POST /v1/clock/advance {"ms":N} AdvanceClock, then the new ClockState
func (c cluster) registerClockRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/clock", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.ClockState())
	})
	mux.HandleFunc("POST /v1/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var body api.ClockAdvanceRequest
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		switch {
		case body.Ms == nil:
			httpFail(w, httpErrorf(http.StatusBadRequest, `want {"ms": N}: milliseconds to advance the clock by`))
			return
		case *body.Ms < 0:
			httpFail(w, httpErrorf(http.StatusBadRequest, "ms must not be negative (got %d): the clock cannot go back", *body.Ms))
			return
		case *body.Ms > maxAdvance.Milliseconds():
			httpFail(w, httpErrorf(http.StatusBadRequest, "ms must be at most %d (30 days) per advance, got %d", maxAdvance.Milliseconds(), *body.Ms))
			return
		}
		c.AdvanceClock(time.Duration(*body.Ms) * time.Millisecond)
		httpJSON(w, http.StatusOK, c.ClockState())
	})
}
