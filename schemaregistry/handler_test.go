package schemaregistry

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// client talks to a Registry over real HTTP.
type client struct {
	t     *testing.T
	url   string
	store *MemStore
	reg   *Registry

	mu      sync.Mutex
	changes []Change
}

func newClient(t *testing.T) *client {
	return newClientWith(t, NewMemStore(), Options{})
}

func newClientWith(t *testing.T, store *MemStore, opts Options) *client {
	t.Helper()
	c := &client{t: t, store: store}
	if opts.Observe == nil {
		opts.Observe = func(ch Change) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.changes = append(c.changes, ch)
		}
	}
	c.reg = New(store, opts)
	srv := httptest.NewServer(c.reg)
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// do sends a request with Confluent's v1 content type and returns the
// status and the body.
func (c *client) do(method, path, body string) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentTypeV1)
	}
	return c.send(req)
}

func (c *client) send(req *http.Request) (int, string) {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// expect checks one exchange exactly.
func (c *client) expect(method, path, body string, wantStatus int, wantBody string) {
	c.t.Helper()
	status, got := c.do(method, path, body)
	if status != wantStatus || got != wantBody {
		c.t.Fatalf("%s %s\n got %d %s\nwant %d %s", method, path, status, got, wantStatus, wantBody)
	}
}

// register posts a schema body (a JSON object) to subject.
func (c *client) register(subject, body string) (int, string) {
	c.t.Helper()
	return c.do("POST", "/subjects/"+subject+"/versions", body)
}

func (c *client) observed() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Change(nil), c.changes...)
}

