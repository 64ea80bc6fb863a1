package server

// Fault injection: rules that make matching requests fail, stall or lose
// their connection, so a test can reach the failure paths a real cluster
// shows only by bad luck.
//
// A rule matches requests by API, broker, client ID, topic and partition.
// At most one rule fires per request: the first matching rule, in insertion
// order, that has hits left. A rule that fires
//
//   - holds the request for Delay, on its own connection only;
//   - then closes the connection without an answer (DropConnection), or
//     answers with the Kafka error code Error, or, with neither, lets the
//     request through (a delay, or just a counter a test can wait on).
//
// Error lands where Kafka would put it: with a Topic or Partition, on the
// matching topics and partitions only, the rest of the request served
// normally; without, on every topic and partition and on the response's
// top-level error code.
//
// Without AfterWork the failed part is never done: Produce does not append
// it, Fetch answers at once without reading it, DeleteRecords leaves those
// partitions alone, CreateTopics and DeleteTopics those topics,
// OffsetCommit and OffsetDelete those partitions' offsets, LeaveGroup and
// DeleteGroups do nothing, and an API whose response has only a top-level
// error code (JoinGroup, SyncGroup, Heartbeat, ...) is not handled at all.
// The read-only APIs with per-topic errors (Metadata, ListOffsets,
// OffsetForLeaderEpoch, ...) are handled and the error is written over the
// answer, which no client can tell apart. Any other API (ElectLeaders,
// AlterConfigs, ...) can fail only with AfterWork: InjectFault says so
// rather than silently doing the work.
//
// With AfterWork the whole request is done first (a Produce is appended and,
// for acks=-1, replicated), then Delay passes, then the answer carries the
// error or the connection drops. That is how NOT_ENOUGH_REPLICAS_AFTER_APPEND
// and lost acknowledgements happen in Kafka, and why a non-idempotent retry
// duplicates records. An error on an acks=0 Produce closes the connection,
// as Kafka does when an acks=0 produce fails.
//
// Rules live in an immutable slice per broker, replaced on every change, so
// a broker without rules pays one atomic load per request.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fault describes requests to fail and how. Zero fields match anything.
type Fault struct {
	// API is Kafka's name of the request type ("Produce", "Fetch",
	// "InitProducerID"; case and underscores do not matter) or its key as a
	// number. Empty matches every API except ApiVersions.
	API string
	// Broker is the broker id the request must reach; 0 for any broker.
	Broker int32
	// Topic restricts the rule to requests naming this topic and the error
	// to its entries in the response.
	Topic string
	// Partition restricts the rule further to this partition index (of
	// Topic, or of any topic if Topic is empty).
	Partition *int32
	// ClientID is the client.id the request must carry.
	ClientID string

	// Error is the Kafka error to answer with: its name
	// ("NOT_ENOUGH_REPLICAS") or code ("19"). Empty for none.
	Error string
	// Count is how many requests the rule fires on; 0 means until removed.
	Count int
	// Delay holds each matching request this long before it is handled.
	Delay time.Duration
	// DropConnection closes the connection without an answer.
	DropConnection bool
	// AfterWork handles the request fully first and only then fails the
	// answer (Error or DropConnection), after Delay.
	AfterWork bool
}

// FaultRule is an injected Fault. Its methods are safe for concurrent use.
type FaultRule struct {
	c    *Cluster
	id   string
	seq  int64
	f    Fault
	key  int16 // -1: any API
	code int16 // 0: no error

	faultCounter
}

var (
	// faultsMu serialises rule changes; requests never take it.
	faultsMu sync.Mutex
	// faultSeq numbers rules. IDs are unique within the process, so a stale
	// ID never removes another test's rule.
	faultSeq atomic.Int64
)

