package server

// Faults on the schema registry's REST API: rules that make matching
// requests answer an error (an HTTP status with Confluent's error_code
// body) or wait first, so a test can reach a serialiser's retry and error
// paths (a registry that is down, slow, or refusing writes) on demand.
//
// A rule matches by method and path pattern. At most one rule fires per
// request: the first matching rule, in insertion order, with hits left. It
// holds the request for Delay, then answers the error, or with none serves
// the request normally. The middleware sits outside the registry's own
// handler (authentication included), as a proxy in front of a registry
// would fail.
//
// Delay runs on the cluster's clock, as the Kafka fault rules' delay does:
// with the default (real) clock it is wall time; with a manual clock the
// answer waits until the test advances the clock past it, which makes "the
// request is in flight now" a state a test can hold and look at rather than
// a race against a timer.
//
// Rules share the Kafka fault rules' id sequence and events (fault_added,
// fault_hit, fault_expired, fault_removed), so api.FaultHit(id) waits for
// either kind.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/schemaregistry"
)

// SchemaRegistryFaultRule is an injected api.SchemaRegistryFault. Its
// methods are safe for concurrent use.
type SchemaRegistryFaultRule struct {
	c       *Cluster
	id      string
	f       api.SchemaRegistryFault // normalised: Method upper case, Status, ErrorCode and Message filled in
	pattern []string                // Path's segments; nil for any path

	faultCounter
}

// schemaRegistryFaults holds the rules in an immutable slice, replaced on
// every change, so a registry without rules pays one atomic load per
// request.
type schemaRegistryFaults struct {
	mu    sync.Mutex // serialises changes; requests never take it
	rules atomic.Pointer[[]*SchemaRegistryFaultRule]
}

// maxSchemaRegistryFaultDelay bounds Delay: past it a test has hung.
const maxSchemaRegistryFaultDelay = time.Hour

// schemaRegistryMethods are the methods a rule may name.
var schemaRegistryMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodDelete, http.MethodPatch, http.MethodOptions}

// InjectSchemaRegistryFault adds a rule after the existing ones:
//
//	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "POST",
//		Path: "/subjects/*/versions", ErrorCode: 50001, Count: 2})
//
// It fails when the registry is off (ErrSchemaRegistryOff), for an unknown method, a path pattern that is not one, a status
// outside 400-599, an error code with no status in it, or a negative count
// or delay.
func (c *Cluster) InjectSchemaRegistryFault(f api.SchemaRegistryFault) (*SchemaRegistryFaultRule, error) {
	if c.sr == nil {
		return nil, ErrSchemaRegistryOff
	}
	f.Method = strings.ToUpper(strings.TrimSpace(f.Method))
	if f.Method != "" && !slices.Contains(schemaRegistryMethods, f.Method) {
		return nil, fmt.Errorf("unknown method %q: use one of %s, or none for any", f.Method, strings.Join(schemaRegistryMethods, ", "))
	}
	pattern, err := parsePathPattern(f.Path)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Count < 0:
		return nil, fmt.Errorf("count %d is negative; 0 fires until the rule is removed", f.Count)
	case f.Delay < 0 || f.Delay > maxSchemaRegistryFaultDelay:
		return nil, fmt.Errorf("delay %v must be between 0 and %v", f.Delay, maxSchemaRegistryFaultDelay)
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return nil, fmt.Errorf("status %d is not an HTTP error status (400-599)", f.Status)
	case f.ErrorCode < 0:
		return nil, fmt.Errorf("error code %d is negative", f.ErrorCode)
	}
	if f.ErrorCode != 0 && f.Status == 0 {
		f.Status = statusOfErrorCode(f.ErrorCode)
		if f.Status == 0 {
			return nil, fmt.Errorf("error code %d does not start with an HTTP status (as 50001 is a 500); set the status too", f.ErrorCode)
		}
	}
	if f.Status != 0 && f.ErrorCode == 0 {
		f.ErrorCode = f.Status // Confluent's generic errors carry their status as the code
	}
	r := &SchemaRegistryFaultRule{c: c, f: f, pattern: pattern, faultCounter: newFaultCounter(f.Count)}

	faultsMu.Lock() // the Kafka rules' lock: one id sequence, in order
	defer faultsMu.Unlock()
	r.id = strconv.FormatInt(faultSeq.Add(1), 10)
	if r.f.Status != 0 && r.f.Message == "" {
		r.f.Message = defaultSchemaRegistryFaultMessage(r.f.ErrorCode, r.id)
	}
	s := &c.srFaults
	s.mu.Lock()
	var rules []*SchemaRegistryFaultRule
	if old := s.rules.Load(); old != nil {
		rules = slices.Clone(*old)
	}
	rules = append(rules, r)
	s.rules.Store(&rules)
	s.mu.Unlock()
	c.log.Info("schema registry fault injected", "fault", r.id, "rule", r.describe())
	c.emit(EventFaultAdded, func(e *Event) { e.Fault, e.Detail = r.id, r.describe() })
	return r, nil
}

