package control

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func TestControlListenersAndReadiness(t *testing.T) {
	c := twoListeners(t, server.Config{Brokers: 2, AwaitAdvertised: "EXTERNAL"})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	var health map[string]string
	if code := controlCall(t, srv, "GET", "/healthz", "", &health); code != 200 || health["status"] != "ok" {
		t.Fatalf("/healthz: %d %v", code, health)
	}
	var ready struct {
		Ready      bool   `json:"ready"`
		WaitingFor string `json:"waiting_for"`
	}
	if code := controlCall(t, srv, "GET", "/readyz", "", &ready); code != 503 || ready.Ready || !strings.Contains(ready.WaitingFor, "broker(s) 1,2") {
		t.Fatalf("/readyz before the PUT: %d %+v", code, ready)
	}
	var ls []api.ListenerState
	if code := controlCall(t, srv, "GET", "/v1/listeners", "", &ls); code != 200 || len(ls) != 2 || ls[0].Name != "EXTERNAL" || ls[1].Name != "INTERNAL" || ls[0].Set {
		t.Fatalf("/v1/listeners: %d %+v", code, ls)
	}
	if ls[0].SecurityProtocol != "PLAINTEXT" || len(ls[0].Brokers) != 2 || ls[0].Brokers[1].ID != 2 || ls[0].Brokers[0].Bind != ls[0].Brokers[0].Advertised {
		t.Fatalf("/v1/listeners: %+v", ls)
	}

	for _, tc := range []struct {
		method, path, body string
		code               int
	}{
		{"PUT", "/v1/listeners/NOPE", `{"advertised":{"1":"h:1"}}`, 404},
		{"PUT", "/v1/listeners/EXTERNAL", ``, 400},
		{"PUT", "/v1/listeners/EXTERNAL", `{}`, 400},
		{"PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"x":"h:1"}}`, 400},
		{"PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"9":"h:1"}}`, 404},
		{"PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"1":"nope"}}`, 400},
		{"PUT", "/v1/listeners/EXTERNAL", `{"advertised":["h:1"]}`, 400},
		{"PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"1":"h:1"},"x":1}`, 400},
		{"POST", "/v1/listeners/EXTERNAL", `{}`, 405},
		{"GET", "/v1/listeners/NOPE", ``, 404},
	} {
		if code := controlCall(t, srv, tc.method, tc.path, tc.body, nil); code != tc.code {
			t.Errorf("%s %s %s: %d, want %d", tc.method, tc.path, tc.body, code, tc.code)
		}
	}

	// Broker 1 alone is not enough.
	var l api.ListenerState
	if code := controlCall(t, srv, "PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"1":"kafka.example:32001"}}`, &l); code != 200 || l.Brokers[0].Advertised != "kafka.example:32001" || l.Set {
		t.Fatalf("PUT broker 1: %d %+v", code, l)
	}
	if code := controlCall(t, srv, "GET", "/readyz", "", &ready); code != 503 || !strings.Contains(ready.WaitingFor, "broker(s) 2 ") {
		t.Fatalf("/readyz with broker 2 missing: %d %+v", code, ready)
	}
	if code := controlCall(t, srv, "PUT", "/v1/listeners/EXTERNAL", `{"advertised":{"2":"[::1]:32002"}}`, &l); code != 200 || !l.Set || l.Brokers[1].Advertised != "[::1]:32002" {
		t.Fatalf("PUT broker 2: %d %+v", code, l)
	}
	if code := controlCall(t, srv, "GET", "/readyz", "", &ready); code != 200 || !ready.Ready {
		t.Fatalf("/readyz after both: %d %+v", code, ready)
	}
	if code := controlCall(t, srv, "GET", "/v1/listeners/EXTERNAL", "", &l); code != 200 || l.Brokers[0].Advertised != "kafka.example:32001" {
		t.Fatalf("GET /v1/listeners/EXTERNAL: %d %+v", code, l)
	}
	if st := c.State(); st.Brokers[1].Address != "[::1]:32002" {
		t.Fatalf("State reports broker 2 at %s", st.Brokers[1].Address)
	}
}