// InjectFault adds a rule after the existing ones. It fails for an unknown
// API or error name, a broker the cluster does not have, a negative
// partition, count or delay, or a combination that cannot work.
func (c *Cluster) InjectFault(f Fault) (*FaultRule, error) {
	r := &FaultRule{c: c, f: f, key: -1, faultCounter: newFaultCounter(f.Count)}
	if f.Partition != nil {
		r.f.Partition = int32Ptr(*f.Partition) // the caller's pointer stays the caller's
	}
	if f.API != "" {
		key, err := faultAPIKey(f.API)
		if err != nil {
			return nil, err
		}
		r.key = key
		r.f.API = kmsg.NameForKey(key)
	}
	if f.Error != "" {
		code, err := faultErrorCode(f.Error)
		if err != nil {
			return nil, err
		}
		r.code = code
		r.f.Error = errorName(code)
	}
	switch {
	case f.Broker != 0 && c.broker(f.Broker) == nil:
		return nil, fmt.Errorf("unknown broker %d (brokers are 1-%d; 0 for any)", f.Broker, len(c.brokers))
	case f.Partition != nil && *f.Partition < 0:
		return nil, fmt.Errorf("partition %d is negative; leave it unset for any partition", *f.Partition)
	case f.Count < 0:
		return nil, fmt.Errorf("count %d is negative; 0 fires until the rule is removed", f.Count)
	case f.Delay < 0:
		return nil, fmt.Errorf("delay %v is negative", f.Delay)
	case r.code != 0 && f.DropConnection:
		return nil, errors.New("error and drop connection exclude each other: a dropped connection gets no answer")
	case r.code != 0 && r.key < 0:
		return nil, errors.New("an error needs an API: error codes mean different things to different requests")
	case f.Partition != nil && (r.key == 19 || r.key == 20 || r.key == 37):
		return nil, fmt.Errorf("%s fails per topic, not per partition; leave the partition unset", r.f.API)
	case r.filtered() && r.key >= 0 && !typeHasField(reflect.TypeOf(kmsg.RequestForKey(r.key)), "Topic", "TopicID", "TopicNames"):
		return nil, fmt.Errorf("%s requests name no topics or partitions, so a topic or partition rule would never match", r.f.API)
	case r.code != 0 && !f.AfterWork && faultModeFor(r.key) == faultAfterWorkOnly:
		return nil, fmt.Errorf("fakekafka cannot fail %s without doing its work; set AfterWork (after_work) to fail it after the work is done", r.f.API)
	}

	faultsMu.Lock()
	defer faultsMu.Unlock()
	r.seq = faultSeq.Add(1)
	r.id = strconv.FormatInt(r.seq, 10)
	for _, b := range c.brokers {
		if f.Broker == 0 || f.Broker == b.id {
			var rules []*FaultRule
			if old := b.faults.Load(); old != nil {
				rules = slices.Clone(*old)
			}
			rules = append(rules, r)
			b.faults.Store(&rules)
		}
	}
	c.log.Info("fault injected", "fault", r.id, "api", r.f.API, "broker", f.Broker, "topic", f.Topic, "error", r.f.Error, "count", f.Count)
	c.emit(EventFaultAdded, func(e *Event) { e.Fault, e.Topic, e.Detail = r.id, f.Topic, r.describe() })
	return r, nil
}

// RemoveFault removes a rule; it stops firing at once. It reports whether
// the rule existed.
func (c *Cluster) RemoveFault(id string) bool {
	faultsMu.Lock()
	defer faultsMu.Unlock()
	var found *FaultRule
	for _, b := range c.brokers {
		old := b.faults.Load()
		if old == nil {
			continue
		}
		i := slices.IndexFunc(*old, func(r *FaultRule) bool { return r.id == id })
		if i < 0 {
			continue
		}
		found = (*old)[i]
		if len(*old) == 1 {
			b.faults.Store(nil) // back to the single-load path
			continue
		}
		rules := slices.Delete(slices.Clone(*old), i, i+1)
		b.faults.Store(&rules)
	}
	if found == nil {
		return false
	}
	c.emit(EventFaultRemoved, func(e *Event) { e.Fault, e.Topic, e.Detail = found.id, found.f.Topic, found.describe() })
	found.markRemoved()
	return true
}

// Faults lists the rules in insertion order, used-up ones included.
func (c *Cluster) Faults() []FaultState {
	out := []FaultState{}
	for _, r := range c.faultRules() {
		out = append(out, r.State())
	}
	return out
}

// FaultRule returns the rule with id, or nil when no rule has it (any
// more: a removed rule is gone).
func (c *Cluster) FaultRule(id string) *FaultRule {
	for _, r := range c.faultRules() {
		if r.id == id {
			return r
		}
	}
	return nil
}

func (c *Cluster) faultRules() []*FaultRule {
	var all []*FaultRule
	for _, b := range c.brokers {
		if rules := b.faults.Load(); rules != nil {
			all = append(all, *rules...)
		}
	}
	slices.SortFunc(all, func(a, b *FaultRule) int { return cmp.Compare(a.seq, b.seq) })
	return slices.Compact(all) // a rule for every broker is in each list
}

// ID is the rule's id, as DELETE /v1/faults/{id} takes it.
func (r *FaultRule) ID() string { return r.id }

