package schemaregistry

import (
	"testing"
)

// No body, however malformed, gets a 5xx: bad input is the client's
// error (4xx) and leaves the registry as it was.
func TestBadBodiesNever5xx(t *testing.T) {
	c := newClient(t)
	c.register("s", avroBody(userV1))
	bodies := []string{
		``, `null`, `[]`, `"x"`, `{`, `{}`, `{"schema":null}`, `{"schema":"{"}`, `{"schema":"[]"}`, `{"schema":"{}"}`,
		`{"schema":"\"string\"","schemaType":""}`, `{"schema":"\"string\"","schemaType":7}`, `{"schema":"\"string\"","references":{}}`,
		`{"schema":"\"string\"","references":[{"name":"a","subject":"s","version":99}]}`,
		`{"schema":"\"string\"","references":[{"name":"a","subject":"s","version":"x"}]}`,
		`{"schema":"\"string\"","version":"1"}`, `{"schema":"\"string\"","id":-5}`,
		`{"schema":"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"R\"}]}"}`,
		`{"schema":"{\"type\":\"array\"}"}`, `{"schema":"{\"type\":\"map\",\"values\":{}}"}`, `{"schema":"{\"type\":\"fixed\",\"name\":\"F\",\"size\":-1}"}`,
		`{"schema":"{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[1]}"}`, `{"schema":"[\"null\",\"null\"]"}`,
		`{"compatibility":5}`, `{"compatibility":""}`, `{"mode":null}`, `{"mode":""}`,
	}
	paths := []struct{ method, path string }{
		{"POST", "/subjects/s/versions"}, {"POST", "/subjects/s"}, {"POST", "/subjects/new/versions"},
		{"POST", "/compatibility/subjects/s/versions/latest"}, {"POST", "/compatibility/subjects/s/versions"},
		{"PUT", "/config"}, {"PUT", "/config/s"}, {"PUT", "/mode/s"},
	}
	before := len(c.store.Records())
	for _, p := range paths {
		for _, b := range bodies {
			status, got := c.do(p.method, p.path, b)
			if status >= 500 {
				t.Errorf("%s %s %s: %d %s", p.method, p.path, b, status, got)
			}
		}
	}
	for _, path := range []string{"/subjects/s/versions/99999999999", "/schemas/ids/-1", "/schemas/ids/1/nothing", "/config/a/b", "/compatibility/subjects/s/versions/x"} {
		if status, got := c.do("GET", path, ""); status >= 500 {
			t.Errorf("GET %s: %d %s", path, status, got)
		}
	}
	// The only writes are the two valid schemas among them, registered in
	// the new subject: [] (an empty union, which Avro accepts) and
	// "string" (schemaType ""); the others are refused, the recursive
	// record as incompatible with "string".
	if got := len(c.store.Records()); got != before+2 {
		for _, r := range c.store.Records()[before:] {
			t.Logf("%s %s", r.Key, r.Value)
		}
		t.Fatalf("%d records written by bad input", got-before)
	}
}
