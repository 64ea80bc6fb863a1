package server

// Controller mutation quotas (controller_mutation_rate, KIP-599): the
// partitions a client creates (CreateTopics, CreatePartitions) or deletes
// (DeleteTopics) are taken from a token bucket per quota (package quota),
// refilled at the quota per second on the cluster's clock. New request
// versions (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+) get
// a strict quota: once the bucket is below zero, each further topic is
// refused with THROTTLING_QUOTA_EXCEEDED (the mutation that crosses zero
// is still accepted). Older versions get a permissive one: everything is
// done and only the throttle applies. Either way the response carries the
// throttle time (the time for the bucket to refill to zero) and the
// connection is muted for it, as Kafka's
// sendResponseMaybeThrottleWithControllerQuota does. Validate-only
// requests and failed mutations take nothing.

import (
	"time"

	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
)

// mutationQuota is one request's controller mutation quota.
type mutationQuota struct {
	cn         *conn
	s          *sensor
	bound      float64
	strict     bool
	throttleMs int64
}

// errThrottlingQuota is what a strict quota answers a refused topic.
var errThrottlingQuota = kerr.ThrottlingQuotaExceeded

// mutationQuota is the quota that applies to the connection, strict or
// not; nil when there is none (every method accepts nil).
func (cn *conn) mutationQuota(strict bool) *mutationQuota {
	s, bound := cn.quotaSensor(quota.ControllerMutationRate)
	if s == nil {
		return nil
	}
	return &mutationQuota{cn: cn, s: s, bound: bound, strict: strict}
}

// record takes n partitions' mutation; false when a strict quota refuses
// it.
func (q *mutationQuota) record(n int) bool {
	if q == nil {
		return true
	}
	c := q.cn.b.c
	now := c.now().UnixMilli()
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	if q.s.bucket == nil {
		q.s.bucket = &quota.TokenBucket{Samples: c.cfg.QuotaWindowNum, WindowMs: c.cfg.QuotaWindowSize.Milliseconds()}
	}
	if !q.strict {
		q.throttleMs = max(q.throttleMs, q.s.bucket.RecordPermissive(float64(n), q.bound, now))
		return true
	}
	d, ok := q.s.bucket.RecordStrict(float64(n), q.bound, now)
	q.throttleMs = max(q.throttleMs, d)
	return ok
}

// done throttles the response by what the quota found.
func (q *mutationQuota) done() {
	if q != nil && q.throttleMs > 0 {
		q.cn.throttle = max(q.cn.throttle, time.Duration(q.throttleMs)*time.Millisecond)
	}
}
