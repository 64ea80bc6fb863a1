package schemaregistry

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve answers one request in process (no sockets: the registry's own cost).
func serve(b *testing.B, reg *Registry, method, path, body string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentTypeV1)
	w := httptest.NewRecorder()
	reg.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
}

// BenchmarkRegisterNew registers a new schema per iteration, as the
// next version of one of 20 subjects (each checked BACKWARD against its
// latest: every version adds a field with a default to the same record).
func BenchmarkRegisterNew(b *testing.B) {
	reg := New(NewMemStore(), Options{})
	for i := 0; b.Loop(); i++ {
		subject, n := i%20, i/20
		fields := `{"name":"id","type":"int"}`
		if n > 0 {
			fields += fmt.Sprintf(`,{"name":"f%d","type":"string","default":""}`, n)
		}
		serve(b, reg, "POST", fmt.Sprintf("/subjects/s%d/versions", subject), avroBody(`{"type":"record","name":"R","fields":[`+fields+`]}`))
	}
}

// BenchmarkRegisterExisting is what every producer's serialiser does at
// start: register a schema the subject already has.
func BenchmarkRegisterExisting(b *testing.B) {
	reg := New(NewMemStore(), Options{})
	for i := range 200 {
		serve(b, reg, "POST", fmt.Sprintf("/subjects/s%d/versions", i), avroBody(fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"id","type":"int"}]}`, i)))
	}
	body := avroBody(`{"type":"record","name":"R7","fields":[{"name":"id","type":"int"}]}`)
	for b.Loop() {
		serve(b, reg, "POST", "/subjects/s7/versions", body)
	}
}