// RemoveSchemaRegistryFault removes a rule; it stops firing at once (a
// request it is delaying still gets its answer). It reports whether the
// rule existed.
func (c *Cluster) RemoveSchemaRegistryFault(id string) bool {
	s := &c.srFaults
	s.mu.Lock()
	old := s.rules.Load()
	var found *SchemaRegistryFaultRule
	if old != nil {
		if i := slices.IndexFunc(*old, func(r *SchemaRegistryFaultRule) bool { return r.id == id }); i >= 0 {
			found = (*old)[i]
			if len(*old) == 1 {
				s.rules.Store(nil)
			} else {
				rules := slices.Delete(slices.Clone(*old), i, i+1)
				s.rules.Store(&rules)
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		return false
	}
	found.remove()
	return true
}

// ClearSchemaRegistryFaults removes every rule and returns their final
// states.
func (c *Cluster) ClearSchemaRegistryFaults() []api.SchemaRegistryFaultState {
	s := &c.srFaults
	s.mu.Lock()
	old := s.rules.Swap(nil)
	s.mu.Unlock()
	out := []api.SchemaRegistryFaultState{}
	if old != nil {
		for _, r := range *old {
			r.remove()
			out = append(out, r.State())
		}
	}
	return out
}

// SchemaRegistryFaults lists the rules in insertion order, used-up ones
// included.
func (c *Cluster) SchemaRegistryFaults() []api.SchemaRegistryFaultState {
	out := []api.SchemaRegistryFaultState{}
	if rules := c.srFaults.rules.Load(); rules != nil {
		for _, r := range *rules {
			out = append(out, r.State())
		}
	}
	return out
}

// SchemaRegistryFaultRule returns the rule with id, or nil when there is
// none (any more).
func (c *Cluster) SchemaRegistryFaultRule(id string) *SchemaRegistryFaultRule {
	if rules := c.srFaults.rules.Load(); rules != nil {
		for _, r := range *rules {
			if r.id == id {
				return r
			}
		}
	}
	return nil
}

// ID is the rule's id, as DELETE /v1/schema-registry/faults/{id} takes it.
func (r *SchemaRegistryFaultRule) ID() string { return r.id }

// State reports the rule and its counters.
func (r *SchemaRegistryFaultRule) State() api.SchemaRegistryFaultState {
	hits, remaining := r.counts()
	return api.SchemaRegistryFaultState{ID: r.id, Method: r.f.Method, Path: r.f.Path, Status: r.f.Status,
		ErrorCode: r.f.ErrorCode, Message: r.f.Message, Count: r.f.Count, DelayMillis: r.f.Delay.Milliseconds(),
		Hits: hits, Remaining: remaining}
}

// WaitHits waits until the rule has fired n times. It fails when ctx ends,
// the cluster closes, or the rule can no longer get there (removed, or its
// count used up).
func (r *SchemaRegistryFaultRule) WaitHits(ctx context.Context, n int) error {
	return r.waitHits(ctx, r.c.closing, "schema registry fault "+r.id, n)
}

func (r *SchemaRegistryFaultRule) remove() {
	if !r.markRemoved() {
		return
	}
	r.c.emit(EventFaultRemoved, func(e *Event) { e.Fault, e.Detail = r.id, r.describe() })
}

// describe says what the rule does, in a few words.
func (r *SchemaRegistryFaultRule) describe() string {
	method, path := r.f.Method, r.f.Path
	if method == "" {
		method = "any method"
	}
	if path == "" {
		path = "any path"
	}
	what := []string{}
	if r.f.Status != 0 {
		what = append(what, fmt.Sprintf("HTTP %d error_code %d", r.f.Status, r.f.ErrorCode))
	}
	if r.f.Delay > 0 {
		what = append(what, "delay "+r.f.Delay.String())
	}
	if r.f.Count > 0 {
		what = append(what, fmt.Sprintf("count %d", r.f.Count))
	}
	return "schema registry " + method + " " + path + ": " + strings.Join(what, ", ")
}

// schemaRegistryFaultHandler wraps the registry's REST API with the
// cluster's registry fault rules; the registry's listener serves through
// it.
func (c *Cluster) schemaRegistryFaultHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rules := c.srFaults.rules.Load()
		if rules == nil {
			next.ServeHTTP(w, req)
			return
		}
		arrived := c.now() // the delay runs from here, however late its timer is set
		r := c.fireSchemaRegistryFault(*rules, req)
		if r == nil {
			next.ServeHTTP(w, req)
			return
		}
		if r.f.Delay > 0 {
			t := c.cfg.Clock.NewTimerAt(arrived.Add(r.f.Delay))
			select {
			case <-t.C:
			case <-req.Context().Done():
				t.Stop()
				return // the client gave up: nobody reads an answer
			case <-c.closing:
				t.Stop()
				schemaregistry.WriteError(w, req, http.StatusServiceUnavailable, 50003, "the cluster is shutting down")
				return
			}
		}
		if r.f.Status == 0 {
			next.ServeHTTP(w, req)
			return
		}
		schemaregistry.WriteError(w, req, r.f.Status, r.f.ErrorCode, r.f.Message)
	})
}

