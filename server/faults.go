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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
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

	mu        sync.Mutex
	hits      int
	remaining int           // when f.Count > 0
	removed   bool          // no longer fires
	changed   chan struct{} // closed and replaced on every hit and on removal
}

// FaultState is a rule and how often it fired, as GET /v1/faults lists it.
type FaultState struct {
	ID        string `json:"id"`
	API       string `json:"api"` // "" for any
	Broker    int32  `json:"broker"`
	Topic     string `json:"topic"`
	Partition *int32 `json:"partition"`
	ClientID  string `json:"client_id"`
	// Error is Kafka's name of the error (or its code if Kafka has no name
	// for it that we know), "" for none.
	Error          string `json:"error"`
	ErrorCode      int16  `json:"error_code"`
	Count          int    `json:"count"`
	DelayMillis    int64  `json:"delay_ms"`
	DropConnection bool   `json:"drop_connection"`
	AfterWork      bool   `json:"after_work"`
	Hits           int    `json:"hits"`
	// Remaining is how many more times the rule can fire; -1 when it fires
	// until removed.
	Remaining int `json:"remaining"`
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
	r := &FaultRule{c: c, f: f, key: -1, remaining: f.Count, changed: make(chan struct{})}
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
	case f.Partition != nil && (r.key == 19 || r.key == 20):
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
	found.mu.Lock()
	found.removed = true
	close(found.changed)
	found.changed = make(chan struct{})
	found.mu.Unlock()
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

// Hits is how many requests the rule has fired on.
func (r *FaultRule) Hits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits
}

// State reports the rule and its counters.
func (r *FaultRule) State() FaultState {
	r.mu.Lock()
	hits, remaining := r.hits, r.remaining
	r.mu.Unlock()
	if r.f.Count == 0 {
		remaining = -1
	}
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
	for {
		r.mu.Lock()
		hits, removed, changed := r.hits, r.removed, r.changed
		usedUp := r.f.Count > 0 && r.remaining == 0
		r.mu.Unlock()
		switch {
		case hits >= n:
			return nil
		case removed:
			return fmt.Errorf("fault %s was removed after %d of %d hits", r.id, hits, n)
		case usedUp:
			return fmt.Errorf("fault %s used up its count of %d; %d hits can never happen", r.id, r.f.Count, n)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fault %s: %d of %d hits: %w", r.id, hits, n, context.Cause(ctx))
		case <-r.c.closing:
			return fmt.Errorf("fault %s: cluster closed after %d of %d hits", r.id, hits, n)
		}
	}
}

func int32Ptr(v int32) *int32 { return &v }

func (r *FaultRule) filtered() bool { return r.f.Topic != "" || r.f.Partition != nil }

// take uses one hit if the rule has one left. The lock makes the last hit
// go to exactly one request.
func (r *FaultRule) take() (hits int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed || (r.f.Count > 0 && r.remaining == 0) {
		return 0, false
	}
	if r.f.Count > 0 {
		r.remaining--
	}
	r.hits++
	close(r.changed)
	r.changed = make(chan struct{})
	return r.hits, true
}

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
	select {
	case <-t.C:
		return nil
	case <-cn.closed:
	case <-cn.b.c.closing:
	}
	return errCloseConn
}

// faultMode is how an API fails without doing its work.
type faultMode int

const (
	faultSplit         faultMode = iota // typed: serve the rest, add the errors
	faultTopLevel                       // answer with the top-level error code only
	faultOverwrite                      // read-only: serve, then write the errors over the answer
	faultAfterWorkOnly                  // cannot: an error needs AfterWork
)

// readOnlyAPIs change nothing, so serving them and overwriting the answer
// is as good as not serving them.
var readOnlyAPIs = map[int16]bool{
	2:  true, // ListOffsets
	3:  true, // Metadata (auto-creation aside)
	9:  true, // OffsetFetch
	10: true, // FindCoordinator
	15: true, // DescribeGroups
	16: true, // ListGroups
	23: true, // OffsetForLeaderEpoch
	29: true, // DescribeAcls
	32: true, // DescribeConfigs
	35: true, // DescribeLogDirs
	46: true, // ListPartitionReassignments
	48: true, // DescribeClientQuotas
	60: true, // DescribeCluster
	61: true, // DescribeProducers
	65: true, // DescribeTransactions
	66: true, // ListTransactions
	75: true, // DescribeTopicPartitions
}

