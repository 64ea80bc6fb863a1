package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

// sseKeepAlive is how often an idle event stream sends a comment, so
// proxies and clients do not take it for dead.
const sseKeepAlive = 15 * time.Second

// registerEventRoutes adds the event stream to the control API:
//
//	GET /v1/events?since=SEQ&type=T1,T2&topic=t&partition=0&broker=1&group=g&transactional_id=x&subject=s
//	    {"events":[Event...],"last_seq":N}: the kept events after SEQ that
//	    match every filter given; last_seq is the newest event's number,
//	    the since of the next poll
//	GET /v1/events/stream (same filters)
//	    text/event-stream: the same events, then every new one as it
//	    happens ("id: SEQ", "event: TYPE", "data: JSON"); a reconnecting
//	    EventSource resumes after its Last-Event-ID. GET /v1/events with
//	    Accept: text/event-stream streams too.
//
//	GET /v1/events?since=SEQ&wait_ms=N (same filters)
//	    as above, but with nothing matching after SEQ it waits up to N ms
//	    for a match (a long poll): WaitForAfter over HTTP. An empty list
//	    means the time ran out; pass last_seq as the next since.
//
//	GET /v1/events?before=SEQ&limit=N (same filters)
//	    history: the newest N kept events before SEQ that match, oldest
//	    first; "more": true says older matching ones are kept too (ask
//	    again with before= the first one's seq). limit also applies
//	    without before (the newest N after since), and to the first
//	    answer of a stream.
//
// Filters: type=T1,T2 keeps only those types; not=T1,T2 drops those
// (a page that hides hw_advanced asks not=hw_advanced, so a busy
// partition never crowds the rest out of a limited answer);
// internal=false drops events on internal topics (__consumer_offsets,
// __transaction_state). A bad filter is 400.
func (c cluster) registerEventRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			c.streamEvents(w, r)
			return
		}
		since, match, err := eventQuery(r)
		var wait time.Duration
		if err == nil {
			wait, err = waitQuery(r)
		}
		var before uint64
		var limit int
		if err == nil {
			before, limit, err = historyQuery(r)
		}
		if err != nil {
			httpFail(w, err)
			return
		}
		if before > 0 || limit > 0 {
			c.eventHistory(w, since, before, limit, match)
			return
		}
		out := []api.Event{}
		last := since
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		defer cancel()
		for {
			for _, e := range c.Events(last) {
				last = e.Seq
				if match(e) {
					out = append(out, e)
				}
			}
			// With wait_ms, hold the answer until something matches.
			if len(out) > 0 || wait == 0 {
				break
			}
			if _, err := c.WaitEvents(ctx, last); err != nil {
				break // the wait is over (or the cluster closed): answer what there is, nothing
			}
		}
		last = max(last, c.LastEventSeq())
		httpJSON(w, http.StatusOK, struct {
			Events  []api.Event `json:"events"`
			LastSeq uint64      `json:"last_seq"`
		}{out, last})
	})
	mux.HandleFunc("GET /v1/events/stream", c.streamEvents)
}

// maxEventWait caps wait_ms: past it, a client should poll again.
const maxEventWait = 10 * time.Minute

// maxEventLimit caps limit: the ring holds Config.EventBuffer events.
const maxEventLimit = 100000

// historyQuery parses before and limit.
func historyQuery(r *http.Request) (uint64, int, error) {
	q := r.URL.Query()
	var before uint64
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return 0, 0, httpErrorf(http.StatusBadRequest, "before %q is not a positive integer", s)
		}
		if q.Get("wait_ms") != "" {
			return 0, 0, httpErrorf(http.StatusBadRequest, "before and wait_ms do not combine: before asks for the past")
		}
		before = n
	}
	limit := 0
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxEventLimit {
			return 0, 0, httpErrorf(http.StatusBadRequest, "limit %q must be between 1 and %d", s, maxEventLimit)
		}
		limit = n
	}
	return before, limit, nil
}

// eventHistory answers a before/limit request at once: the newest limit
// kept events in (since, before) that match.
func (c cluster) eventHistory(w http.ResponseWriter, since, before uint64, limit int, match api.EventMatcher) {
	out := []api.Event{}
	for _, e := range c.Events(since) {
		if before > 0 && e.Seq >= before {
			break
		}
		if match(e) {
			out = append(out, e)
		}
	}
	more := false
	if limit > 0 && len(out) > limit {
		out, more = out[len(out)-limit:], true
	}
	httpJSON(w, http.StatusOK, struct {
		Events  []api.Event `json:"events"`
		LastSeq uint64      `json:"last_seq"`
		More    bool        `json:"more,omitempty"`
	}{out, c.LastEventSeq(), more})
}

