package server

// Client quotas (package quota holds the rules): the configuration lives in
// the cluster as an immutable value swapped whole on AlterClientQuotas;
// usage is counted per quota key (Kafka's metric tags) in sensors, each
// with its own small lock, so Produce and Fetch take no shared lock.
//
// Enforcement is Kafka's for producer_byte_rate (the Produce request's size)
// and consumer_byte_rate (the Fetch response's size): a sensor whose rate
// over the sampled window passes the quota answers with throttle_time_ms,
// and the connection is muted for that long on the cluster's clock. For
// KIP-219 versions (Produce v6+, Fetch v8+) the response goes out at once
// and no further request is read until the throttle ends; older versions
// get the response only after the throttle. A throttled Fetch is answered
// empty and its bytes taken back, and every Fetch is capped to what the
// quota allows in one window, as in Kafka. request_percentage is enforced
// in quotas_request.go, controller_mutation_rate in quotas_mutation.go; ip
// quotas are kept and described but not enforced.

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quotaState is the cluster's part of quotas.
type quotaState struct {
	mu      sync.Mutex // serialises changes
	cfg     atomic.Pointer[quota.Config]
	sensors sync.Map // sensorKey -> *sensor
}

type sensorKey struct {
	kind string // quota.ProducerByteRate or quota.ConsumerByteRate
	quota.Key
}

// sensor is one key's usage: a sampled rate, or for
// controller_mutation_rate a token bucket (quotas_mutation.go).
type sensor struct {
	mu     sync.Mutex
	rate   *quota.Rate
	bucket *quota.TokenBucket
}

// AlterClientQuotas changes one entity's quotas as AlterClientQuotas does:
// each op sets or removes a key. Invalid changes return an error wrapping
// quota.ErrInvalid and change nothing.
func (c *Cluster) AlterClientQuotas(e quota.Entity, ops ...quota.Op) error {
	if err := quota.CheckIP(e, wellFormedHost); err != nil {
		return err
	}
	if err := quota.ValidateOps(e, ops); err != nil {
		return err
	}
	c.quotas.mu.Lock()
	defer c.quotas.mu.Unlock()
	c.quotas.cfg.Store(c.quotas.cfg.Load().Alter(e, ops))
	c.emit(EventQuotaChanged, func(ev *Event) { ev.Detail = e.String() })
	c.saveMeta()
	return nil
}

// ClientQuotas returns every configured entity with its values.
func (c *Cluster) ClientQuotas() []quota.Entry {
	es, _ := c.quotas.cfg.Load().Describe(nil, false)
	return es
}

// wellFormedHost stands in for the name lookup of Kafka's check of an ip
// entity (InetAddress.getByName): fakekafka sends no traffic off the
// machine, so any well-formed host name (RFC 1123 labels) passes, where
// Kafka refuses one its resolver does not know.
func wellFormedHost(host string) bool {
	if len(host) > 253 {
		return false
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(host, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// quotaUser is the user entity of a principal: its name without the type.
func quotaUser(principal string) string {
	if _, name, ok := strings.Cut(principal, ":"); ok {
		return name
	}
	return principal
}

// quotaSensor finds the connection's sensor and bound for kind; nil when
// no quota applies.
func (cn *conn) quotaSensor(kind string) (*sensor, float64) {
	c := cn.b.c
	cfg := c.quotas.cfg.Load()
	if cfg.Empty() {
		return nil, 0
	}
	k, bound, ok := cfg.Resolve(kind, quotaUser(cn.principal), cn.hdr.ClientID)
	if !ok {
		return nil, 0
	}
	key := sensorKey{kind, k}
	if s, ok := c.quotas.sensors.Load(key); ok {
		return s.(*sensor), bound
	}
	s, _ := c.quotas.sensors.LoadOrStore(key, &sensor{rate: &quota.Rate{Samples: c.cfg.QuotaWindowNum, WindowMs: c.cfg.QuotaWindowSize.Milliseconds()}})
	return s.(*sensor), bound
}

// recordQuota records v against s and returns the throttle time.
func (cn *conn) recordQuota(s *sensor, bound, v float64) time.Duration {
	now := cn.b.c.now().UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.rate.RecordAndThrottle(v, bound, now)) * time.Millisecond
}

// throttleProduce records a Produce request's size against the producer
// quota and sets the connection's throttle.
func (cn *conn) throttleProduce() {
	if s, bound := cn.quotaSensor(quota.ProducerByteRate); s != nil {
		cn.throttle = max(cn.throttle, cn.recordQuota(s, bound, float64(cn.reqSize)))
	}
}

// fetchQuotaCap is the most bytes a Fetch may return under the consumer
// quota, or -1 when there is none.
func (cn *conn) fetchQuotaCap() int32 {
	s, bound := cn.quotaSensor(quota.ConsumerByteRate)
	if s == nil {
		return -1
	}
	return int32(min(s.rate.MaxValueInWindow(bound), float64(1<<31-1)))
}

// throttleFetch records a consumer Fetch response's size against the
// consumer quota; when that throttles, the response is emptied (and its
// bytes taken back), as Kafka answers a throttled fetch.
func (cn *conn) throttleFetch(resp *kmsg.FetchResponse) (throttled bool) {
	s, bound := cn.quotaSensor(quota.ConsumerByteRate)
	if s == nil {
		return false
	}
	size := float64(len(resp.AppendTo(nil)))
	d := cn.recordQuota(s, bound, size)
	if d <= 0 {
		return false
	}
	now := cn.b.c.now().UnixMilli()
	s.mu.Lock()
	s.rate.Unrecord(size, now)
	s.mu.Unlock()
	resp.Topics = nil
	cn.throttle = max(cn.throttle, d)
	return true
}

// applyThrottle sets the response's throttle time and says how to mute:
// after is true when the client throttles itself after the response
// (KIP-219), so it goes out now and reading waits; false delays the
// response itself.
func (cn *conn) applyThrottle(resp kmsg.Response) (d time.Duration, after bool) {
	d, cn.throttle = cn.throttle, 0
	if d <= 0 {
		return 0, false
	}
	tr, ok := resp.(interface {
		kmsg.ThrottleResponse
		kmsg.SetThrottleResponse
	})
	if !ok {
		return 0, false
	}
	ms := int32(min(d.Milliseconds(), 1<<31-1))
	if cur, _ := tr.Throttle(); cur < ms {
		tr.SetThrottle(ms)
	}
	_, after = tr.Throttle()
	return d, after
}

// waitThrottle blocks the connection for d on the cluster's clock; false
// when the connection or the cluster closes meanwhile.
func (cn *conn) waitThrottle(d time.Duration) bool {
	c := cn.b.c
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	// After the timer is set, so a test that saw the event may advance
	// the clock past it.
	c.emit(EventClientThrottled, func(e *Event) {
		e.Broker, e.Detail = cn.b.id, fmt.Sprintf("%s client-id %q muted for %v", cn.principal, cn.hdr.ClientID, d)
	})
	select {
	case <-t.C:
		return true
	case <-cn.closed:
	case <-c.closing:
	}
	return false
}

// QuotaState returns every configured quota entity.
func (c *Cluster) QuotaState() QuotaState {
	st := QuotaState{Quotas: []QuotaEntry{}}
	for _, e := range c.ClientQuotas() {
		qe := QuotaEntry{Entity: map[string]*string{}, Values: e.Values}
		for _, p := range e.Entity.Components() {
			qe.Entity[p.Type] = p.Name
		}
		st.Quotas = append(st.Quotas, qe)
	}
	return st
}