func faultModeFor(key int16) faultMode {
	switch {
	case key == 0 || key == 1 || key == 19 || key == 20 || key == 21 || groupWriteAPIs[key]:
		return faultSplit
	case topLevelErrorOnly(reflect.TypeOf(kmsg.ResponseForKey(key)).Elem()):
		return faultTopLevel
	case readOnlyAPIs[key]:
		return faultOverwrite
	}
	return faultAfterWorkOnly
}

// failBeforeWork answers req with r's error on its matching part and
// serves the rest.
func (cn *conn) failBeforeWork(r *FaultRule, h handler, req kmsg.Request) (kmsg.Response, error) {
	c := cn.b.c
	switch req := req.(type) {
	case *kmsg.ProduceRequest:
		return cn.failProduce(r, h, req)
	case *kmsg.FetchRequest:
		return cn.failFetch(r, h, req)
	case *kmsg.CreateTopicsRequest:
		return cn.failCreateTopics(r, h, req)
	case *kmsg.DeleteTopicsRequest:
		return cn.failDeleteTopics(r, h, req)
	case *kmsg.DeleteRecordsRequest:
		return cn.failDeleteRecords(r, h, req)
	case *kmsg.OffsetCommitRequest:
		return cn.failOffsetCommit(r, h, req)
	case *kmsg.OffsetDeleteRequest:
		return cn.failOffsetDelete(r, h, req)
	case *kmsg.LeaveGroupRequest, *kmsg.DeleteGroupsRequest:
		return failGroups(r, req), nil
	}
	switch faultModeFor(req.Key()) {
	case faultTopLevel:
		resp := req.ResponseKind()
		c.setFaultErrors(resp, r)
		return resp, nil
	case faultOverwrite:
		resp, err := h(cn, req)
		if err == nil && resp != nil {
			c.setFaultErrors(resp, r)
		}
		return resp, err
	}
	// InjectFault refuses this; serve the request rather than guess.
	return h(cn, req)
}

func (r *FaultRule) message() *string {
	msg := "injected by fakekafka fault " + r.id
	return &msg
}

// failProduce appends the partitions outside r's scope and answers r's
// error for the others.
func (cn *conn) failProduce(r *FaultRule, h handler, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	failed := map[string][]int32{}
	var order []string
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: rt.Topic, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			if failed[rt.Topic] == nil {
				order = append(order, rt.Topic)
			}
			failed[rt.Topic] = append(failed[rt.Topic], rp.Partition)
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	if resp == nil { // acks=0: a failed partition closes the connection
		return nil, errCloseConn
	}
	pr := resp.(*kmsg.ProduceResponse)
	for _, name := range order {
		i := slices.IndexFunc(pr.Topics, func(t kmsg.ProduceResponseTopic) bool { return t.Topic == name })
		if i < 0 {
			t := kmsg.NewProduceResponseTopic()
			t.Topic = name
			pr.Topics = append(pr.Topics, t)
			i = len(pr.Topics) - 1
		}
		for _, p := range failed[name] {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.BaseOffset = p, r.code, -1
			if req.Version >= 8 {
				sp.ErrorMessage = r.message()
			}
			pr.Topics[i].Partitions = append(pr.Topics[i].Partitions, sp)
		}
	}
	return pr, nil
}