// avroBody is a register request for an Avro schema text.
func avroBody(schemaText string) string {
	b, _ := json.Marshal(map[string]string{"schema": schemaText})
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const (
	userV1 = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"int"}]}`
	userV2 = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"int"},{"name":"email","type":["null","string"],"default":null}]}`
	// userBad adds a field without a default: not BACKWARD compatible.
	userBad = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"int"},{"name":"age","type":"int"}]}`
)

func TestRegisterAndRead(t *testing.T) {
	c := newClient(t)
	spaced := `{ "type": "record", "name": "User", "namespace": "com.acme", "fields": [ {"name": "id", "type": "int"} ] }`
	c.expect("POST", "/subjects/users-value/versions", avroBody(spaced), 200,
		`{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	// The same schema again (any spelling) answers the existing id and version.
	c.expect("POST", "/subjects/users-value/versions", avroBody(userV1), 200,
		`{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	// In another subject it keeps its global id.
	c.expect("POST", "/subjects/other/versions", `{"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`, 200,
		`{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("POST", "/subjects/users-value/versions", avroBody(userV2), 200,
		`{"id":2,"version":2,"schemaType":"AVRO","schema":`+jsonString(userV2)+`}`)

	c.expect("GET", "/", "", 200, `{}`)
	c.expect("GET", "/subjects", "", 200, `["other","users-value"]`)
	c.expect("GET", "/subjects?subjectPrefix=us", "", 200, `["users-value"]`)
	c.expect("GET", "/subjects/users-value/versions", "", 200, `[1,2]`)
	c.expect("GET", "/subjects/users-value/versions/1", "", 200,
		`{"subject":"users-value","version":1,"id":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("GET", "/subjects/users-value/versions/latest", "", 200,
		`{"subject":"users-value","version":2,"id":2,"schemaType":"AVRO","schema":`+jsonString(userV2)+`}`)
	c.expect("GET", "/subjects/users-value/versions/-1", "", 200,
		`{"subject":"users-value","version":2,"id":2,"schemaType":"AVRO","schema":`+jsonString(userV2)+`}`)
	c.expect("GET", "/subjects/users-value/versions/1/schema", "", 200, userV1)
	c.expect("GET", "/schemas/ids/1", "", 200, `{"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("GET", "/schemas/ids/1/schema", "", 200, userV1)
	c.expect("GET", "/schemas/ids/1/subjects", "", 200, `["other","users-value"]`)
	c.expect("GET", "/schemas/ids/1/versions", "", 200, `[{"subject":"other","version":1},{"subject":"users-value","version":1}]`)
	c.expect("GET", "/schemas/ids/1/versions?subject=other", "", 200, `[{"subject":"other","version":1}]`)
	c.expect("GET", "/schemas/types", "", 200, `["JSON","PROTOBUF","AVRO"]`)
	c.expect("GET", "/schemas?subjectPrefix=users&latestOnly=true", "", 200,
		`[{"subject":"users-value","version":2,"id":2,"schemaType":"AVRO","schema":`+jsonString(userV2)+`}]`)
	// Look up: which version of the subject holds this schema.
	c.expect("POST", "/subjects/users-value", avroBody(spaced), 200,
		`{"subject":"users-value","version":1,"id":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("POST", "/subjects/users-value", avroBody(userBad), 404, `{"error_code":40403,"message":"Schema not found"}`)
	c.expect("POST", "/subjects/nobody", avroBody(userV1), 404, `{"error_code":40401,"message":"Subject 'nobody' not found."}`)

	got := c.observed()
	want := []Change{
		{Kind: SchemaRegistered, Subject: "users-value", Version: 1, ID: 1, SchemaType: "AVRO"},
		{Kind: SchemaRegistered, Subject: "other", Version: 1, ID: 1, SchemaType: "AVRO"},
		{Kind: SchemaRegistered, Subject: "users-value", Version: 2, ID: 2, SchemaType: "AVRO"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("observed %+v", got)
	}
}

func TestContentTypes(t *testing.T) {
	c := newClient(t)
	for _, tc := range []struct{ accept, want string }{
		{"", contentTypeV1},
		{"application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5", contentTypeV1},
		{"application/json", contentTypeJSON},
		{"application/vnd.schemaregistry+json", contentTypeDefault},
		{"*/*", contentTypeV1},
	} {
		req, _ := http.NewRequest("GET", c.url+"/subjects", nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != tc.want {
			t.Errorf("Accept %q: Content-Type %q, want %q", tc.accept, got, tc.want)
		}
	}
	for _, ct := range []string{contentTypeV1, contentTypeDefault, contentTypeJSON, "application/json; charset=utf-8", "application/octet-stream"} {
		req, _ := http.NewRequest("POST", c.url+"/subjects/s/versions", strings.NewReader(avroBody(`"string"`)))
		req.Header.Set("Content-Type", ct)
		if status, body := c.send(req); status != 200 {
			t.Errorf("Content-Type %q: %d %s", ct, status, body)
		}
	}
	req, _ := http.NewRequest("POST", c.url+"/subjects/s/versions", strings.NewReader(avroBody(`"string"`)))
	req.Header.Set("Content-Type", "text/plain")
	if status, body := c.send(req); status != 415 || body != `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}` {
		t.Errorf("text/plain: %d %s", status, body)
	}
}

func TestBadInput(t *testing.T) {
	c := newClient(t)
	c.register("s", avroBody(userV1))
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/subjects/nobody/versions", "", 404, `{"error_code":40401,"message":"Subject 'nobody' not found."}`},
		{"GET", "/subjects/nobody/versions/1", "", 404, `{"error_code":40401,"message":"Subject 'nobody' not found."}`},
		{"GET", "/subjects/s/versions/7", "", 404, `{"error_code":40402,"message":"Version 7 not found."}`},
		{"GET", "/subjects/s/versions/0", "", 422, `{"error_code":42202,"message":"The specified version '0' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""}`},
		{"GET", "/subjects/s/versions/first", "", 422, `{"error_code":42202,"message":"The specified version 'first' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""}`},
		{"GET", "/schemas/ids/99", "", 404, `{"error_code":40403,"message":"Schema 99 not found"}`},
		{"GET", "/schemas/ids/99/subjects", "", 404, `{"error_code":40403,"message":"Schema not found"}`},
		{"GET", "/schemas/ids/x", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`},
		{"GET", "/nothing/here", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`},
		{"PUT", "/subjects", `{}`, 405, `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`},
		{"POST", "/subjects/s/versions", `{"schema":`, 422, `{"error_code":422,"message":"Unrecognizable request body: unexpected end of JSON input"}`},
		{"POST", "/subjects/s/versions", `{"schema":5}`, 422, `{"error_code":422,"message":"Unrecognizable request body: json: cannot unmarshal number into Go struct field registerRequest.schema of type string"}`},
		{"POST", "/subjects/s/versions", `{"schema":""}`, 422, `{"error_code":42201,"message":"Empty schema"}`},
		{"POST", "/subjects/s/versions", `{"schema":"\"string\"","schemaType":"XML"}`, 422, `{"error_code":42201,"message":"Invalid schema type XML"}`},
		{"POST", "/subjects/s/versions", avroBody(`{"type":"record","name":"R"}`), 422,
			`{"error_code":42201,"message":"Invalid schema {subject=s,version=0,id=-1,schemaType=AVRO,references=[],metadata=null,ruleSet=null,schema={\"type\":\"record\",\"name\":\"R\"}}, details: invalid Avro schema: avro: record must have an array of fields"}`},
		{"POST", "/subjects/s/versions", `{"schema":"\"string\"","references":[{"name":"x","subject":"gone","version":1}]}`, 422,
			`{"error_code":42201,"message":"Invalid schema {subject=s,version=0,id=-1,schemaType=AVRO,references=[{name='x', subject='gone', version=1}],metadata=null,ruleSet=null,schema=\"string\"}, details: No schema reference found for subject \"gone\" and version 1"}`},
		{"POST", "/compatibility/subjects/s/versions/9", avroBody(userV1), 404, `{"error_code":40402,"message":"Version 9 not found."}`},
	} {
		status, got := c.do(tc.method, tc.path, tc.body)
		if status != tc.status || got != tc.want {
			t.Errorf("%s %s %s\n got %d %s\nwant %d %s", tc.method, tc.path, tc.body, status, got, tc.status, tc.want)
		}
	}
}

func TestBasicAuth(t *testing.T) {
	c := newClientWith(t, NewMemStore(), Options{Authenticate: func(u, p string) bool { return u == "alice" && p == "secret" }})
	c.expect("GET", "/subjects", "", 401, `{"error_code":401,"message":"Unauthorized"}`)
	req, _ := http.NewRequest("GET", c.url+"/subjects", nil)
	req.SetBasicAuth("alice", "wrong")
	if status, _ := c.send(req); status != 401 {
		t.Fatalf("wrong password: %d", status)
	}
	req.SetBasicAuth("alice", "secret")
	if status, body := c.send(req); status != 200 || body != `[]` {
		t.Fatalf("right password: %d %s", status, body)
	}
}