// State reports the rule and its counters.
func (r *FaultRule) State() FaultState {
	hits, remaining := r.counts()
	var partition *int32
	if r.f.Partition != nil {
		partition = int32Ptr(*r.f.Partition)
	}
	return FaultState{
		ID: r.id, API: r.f.API, Broker: r.f.Broker, Topic: r.f.Topic, Partition: partition, ClientID: r.f.ClientID,
		Error: r.f.Error, ErrorCode: r.code, Count: r.f.Count, DelayMillis: r.f.Delay.Milliseconds(),
		DropConnection: r.f.DropConnection, AfterWork: r.f.AfterWork, Hits: hits, Remaining: remaining,
	}
}

// WaitHits waits until the rule has fired n times. It fails when ctx ends,
// the cluster closes, or the rule can no longer get there (removed, or its
// count used up).
func (r *FaultRule) WaitHits(ctx context.Context, n int) error {
	return r.waitHits(ctx, r.c.closing, "fault "+r.id, n)
}

func int32Ptr(v int32) *int32 { return &v }

func (r *FaultRule) filtered() bool { return r.f.Topic != "" || r.f.Partition != nil }

// faultScope is where a struct sits in a request or response: the topic
// and partition of the entries around it.
type faultScope struct {
	topic                  string
	partition              int32
	hasTopic, hasPartition bool
}

// inScope says whether the rule's topic and partition cover s.
func (r *FaultRule) inScope(s faultScope) bool {
	if r.f.Topic != "" && (!s.hasTopic || s.topic != r.f.Topic) {
		return false
	}
	return r.f.Partition == nil || (s.hasPartition && s.partition == *r.f.Partition)
}

// fire returns the first rule that matches req and takes one of its hits.
func (cn *conn) fire(rules []*FaultRule, req kmsg.Request) *FaultRule {
	c := cn.b.c
	for _, r := range rules {
		if r.key >= 0 && r.key != req.Key() || r.f.ClientID != "" && r.f.ClientID != cn.hdr.ClientID {
			continue
		}
		if r.filtered() && !c.mentions(req, r) {
			continue
		}
		hits, ok := r.take()
		if !ok {
			continue
		}
		c.log.Info("fault fired", "fault", r.id, "api", kmsg.NameForKey(req.Key()), "broker", cn.b.id,
			"client", cn.hdr.ClientID, "error", r.f.Error, "delay", r.f.Delay, "drop_connection", r.f.DropConnection,
			"after_work", r.f.AfterWork, "hits", hits)
		c.emitFaultHit(r, cn.b.id, req.Key(), hits)
		return r
	}
	return nil
}

// mentions says whether req names a topic and partition in r's scope.
func (c *Cluster) mentions(req kmsg.Request, r *FaultRule) bool {
	if m, ok := req.(*kmsg.MetadataRequest); ok && (m.Topics == nil || m.Version == 0 && len(m.Topics) == 0) {
		return true // all topics
	}
	found := false
	c.walkScopes(reflect.ValueOf(req), faultScope{}, func(_ reflect.Value, s faultScope) {
		found = found || r.inScope(s)
	})
	return found
}

// serveWithFaults handles req on a broker that has fault rules.
func (cn *conn) serveWithFaults(rules []*FaultRule, h handler, req kmsg.Request) (kmsg.Response, error) {
	r := cn.fire(rules, req)
	if r == nil {
		return h(cn, req)
	}
	if !r.f.AfterWork {
		if err := cn.faultDelay(r.f.Delay); err != nil {
			return nil, err
		}
		switch {
		case r.f.DropConnection:
			return nil, errCloseConn
		case r.code == 0:
			return h(cn, req)
		}
		return cn.failBeforeWork(r, h, req)
	}
	resp, err := h(cn, req)
	if err != nil {
		return nil, err
	}
	if err := cn.faultDelay(r.f.Delay); err != nil {
		return nil, err
	}
	if r.f.DropConnection || r.code != 0 && resp == nil { // resp is nil for acks=0
		return nil, errCloseConn
	}
	if r.code != 0 {
		cn.b.c.setFaultErrors(resp, r)
	}
	return resp, nil
}

// faultDelay holds the connection's goroutine for d, or until the
// connection or the cluster closes.
func (cn *conn) faultDelay(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := cn.b.c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	cn.parkBegin() // injected latency is not handler time
	defer cn.parkEnd()
	select {
	case <-t.C:
		return nil
	case <-cn.closed:
	case <-cn.b.c.closing:
	}
	return errCloseConn
}