// failFetch reads the partitions outside r's scope and answers r's error
// for the others, at once: a partition with an error ends a long poll.
func (cn *conn) failFetch(r *FaultRule, h handler, req *kmsg.FetchRequest) (kmsg.Response, error) {
	c := cn.b.c
	rest := *req
	rest.Topics = nil
	type failedTopic struct {
		rt         kmsg.FetchRequestTopic
		partitions []int32
	}
	var failed []failedTopic
	for _, rt := range req.Topics {
		name := rt.Topic
		if req.Version >= 13 {
			name = ""
			if t := c.topicByID(rt.TopicID); t != nil {
				name = t.name
			}
		}
		kept := rt
		kept.Partitions = nil
		ft := failedTopic{rt: rt}
		for _, rp := range rt.Partitions {
			if r.inScope(faultScope{topic: name, partition: rp.Partition, hasTopic: name != "", hasPartition: true}) {
				ft.partitions = append(ft.partitions, rp.Partition)
			} else {
				kept.Partitions = append(kept.Partitions, rp)
			}
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	if len(failed) > 0 {
		rest.MaxWaitMillis = 0
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	fr := resp.(*kmsg.FetchResponse)
	if !r.filtered() {
		fr.ErrorCode = r.code
	}
	for _, ft := range failed {
		i := slices.IndexFunc(fr.Topics, func(t kmsg.FetchResponseTopic) bool {
			return t.Topic == ft.rt.Topic && t.TopicID == ft.rt.TopicID
		})
		if i < 0 {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = ft.rt.Topic, ft.rt.TopicID
			fr.Topics = append(fr.Topics, t)
			i = len(fr.Topics) - 1
		}
		for _, p := range ft.partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.ErrorCode = p, r.code
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.RecordBatches = []byte{} // empty, never null: librdkafka rejects null
			fr.Topics[i].Partitions = append(fr.Topics[i].Partitions, sp)
		}
	}
	return fr, nil
}

// failCreateTopics creates the topics outside r's scope.
func (cn *conn) failCreateTopics(r *FaultRule, h handler, req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []string
	for _, rt := range req.Topics {
		if r.inScope(faultScope{topic: rt.Topic, hasTopic: true}) {
			failed = append(failed, rt.Topic)
		} else {
			rest.Topics = append(rest.Topics, rt)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	cr := resp.(*kmsg.CreateTopicsResponse)
	for _, name := range failed {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = name, r.code, r.message()
		cr.Topics = append(cr.Topics, st)
	}
	return cr, nil
}

// failDeleteRecords deletes records from the partitions outside r's scope.
func (cn *conn) failDeleteRecords(r *FaultRule, h handler, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []kmsg.DeleteRecordsResponseTopic
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		ft := kmsg.NewDeleteRecordsResponseTopic()
		ft.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: rt.Topic, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark, sp.ErrorCode = rp.Partition, -1, r.code
			ft.Partitions = append(ft.Partitions, sp)
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.Partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	dr := resp.(*kmsg.DeleteRecordsResponse)
	for _, ft := range failed {
		i := slices.IndexFunc(dr.Topics, func(t kmsg.DeleteRecordsResponseTopic) bool { return t.Topic == ft.Topic })
		if i < 0 {
			dr.Topics = append(dr.Topics, ft)
			continue
		}
		dr.Topics[i].Partitions = append(dr.Topics[i].Partitions, ft.Partitions...)
	}
	return dr, nil
}

// failDeleteTopics deletes the topics outside r's scope.
func (cn *conn) failDeleteTopics(r *FaultRule, h handler, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	c := cn.b.c
	rest := *req
	rest.TopicNames, rest.Topics = nil, nil
	var failed []kmsg.DeleteTopicsResponseTopic
	fail := func(name string, id [16]byte) {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = &name, id, r.code, r.message()
		failed = append(failed, st)
	}
	for _, name := range req.TopicNames {
		if r.inScope(faultScope{topic: name, hasTopic: true}) {
			fail(name, [16]byte{})
		} else {
			rest.TopicNames = append(rest.TopicNames, name)
		}
	}
	for _, rt := range req.Topics {
		s := c.topicScope(rt.Topic, rt.TopicID)
		if r.inScope(s) {
			id := rt.TopicID
			if t := c.topic(s.topic); t != nil && id == ([16]byte{}) {
				id = t.id
			}
			fail(s.topic, id)
		} else {
			rest.Topics = append(rest.Topics, rt)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	dr := resp.(*kmsg.DeleteTopicsResponse)
	dr.Topics = append(dr.Topics, failed...)
	return dr, nil
}

// setFaultErrors writes r's error into every error code of resp in r's
// scope, with a message where the response has one, and drops the records
// of a failed Fetch partition.
func (c *Cluster) setFaultErrors(resp kmsg.Response, r *FaultRule) {
	c.walkScopes(reflect.ValueOf(resp), faultScope{}, func(v reflect.Value, s faultScope) {
		if !v.IsValid() || !r.inScope(s) {
			return
		}
		code := v.FieldByName("ErrorCode")
		if !code.IsValid() || code.Kind() != reflect.Int16 {
			return
		}
		code.SetInt(int64(r.code))
		if msg := v.FieldByName("ErrorMessage"); msg.IsValid() && msg.Type() == stringPtrType {
			msg.Set(reflect.ValueOf(r.message()))
		}
		if recs := v.FieldByName("RecordBatches"); recs.IsValid() {
			recs.SetBytes([]byte{}) // empty, never null: librdkafka rejects null
		}
	})
}

var (
	stringPtrType   = reflect.TypeFor[*string]()
	stringSliceType = reflect.TypeFor[[]string]()
	int32SliceType  = reflect.TypeFor[[]int32]()
	topicIDType     = reflect.TypeFor[[16]byte]()
)

// topicScope names a topic given by name or, failing that, by ID.
func (c *Cluster) topicScope(name *string, id [16]byte) faultScope {
	if name != nil && *name != "" {
		return faultScope{topic: *name, hasTopic: true}
	}
	if t := c.topicByID(id); t != nil {
		return faultScope{topic: t.name, hasTopic: true}
	}
	return faultScope{}
}

// walkScopes calls fn for every struct reachable from v with its scope,
// learned from fields named Topic (string or *string), TopicID and
// Partition. The names in a TopicNames []string and the indexes in a
// Partitions []int32 are scopes too, reported with a zero Value. kmsg
// names these fields the same way in every request and response.
func (c *Cluster) walkScopes(v reflect.Value, s faultScope, fn func(reflect.Value, faultScope)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.walkScopes(v.Elem(), s, fn)
		}
	case reflect.Slice:
		if k := v.Type().Elem().Kind(); k == reflect.Struct || k == reflect.Pointer {
			for i := range v.Len() {
				c.walkScopes(v.Index(i), s, fn)
			}
		}
	case reflect.Struct:
		if f := v.FieldByName("Topic"); f.IsValid() {
			var name *string
			switch {
			case f.Kind() == reflect.String:
				n := f.String()
				name = &n
			case f.Type() == stringPtrType:
				name = f.Interface().(*string)
			}
			var id [16]byte
			if f := v.FieldByName("TopicID"); f.IsValid() && f.Type() == topicIDType {
				id = f.Interface().([16]byte)
			}
			if ts := c.topicScope(name, id); ts.hasTopic {
				s = ts
			}
		}
		if f := v.FieldByName("Partition"); f.IsValid() && f.Kind() == reflect.Int32 {
			s.partition, s.hasPartition = int32(f.Int()), true
		}
		fn(v, s)
		t := v.Type()
		for i := range v.NumField() {
			f := v.Field(i)
			switch name := t.Field(i).Name; {
			case name == "TopicNames" && f.Type() == stringSliceType:
				for _, n := range f.Interface().([]string) {
					fn(reflect.Value{}, faultScope{topic: n, hasTopic: true})
				}
			case name == "Partitions" && f.Type() == int32SliceType:
				for _, p := range f.Interface().([]int32) {
					fn(reflect.Value{}, faultScope{topic: s.topic, hasTopic: s.hasTopic, partition: p, hasPartition: true})
				}
			case f.Kind() == reflect.Struct || f.Kind() == reflect.Slice || f.Kind() == reflect.Pointer:
				c.walkScopes(f, s, fn)
			}
		}
	}
}

// topLevelErrorOnly says whether a response type's only error code is its
// top-level ErrorCode, so an empty response with it set is a whole answer.
func topLevelErrorOnly(t reflect.Type) bool {
	f, ok := t.FieldByName("ErrorCode")
	if !ok || f.Type.Kind() != reflect.Int16 {
		return false
	}
	for i := range t.NumField() {
		if ft := t.Field(i).Type; ft.Kind() != reflect.Int16 && typeHasField(ft, "ErrorCode") {
			return false
		}
	}
	return true
}

// typeHasField says whether t or any type nested in it has a field with
// one of names.
func typeHasField(t reflect.Type, names ...string) bool {
	seen := map[reflect.Type]bool{}
	var has func(reflect.Type) bool
	has = func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return false
		}
		seen[t] = true
		for i := range t.NumField() {
			if slices.Contains(names, t.Field(i).Name) || has(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return has(t)
}

// faultAPIKey resolves an API name (Kafka's, in any case, with or without
// underscores) or key number to a key the broker serves.
func faultAPIKey(name string) (int16, error) {
	key, ok := apiKeysByName()[normalizeAPIName(name)]
	if n, err := strconv.ParseInt(name, 10, 16); err == nil {
		key, ok = int16(n), kmsg.RequestForKey(int16(n)) != nil
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown API %q: use Kafka's name, such as Produce or Fetch, or the API key", name)
	case key == apiVersionsKey:
		return 0, errors.New("ApiVersions is answered before fault rules apply")
	}
	if _, served := protocol.Lookup(key); !served {
		return 0, fmt.Errorf("API %s is not served by fakekafka, so a rule for it would never fire", kmsg.NameForKey(key))
	}
	return key, nil
}

func normalizeAPIName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

var apiKeysByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{}
	for key := range int16(200) {
		if kmsg.RequestForKey(key) != nil {
			m[normalizeAPIName(kmsg.NameForKey(key))] = key
		}
	}
	return m
})

// faultErrorCode resolves a Kafka error name or code.
func faultErrorCode(s string) (int16, error) {
	code, ok := errorCodesByName()[strings.ToUpper(s)]
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		code, ok = int16(n), true
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown Kafka error %q: use its name, such as NOT_ENOUGH_REPLICAS, or its code", s)
	case code == 0:
		return 0, errors.New("error NONE (0) is no error; leave the error empty for a rule that only delays or drops")
	}
	return code, nil
}

// errorName is Kafka's current name for code, or the code itself.
func errorName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return "NOT_LEADER_OR_FOLLOWER" // Kafka's name since 2.7; kerr keeps the old one
	}
	if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

var errorCodesByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{"NONE": 0, "NOT_LEADER_OR_FOLLOWER": kerr.NotLeaderForPartition.Code}
	for code := int16(-1); code <= 200; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
			m[e.Message] = code
		}
	}
	return m
})

