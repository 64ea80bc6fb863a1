package control

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func registryCluster(t *testing.T) (*server.Cluster, *httptest.Server) {
	t.Helper()
	c := server.NewTestCluster(t, server.Config{Brokers: 1, SchemaRegistry: &server.SchemaRegistryConfig{}})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	return c, srv
}

// The fault rules over HTTP: create (method and path as given, status
// from the error code), list, show, remove one, clear; bad bodies are 400
// with the reason, unknown ids 404.
func TestSchemaRegistryFaultControlAPI(t *testing.T) {
	c, srv := registryCluster(t)
	var created api.SchemaRegistryFaultState
	body := `{"method":"POST","path":"/subjects/*/versions","error_code":50001,"count":2}`
	if code := controlCall(t, srv, "POST", "/v1/schema-registry/faults", body, &created); code != http.StatusCreated {
		t.Fatalf("POST: status %d", code)
	}
	want := api.SchemaRegistryFaultState{ID: created.ID, Method: "POST", Path: "/subjects/*/versions", Status: 500, ErrorCode: 50001,
		Message: "Error in the backend data store (fakekafka fault " + created.ID + ")", Count: 2, Remaining: 2}
	if created != want {
		t.Fatalf("created %+v\nwant %+v", created, want)
	}
	var slow api.SchemaRegistryFaultState
	if code := controlCall(t, srv, "POST", "/v1/schema-registry/faults", `{"path":"/schemas/ids/*","delay_ms":250}`, &slow); code != http.StatusCreated ||
		slow.Status != 0 || slow.DelayMillis != 250 || slow.Remaining != -1 {
		t.Fatalf("POST a delay: %d %+v", code, slow)
	}
	var list struct {
		Faults []api.SchemaRegistryFaultState `json:"faults"`
	}
	if code := controlCall(t, srv, "GET", "/v1/schema-registry/faults", "", &list); code != http.StatusOK ||
		len(list.Faults) != 2 || list.Faults[0] != want || list.Faults[1].ID != slow.ID {
		t.Fatalf("GET: %d %+v", code, list)
	}
	var one api.SchemaRegistryFaultState
	if code := controlCall(t, srv, "GET", "/v1/schema-registry/faults/"+slow.ID, "", &one); code != http.StatusOK || one != slow {
		t.Fatalf("GET one: %d %+v", code, one)
	}
	if code := controlCall(t, srv, "DELETE", "/v1/schema-registry/faults/"+slow.ID, "", &one); code != http.StatusOK || one.ID != slow.ID {
		t.Fatalf("DELETE one: %d %+v", code, one)
	}
	for _, path := range []string{"/v1/schema-registry/faults/" + slow.ID, "/v1/schema-registry/faults/nope"} {
		if code := controlCall(t, srv, "DELETE", path, "", nil); code != http.StatusNotFound {
			t.Errorf("DELETE %s: %d, want 404", path, code)
		}
		if code := controlCall(t, srv, "GET", path, "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	if code := controlCall(t, srv, "DELETE", "/v1/schema-registry/faults", "", &list); code != http.StatusOK || len(list.Faults) != 1 || list.Faults[0].ID != created.ID {
		t.Fatalf("DELETE all: %d %+v", code, list)
	}
	if n := len(c.SchemaRegistryFaults()); n != 0 {
		t.Errorf("%d rules left after clear", n)
	}
	for body, why := range map[string]string{
		`{"method":"FETCH"}`:          "unknown method",
		`{"path":"subjects"}`:         "must start with /",
		`{"status":200}`:              "not an HTTP error status",
		`{"error_code":12345}`:        "does not start with an HTTP status",
		`{"delay_ms":-1}`:             "delay_ms",
		`{"count":-2}`:                "negative",
		`{"error_code":"50001"}`:      `"error_code" must be an integer`,
		`{"errorCode":50001}`:         "errorCode",
		`{"path":"/a/**/b","x":1}`:    `unknown field "x"`,
		`{"path":"/subjects/**/v"}`:   "** may only end a pattern",
		`{"path":"/subjects/order*"}`: "a whole segment",
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, "POST", "/v1/schema-registry/faults", body, &e); code != http.StatusBadRequest || !strings.Contains(e.Error, why) {
			t.Errorf("POST %s: %d %q, want 400 saying %q", body, code, e.Error, why)
		}
	}
}

// A cluster without a registry answers 404, saying so, on every path.
func TestSchemaRegistryControlsWhenOff(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/schema-registry", ""},
		{"GET", "/v1/schema-registry/faults", ""},
		{"POST", "/v1/schema-registry/faults", `{"error_code":50001}`},
		{"DELETE", "/v1/schema-registry/faults", ""},
		{"GET", "/v1/schema-registry/faults/1", ""},
		{"DELETE", "/v1/schema-registry/faults/1", ""},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, r.method, r.path, r.body, &e); code != http.StatusNotFound || !strings.Contains(e.Error, "schema registry is off") {
			t.Errorf("%s %s: %d %q, want 404 saying the registry is off", r.method, r.path, code, e.Error)
		}
	}
}

// GET /v1/schema-registry on a registry with nothing in it: its URL and
// Confluent's defaults.
func TestSchemaRegistryStateEmpty(t *testing.T) {
	c, srv := registryCluster(t)
	var st api.SchemaRegistryState
	if code := controlCall(t, srv, "GET", "/v1/schema-registry", "", &st); code != http.StatusOK {
		t.Fatalf("GET: %d", code)
	}
	if st.URL != c.SchemaRegistryURL() || st.Compatibility != "BACKWARD" || st.Mode != "READWRITE" || st.Subjects == nil || len(st.Subjects) != 0 {
		t.Errorf("state %+v", st)
	}
}
