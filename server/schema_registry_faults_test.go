package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/clock"
)

func TestPathPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/subjects/*/versions", "/subjects/orders-value/versions", true},
		{"/subjects/*/versions", "/subjects/orders-value/versions/", true},
		{"/subjects/*/versions", "/subjects/orders-value/versions/1", false},
		{"/subjects/*/versions", "/subjects/orders-value", false},
		{"/subjects/*/versions", "/subjects/a%2Fb/versions", true}, // an escaped / stays in its segment
		{"/subjects/*", "/subjects/orders-value", true},
		{"/subjects/*", "/subjects", false},
		{"/subjects/**", "/subjects", true},
		{"/subjects/**", "/subjects/s/versions/latest", true},
		{"/subjects/**", "/schemas/ids/1", false},
		{"/schemas/ids/*", "/schemas/ids/7", true},
		{"/config", "/config", true},
		{"/config", "/config/s", false},
		{"/", "/", true},
		{"/", "/subjects", false},
		{"/**", "/", true},
		{"/**", "/anything/at/all", true},
	} {
		p, err := parsePathPattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		u, err := url.Parse("http://x" + c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := matchPathPattern(p, pathSegments(u)); got != c.want {
			t.Errorf("%s on %s: %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	for _, bad := range []string{"subjects", "/subjects/**/versions", "/subjects/order*", "/subjects?x=1"} {
		if _, err := parsePathPattern(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestStatusOfErrorCode(t *testing.T) {
	for code, want := range map[int]int{50001: 500, 50002: 500, 40401: 404, 42201: 422, 40901: 409, 409: 409, 503: 503, 42: 0, 200: 0, 20001: 0} {
		if got := statusOfErrorCode(code); got != want {
			t.Errorf("statusOfErrorCode(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestSchemaRegistryFaultRefusals(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, SchemaRegistry: &SchemaRegistryConfig{}})
	for _, f := range []api.SchemaRegistryFault{
		{Method: "FETCH"},
		{Path: "subjects"},
		{Status: 200},
		{Status: 600},
		{ErrorCode: 12345},
		{ErrorCode: -1},
		{Count: -1},
		{Delay: -time.Second},
		{Delay: 2 * time.Hour},
	} {
		if _, err := c.InjectSchemaRegistryFault(f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	if got := c.SchemaRegistryFaults(); len(got) != 0 {
		t.Errorf("refused rules are listed: %+v", got)
	}
	off := NewTestCluster(t, Config{Brokers: 1})
	if _, err := off.InjectSchemaRegistryFault(api.SchemaRegistryFault{ErrorCode: 50001}); !errors.Is(err, ErrSchemaRegistryOff) {
		t.Errorf("a cluster without a registry: %v, want ErrSchemaRegistryOff", err)
	}
}

// registryAnswer is an HTTP answer: status, Content-Type, body.
type registryAnswer struct {
	status int
	ctype  string
	body   string
}

func registryCall(t *testing.T, method, url, body string) registryAnswer {
	t.Helper()
	a, err := tryRegistryCall(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryRegistryCall is registryCall for goroutines other than the test's.
func tryRegistryCall(method, url, body string) (registryAnswer, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return registryAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return registryAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return registryAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), strings.TrimSpace(string(b))}, err
}

// The middleware in front of a handler that counts what reaches it: a
// rule for POST /subjects/*/versions with count 2 answers 50001 twice,
// leaves other methods and paths alone, then lets requests through; its
// state, events and removal are as documented.
func TestSchemaRegistryFaultMiddleware(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, SchemaRegistry: &SchemaRegistryConfig{}})
	var served atomic.Int32
	srv := httptest.NewServer(c.schemaRegistryFaultHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, `{"id":1}`)
	})))
	t.Cleanup(srv.Close)
	seq := c.LastEventSeq()
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "post", Path: "/subjects/*/versions", ErrorCode: 50001, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := api.SchemaRegistryFaultState{ID: rule.ID(), Method: "POST", Path: "/subjects/*/versions", Status: 500, ErrorCode: 50001,
		Message: "Error in the backend data store (fakekafka fault " + rule.ID() + ")", Count: 2, Remaining: 2}
	if got := rule.State(); got != want {
		t.Fatalf("state %+v\nwant %+v", got, want)
	}
	if got := registryCall(t, "GET", srv.URL+"/subjects/s/versions", ""); got.status != 200 {
		t.Errorf("GET, another method: %+v", got)
	}
	if got := registryCall(t, "POST", srv.URL+"/subjects/s", "{}"); got.status != 200 {
		t.Errorf("POST /subjects/s, another path: %+v", got)
	}
	for i := range 2 {
		got := registryCall(t, "POST", srv.URL+"/subjects/s/versions", "{}")
		var body struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal([]byte(got.body), &body); err != nil || got.status != 500 ||
			got.ctype != "application/vnd.schemaregistry.v1+json" || body.ErrorCode != 50001 || body.Message != want.Message {
			t.Errorf("faulted POST %d: %+v (%v)", i+1, got, err)
		}
	}
	if got := registryCall(t, "POST", srv.URL+"/subjects/s/versions", "{}"); got.status != 200 || got.body != `{"id":1}` {
		t.Errorf("POST after the count: %+v", got)
	}
	if n := served.Load(); n != 3 {
		t.Errorf("%d requests reached the registry, want 3 (the faulted ones never do)", n)
	}
	want.Hits, want.Remaining = 2, 0
	if got := c.SchemaRegistryFaults(); len(got) != 1 || got[0] != want {
		t.Errorf("faults %+v\nwant [%+v]", got, want)
	}
	ctx := testContext(t)
	if err := rule.WaitHits(ctx, 3); err == nil || !strings.Contains(err.Error(), "used up") {
		t.Errorf("WaitHits(3) on a used-up rule: %v", err)
	}
	if !c.RemoveSchemaRegistryFault(rule.ID()) || c.RemoveSchemaRegistryFault(rule.ID()) {
		t.Error("removing the rule twice: want true then false")
	}
	if c.SchemaRegistryFaultRule(rule.ID()) != nil || len(c.SchemaRegistryFaults()) != 0 {
		t.Error("the removed rule is still there")
	}
	var got []string
	for _, e := range c.Events(seq) {
		if e.Fault == rule.ID() {
			got = append(got, string(e.Type)+": "+e.Detail)
		}
	}
	d := "schema registry POST /subjects/*/versions: HTTP 500 error_code 50001, count 2"
	wantEvents := []string{
		"fault_added: " + d,
		"fault_hit: POST /subjects/s/versions: " + d + " (hit 1)",
		"fault_hit: POST /subjects/s/versions: " + d + " (hit 2)",
		"fault_expired: " + d,
		"fault_removed: " + d,
	}
	if strings.Join(got, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// A delay on the cluster's manual clock holds the answer until the clock
// passes it, then serves the request normally; requests the rule does not
// match are not held meanwhile. Clear removes what is left.
func TestSchemaRegistryFaultDelayOnTheClusterClock(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Brokers: 1, Clock: clk, SchemaRegistry: &SchemaRegistryConfig{}})
	srv := httptest.NewServer(c.schemaRegistryFaultHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.Path)
	})))
	t.Cleanup(srv.Close)
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Path: "/schemas/ids/*", Delay: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan registryAnswer, 1)
	go func() {
		a, err := tryRegistryCall("GET", srv.URL+"/schemas/ids/7", "")
		if err != nil {
			a.body = err.Error()
		}
		answered <- a
	}()
	ctx := testContext(t)
	if err := rule.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5*time.Second - time.Millisecond)
	if got := registryCall(t, "GET", srv.URL+"/subjects", ""); got.status != 200 || got.body != "/subjects" {
		t.Errorf("an unmatched request: %+v", got)
	}
	select {
	case got := <-answered:
		t.Fatalf("answered 1 ms before the delay ended: %+v", got)
	default:
	}
	clk.Advance(time.Millisecond)
	select {
	case got := <-answered:
		if got.status != 200 || got.body != "/schemas/ids/7" {
			t.Errorf("delayed answer %+v, want the registry's own", got)
		}
	case <-ctx.Done():
		t.Fatal("no answer once the delay passed")
	}
	st := c.ClearSchemaRegistryFaults()
	if len(st) != 1 || st[0].ID != rule.ID() || st[0].Hits != 1 || st[0].Remaining != -1 || st[0].DelayMillis != 5000 {
		t.Errorf("cleared %+v", st)
	}
	if len(c.SchemaRegistryFaults()) != 0 {
		t.Error("rules left after clear")
	}

	// A delay and an error: the error comes once the delay passed.
	slowFail, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Status: 503, Delay: 2 * time.Second, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		a, err := tryRegistryCall("GET", srv.URL+"/config", "")
		if err != nil {
			a.body = err.Error()
		}
		answered <- a
	}()
	if err := slowFail.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	select {
	case got := <-answered:
		if got.status != 503 || got.body != `{"error_code":503,"message":"Injected error (fakekafka fault `+slowFail.ID()+`)"}` {
			t.Errorf("delayed error %+v", got)
		}
	case <-ctx.Done():
		t.Fatal("no answer once the delay passed")
	}
}

// An injected error answers as the registry answers its own errors: the
// media type the request accepts, and Jackson's escaping (no \u003c for
// "<"), byte for byte.
func TestSchemaRegistryFaultAnswersAsTheRegistry(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, SchemaRegistry: &SchemaRegistryConfig{}})
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Path: "/subjects/*/versions", ErrorCode: 40401, Message: "Subject 'a<b>' not found.", Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	ask := func() (string, string) {
		req, err := http.NewRequest("GET", c.SchemaRegistryURL()+"/subjects/a%3Cb%3E/versions", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Get("Content-Type"), string(b)
	}
	injectedType, injected := ask() // the rule's one hit
	ownType, own := ask()           // the registry's own 404 for a subject it does not have
	if st := rule.State(); st.Hits != 1 {
		t.Fatalf("the rule fired %d times, want 1", st.Hits)
	}
	if injectedType != ownType || injected != own {
		t.Errorf("injected %q %s\nregistry's own %q %s", injectedType, injected, ownType, own)
	}
}