// registerFaultRoutes adds the fault endpoints to the control API:
//
//	POST   /v1/faults       {"api":"Produce","error":"NOT_ENOUGH_REPLICAS","topic":"t","partition":0,
//	                         "broker":1,"client_id":"c","count":3,"delay_ms":0,"drop_connection":false,
//	                         "after_work":false}   InjectFault; 201 with the rule's FaultState
//	GET    /v1/faults       {"faults":[FaultState...]} in insertion order
//	GET    /v1/faults/{id}  one FaultState
//	DELETE /v1/faults/{id}  RemoveFault; 200 with the rule's final FaultState
//
// "error" and "api" may be names or numbers, as strings or JSON numbers.
// A body InjectFault refuses is 400; an unknown id is 404.
func (c *Cluster) registerFaultRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/faults", c.controlInjectFault)
	mux.HandleFunc("GET /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Faults []FaultState `json:"faults"`
		}{c.Faults()})
	})
	mux.HandleFunc("GET /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		rule := c.faultRule(r.PathValue("id"))
		if rule == nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", r.PathValue("id")))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
	mux.HandleFunc("DELETE /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rule := c.faultRule(id)
		if rule == nil || !c.RemoveFault(id) {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", id))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
}

func (c *Cluster) faultRule(id string) *FaultRule {
	for _, r := range c.faultRules() {
		if r.id == id {
			return r
		}
	}
	return nil
}

// nameOrNumber is a JSON string or integer, kept as text.
type nameOrNumber string

func (n *nameOrNumber) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = nameOrNumber(s)
		return nil
	}
	var i int64
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("want a name or an integer, got %s", b)
	}
	*n = nameOrNumber(strconv.FormatInt(i, 10))
	return nil
}