// fireSchemaRegistryFault returns the first rule that matches req and
// takes one of its hits.
func (c *Cluster) fireSchemaRegistryFault(rules []*SchemaRegistryFaultRule, req *http.Request) *SchemaRegistryFaultRule {
	var segs []string // the request's path, split once and only if a rule looks at it
	for _, r := range rules {
		if r.f.Method != "" && r.f.Method != req.Method {
			continue
		}
		if r.pattern != nil {
			if segs == nil {
				segs = pathSegments(req.URL)
			}
			if !matchPathPattern(r.pattern, segs) {
				continue
			}
		}
		hits, ok := r.take()
		if !ok {
			continue
		}
		c.log.Info("schema registry fault fired", "fault", r.id, "method", req.Method, "path", req.URL.Path, "hits", hits)
		c.emit(EventFaultHit, func(e *Event) {
			e.Fault, e.Detail = r.id, fmt.Sprintf("%s %s: %s (hit %d)", req.Method, req.URL.Path, r.describe(), hits)
		})
		if r.f.Count > 0 && hits == r.f.Count {
			c.emit(EventFaultExpired, func(e *Event) { e.Fault, e.Detail = r.id, r.describe() })
		}
		return r
	}
	return nil
}

// statusOfErrorCode is the HTTP status a Confluent error code starts with
// (50001 → 500, 40401 → 404, 422 → 422), 0 when it starts with none.
func statusOfErrorCode(code int) int {
	for code >= 1000 {
		code /= 10
	}
	if code >= 400 && code <= 599 {
		return code
	}
	return 0
}

// defaultSchemaRegistryFaultMessage is the message of a rule that names
// none: what the registry says for its own 5xx codes, and the rule's id.
func defaultSchemaRegistryFaultMessage(code int, id string) string {
	what := map[int]string{
		50001: "Error in the backend data store",
		50002: "Operation timed out",
		50003: "Error while forwarding the request to the primary",
	}[code]
	if what == "" {
		what = "Injected error"
	}
	return fmt.Sprintf("%s (fakekafka fault %s)", what, id)
}

// parsePathPattern splits a path pattern into segments: "" is any path
// (nil), "*" one segment, a final "**" any number of them.
func parsePathPattern(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path pattern %q must start with /", p)
	}
	if strings.ContainsAny(p, "?#") {
		return nil, fmt.Errorf("path pattern %q has a query or fragment: patterns match the path only", p)
	}
	segs := splitPath(p)
	for i, s := range segs {
		if s == "**" && i != len(segs)-1 {
			return nil, fmt.Errorf("path pattern %q: ** may only end a pattern", p)
		}
		if strings.Contains(s, "*") && s != "*" && s != "**" {
			return nil, fmt.Errorf("path pattern %q: * stands for a whole segment (%q)", p, s)
		}
	}
	return segs, nil
}

// pathSegments is u's path split into unescaped segments, so a subject
// with an escaped "/" in its name stays one segment.
func pathSegments(u *url.URL) []string {
	segs := splitPath(u.EscapedPath())
	for i, s := range segs {
		if v, err := url.PathUnescape(s); err == nil {
			segs[i] = v
		}
	}
	return segs
}

// splitPath splits "/a/b/" into [a b]; "/" is no segments (not nil).
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return []string{}
	}
	return strings.Split(p, "/")
}

// matchPathPattern says whether segs fit pattern.
func matchPathPattern(pattern, segs []string) bool {
	for i, p := range pattern {
		if p == "**" {
			return true
		}
		if i >= len(segs) || p != "*" && p != segs[i] {
			return false
		}
	}
	return len(segs) == len(pattern)
}

// ErrSchemaRegistryOff: the cluster runs no schema registry.
var ErrSchemaRegistryOff = errors.New("the schema registry is off (Config.SchemaRegistry is nil; the binary's --schema-registry is empty)")
