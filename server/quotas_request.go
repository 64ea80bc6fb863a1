package server

// Request quotas (request_percentage), as Kafka's ClientRequestQuotaManager
// enforces them: each request's handler time, in percent of one thread
// over a second, is recorded against the quota that applies to the
// connection (user and client id, in Kafka's order of precedence), over
// the same sampled windows on the cluster's clock as the byte rates. A
// rate above the quota throttles the response (throttle_time_ms, capped at
// one quota window as in Kafka) and mutes the connection as byte-rate
// throttles do; a throttled Fetch is answered empty. The larger of the
// byte-rate and request throttles applies.
//
// Handler time is the request's wall time in its handler minus the time it
// was parked: a Fetch long poll, a Produce waiting for acks=all, a
// JoinGroup or SyncGroup waiting for the rebalance, a fault's delay. Kafka
// holds no request handler thread for those (they are delayed operations),
// so they cost no quota. The requests a SASL listener answers before
// authentication (ApiVersions, SaslHandshake, SaslAuthenticate) are not
// counted: Kafka's authenticator answers them outside the handlers.

import (
	"time"

	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestStart is when the request's handler time starts, or the zero
// time when no quota of any kind is set: then the request is not timed at
// all (a quota set while it runs counts from the next request), which
// spares each request its clock readings.
func (cn *conn) requestStart() time.Time {
	c := cn.b.c
	cn.timed = c.cfg.LogRequests || !c.quotas.cfg.Load().Empty()
	if !cn.timed {
		return time.Time{}
	}
	return time.Now()
}

// parkBegin marks the start of a wait that holds no handler thread in
// Kafka; parkEnd (or the end of the request) ends it.
func (cn *conn) parkBegin() {
	if cn.timed {
		cn.parkedAt = time.Now()
	}
}

func (cn *conn) parkEnd() {
	if !cn.parkedAt.IsZero() {
		cn.parked += time.Since(cn.parkedAt)
		cn.parkedAt = time.Time{}
	}
}

// throttleRequest records the handler time of the request just handled
// (started at start) against the request quota and sets the connection's
// throttle; resp is nil for acks=0.
func (cn *conn) throttleRequest(start time.Time, resp kmsg.Response) {
	if !cn.timed {
		return
	}
	cn.parkEnd()
	busy := time.Since(start) - cn.parked
	cn.parked = 0
	s, bound := cn.quotaSensor(quota.RequestPercentage)
	if s == nil {
		return
	}
	now := cn.b.c.now().UnixMilli()
	s.mu.Lock()
	ms := s.rate.RecordRequest(max(busy, 0), bound, now)
	s.mu.Unlock()
	if ms <= 0 {
		return
	}
	if f, ok := resp.(*kmsg.FetchResponse); ok && len(f.Topics) > 0 {
		cn.emptyFetch(f)
	}
	cn.throttle = max(cn.throttle, time.Duration(ms)*time.Millisecond)
}

// emptyFetch answers a Fetch throttled by the request quota with no data,
// taking its bytes back out of the consumer quota, as Kafka does.
func (cn *conn) emptyFetch(f *kmsg.FetchResponse) {
	if s, _ := cn.quotaSensor(quota.ConsumerByteRate); s != nil {
		size := float64(len(f.AppendTo(nil)))
		now := cn.b.c.now().UnixMilli()
		s.mu.Lock()
		s.rate.Unrecord(size, now)
		s.mu.Unlock()
	}
	f.Topics = nil
}