func (c *Cluster) controlInjectFault(w http.ResponseWriter, r *http.Request) {
	var body struct {
		API            nameOrNumber `json:"api"`
		Error          nameOrNumber `json:"error"`
		Topic          string       `json:"topic"`
		Partition      *int32       `json:"partition"`
		Broker         int32        `json:"broker"`
		ClientID       string       `json:"client_id"`
		Count          int          `json:"count"`
		DelayMillis    int64        `json:"delay_ms"`
		DropConnection bool         `json:"drop_connection"`
		AfterWork      bool         `json:"after_work"`
	}
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.DelayMillis < 0 || body.DelayMillis > int64(time.Hour/time.Millisecond) {
		httpFail(w, httpErrorf(http.StatusBadRequest, "delay_ms %d must be between 0 and 3600000", body.DelayMillis))
		return
	}
	rule, err := c.InjectFault(Fault{
		API: string(body.API), Broker: body.Broker, Topic: body.Topic, Partition: body.Partition, ClientID: body.ClientID,
		Error: string(body.Error), Count: body.Count, Delay: time.Duration(body.DelayMillis) * time.Millisecond,
		DropConnection: body.DropConnection, AfterWork: body.AfterWork,
	})
	if err != nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, "%s", err.Error()))
		return
	}
	httpJSON(w, http.StatusCreated, rule.State())
}