// waitQuery parses wait_ms.
func waitQuery(r *http.Request) (time.Duration, error) {
	s := r.URL.Query().Get("wait_ms")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxEventWait.Milliseconds() {
		return 0, httpErrorf(http.StatusBadRequest, "wait_ms %q must be milliseconds between 0 and %d", s, maxEventWait.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}

// eventQuery parses since and the filters of an events request.
func eventQuery(r *http.Request) (uint64, api.EventMatcher, error) {
	q := r.URL.Query()
	var since uint64
	sinceStr := q.Get("since")
	if sinceStr == "" {
		sinceStr = r.Header.Get("Last-Event-ID")
	}
	if sinceStr != "" {
		n, err := strconv.ParseUint(sinceStr, 10, 64)
		if err != nil {
			return 0, nil, httpErrorf(http.StatusBadRequest, "since %q is not a non-negative integer", sinceStr)
		}
		since = n
	}
	typeList := func(key string) ([]api.EventType, error) {
		var types []api.EventType
		for _, s := range q[key] {
			for _, t := range strings.Split(s, ",") {
				if t == "" {
					continue
				}
				if !slices.Contains(api.EventTypes, api.EventType(t)) {
					return nil, httpErrorf(http.StatusBadRequest, "unknown event type %q in %s; known types: %v", t, key, api.EventTypes)
				}
				types = append(types, api.EventType(t))
			}
		}
		return types, nil
	}
	types, err := typeList("type")
	if err != nil {
		return 0, nil, err
	}
	notTypes, err := typeList("not")
	if err != nil {
		return 0, nil, err
	}
	internal := true
	if s := q.Get("internal"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return 0, nil, httpErrorf(http.StatusBadRequest, "internal %q is not true or false", s)
		}
		internal = b
	}
	num := func(key string) (int32, bool, error) {
		s := q.Get(key)
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return 0, false, httpErrorf(http.StatusBadRequest, "%s %q is not a non-negative 32-bit integer", key, s)
		}
		return int32(n), true, nil
	}
	partition, hasPartition, err := num("partition")
	if err != nil {
		return 0, nil, err
	}
	broker, hasBroker, err := num("broker")
	if err != nil {
		return 0, nil, err
	}
	topic, group, txnID, subject := q.Get("topic"), q.Get("group"), q.Get("transactional_id"), q.Get("subject")
	return since, func(e api.Event) bool {
		return (len(types) == 0 || slices.Contains(types, e.Type)) &&
			!slices.Contains(notTypes, e.Type) &&
			(internal || !strings.HasPrefix(e.Topic, "__")) &&
			(topic == "" || e.Topic == topic) &&
			(!hasPartition || e.Partition == partition) &&
			(!hasBroker || e.Broker == broker || e.Leader == broker) &&
			(group == "" || e.Group == group) &&
			(txnID == "" || e.TransactionalID == txnID) &&
			(subject == "" || e.Subject == subject)
	}, nil
}

// streamEvents serves the events as server-sent events until the client
// goes away or the cluster closes.
func (c cluster) streamEvents(w http.ResponseWriter, r *http.Request) {
	since, match, err := eventQuery(r)
	var before uint64
	var limit int
	if err == nil {
		before, limit, err = historyQuery(r)
	}
	if err == nil && before > 0 {
		err = httpErrorf(http.StatusBadRequest, "a stream follows what comes next: before is for GET /v1/events")
	}
	if err != nil {
		httpFail(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		httpFail(w, httpErrorf(http.StatusInternalServerError, "this server cannot stream"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A comment first, so the client sees the stream open at once.
	fmt.Fprintf(w, ": fakekafka events after %d\n\n", since)
	if limit > 0 {
		// The backlog: only the newest limit that match.
		var backlog []api.Event
		for _, e := range c.Events(since) {
			since = e.Seq
			if match(e) {
				backlog = append(backlog, e)
			}
		}
		for _, e := range backlog[max(0, len(backlog)-limit):] {
			if !writeEvent(w, e) {
				return
			}
		}
	}
	flusher.Flush()
	for {
		// Wait at most sseKeepAlive for news, then say the stream is alive.
		ctx, cancel := context.WithTimeout(r.Context(), sseKeepAlive)
		evs, err := c.WaitEvents(ctx, since)
		cancel()
		switch {
		case r.Context().Err() != nil:
			return // the client went away
		case errors.Is(err, context.DeadlineExceeded):
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
			continue
		case err != nil:
			return // the cluster closed
		}
		for _, e := range evs {
			since = e.Seq
			if !match(e) {
				continue
			}
			if !writeEvent(w, e) {
				return
			}
		}
		flusher.Flush()
	}
}

// writeEvent writes e as a server-sent event; false when the client is gone.
func writeEvent(w http.ResponseWriter, e api.Event) bool {
	b, _ := json.Marshal(e)
	_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, b)
	return err == nil
}
