package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
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

// GET /v1/schema-registry after registrations over the registry's REST
// API: subjects with their versions, ids, types, schema text, references,
// settings and deleted flags; the events of the subject, filtered by
// ?subject=.
func TestSchemaRegistryStateAndEvents(t *testing.T) {
	c, srv := registryCluster(t)
	url := c.SchemaRegistryURL()
	call := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
	address := `{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}`
	call("POST", "/subjects/address/versions", `{"schema":`+quoteJSON(address)+`}`)
	person := `{"type":"record","name":"Person","fields":[{"name":"home","type":"Address"}]}`
	call("POST", "/subjects/person-value/versions", `{"schema":`+quoteJSON(person)+`,"references":[{"name":"Address","subject":"address","version":1}]}`)
	call("POST", "/subjects/gone/versions", `{"schema":"\"string\""}`)
	call("DELETE", "/subjects/gone", "")
	call("PUT", "/config/person-value", `{"compatibility":"FULL_TRANSITIVE"}`)
	call("PUT", "/mode", `{"mode":"READONLY"}`)

	var st api.SchemaRegistryState
	if code := controlCall(t, srv, "GET", "/v1/schema-registry", "", &st); code != http.StatusOK {
		t.Fatalf("GET: %d", code)
	}
	want := api.SchemaRegistryState{URL: url, Compatibility: "BACKWARD", Mode: "READONLY", Subjects: []api.SchemaSubjectState{
		{Subject: "address", Versions: []api.SchemaVersionState{{Version: 1, ID: 1, SchemaType: "AVRO", Schema: address}}},
		{Subject: "gone", Deleted: true, Versions: []api.SchemaVersionState{{Version: 1, ID: 3, SchemaType: "AVRO", Schema: `"string"`, Deleted: true}}},
		{Subject: "person-value", Compatibility: "FULL_TRANSITIVE", Versions: []api.SchemaVersionState{{Version: 1, ID: 2, SchemaType: "AVRO", Schema: person,
			References: []api.SchemaReference{{Name: "Address", Subject: "address", Version: 1}}}}},
	}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("state\n%+v\nwant\n%+v", st, want)
	}

	var evs struct {
		Events []api.Event `json:"events"`
	}
	if code := controlCall(t, srv, "GET", "/v1/events?subject=gone", "", &evs); code != http.StatusOK {
		t.Fatalf("GET events: %d", code)
	}
	var got []string
	for _, e := range evs.Events {
		got = append(got, fmt.Sprintf("%s %s v%d id %d %s permanent=%v", e.Type, e.Subject, e.Version, e.SchemaID, e.SchemaType, e.Permanent))
	}
	if strings.Join(got, "\n") != "schema_registered gone v1 id 3 AVRO permanent=false\nschema_deleted gone v1 id 3 AVRO permanent=false" {
		t.Errorf("events of subject gone:\n%s", strings.Join(got, "\n"))
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
