package control

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func TestChaosHTTP(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %q is not a JSON object", method, path, b)
		}
		return resp.StatusCode, out
	}
	if code, body := call("GET", "/v1/chaos/report", ""); code != 404 || body["error"] == nil {
		t.Fatalf("report before any run: %d %v", code, body)
	}
	for _, bad := range []string{`"wild"`, `{"preset":"gentle","what":1}`, `not json`, ``} {
		if code, body := call("POST", "/v1/chaos", bad); code != 400 || body["error"] == nil {
			t.Fatalf("POST %q: %d %v", bad, code, body)
		}
	}
	code, body := call("POST", "/v1/chaos", `"gentle,seed=12,duration=60s"`)
	if code != 200 || body["seed"] != float64(12) || len(body["actions"].([]any)) == 0 {
		t.Fatalf("start: %d %v", code, body)
	}
	if code, _ := call("POST", "/v1/chaos", `{"preset":"rough"}`); code != 409 {
		t.Fatalf("second start: %d", code)
	}
	if code, body := call("GET", "/v1/chaos/report", ""); code != 200 || body["running"] != true || body["seed"] != float64(12) {
		t.Fatalf("report: %d %v", code, body)
	}
	if code, body := call("DELETE", "/v1/chaos", ""); code != 200 || body["running"] != false || body["violations"] == nil {
		t.Fatalf("stop: %d %v", code, body)
	}
	if code, _ := call("DELETE", "/v1/chaos", ""); code != 404 {
		t.Fatalf("second stop: %d", code)
	}
	if code, body := call("GET", "/v1/chaos/report", ""); code != 200 || body["running"] != false {
		t.Fatalf("report after stop: %d %v", code, body)
	}
	evs := c.Events(0)
	var started, stopped bool
	for _, e := range evs {
		started = started || e.Type == api.EventChaosStarted && strings.Contains(e.Detail, "seed=12")
		stopped = stopped || e.Type == api.EventChaosStopped
	}
	if !started || !stopped {
		t.Fatal("no chaos_started with the seed or no chaos_stopped event")
	}
}
