package schemaregistry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDocsRESTExample is the example of docs/schema-registry.md: the
// REST API with nothing but net/http, answers checked exactly.
func TestDocsRESTExample(t *testing.T) {
	srv := httptest.NewServer(New(NewMemStore(), Options{}))
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, step := range []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"POST", "/subjects/users-value/versions", `{"schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"}]}"}`,
			200, `{"id":1,"version":1,"schemaType":"AVRO","schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"}]}"}`},
		{"GET", "/schemas/ids/1", "",
			200, `{"schemaType":"AVRO","schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"}]}"}`},
		// A field with a default: BACKWARD compatible, version 2.
		{"POST", "/subjects/users-value/versions", `{"schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"email\",\"type\":\"string\",\"default\":\"\"}]}"}`,
			200, `{"id":2,"version":2,"schemaType":"AVRO","schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"email\",\"type\":\"string\",\"default\":\"\"}]}"}`},
		// Without a default: refused, and the check says why.
		{"POST", "/compatibility/subjects/users-value/versions/latest?verbose=true", `{"schema":"{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"age\",\"type\":\"int\"}]}"}`,
			200, `{"is_compatible":false,"messages":["{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'age' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'age'}","{oldSchemaVersion: 2}","{oldSchema: '{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"email\",\"type\":\"string\",\"default\":\"\"}]}'}","{validateFields: 'false', compatibility: 'BACKWARD'}"]}`},
		{"GET", "/subjects/users-value/versions/3", "",
			404, `{"error_code":40402,"message":"Version 3 not found."}`},
	} {
		status, answer := call(step.method, step.path, step.body)
		if status != step.status || answer != step.answer {
			t.Fatalf("%s %s\n got %d %s\nwant %d %s", step.method, step.path, status, answer, step.status, step.answer)
		}
	}
}
