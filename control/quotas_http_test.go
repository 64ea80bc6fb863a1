package control

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func TestQuotasHTTP(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	post := func(body string) int {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/quotas", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, bad := range []string{
		`{"entity":{"group":"g"},"set":{"producer_byte_rate":1}}`,
		`{"entity":{"client-id":"a"},"set":{"producer_byte_rate":1.5}}`,
		`{"entity":{"client-id":"a"},"set":{"bogus":1}}`,
		`{"entity":{"client-id":"a"}}`,
		`{"entity":{},"set":{"producer_byte_rate":1}}`,
	} {
		if code := post(bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	if code := post(`{"entity":{"user":"alice","client-id":null},"set":{"producer_byte_rate":1024,"request_percentage":12.5}}`); code != http.StatusOK {
		t.Fatalf("POST /v1/quotas: %d", code)
	}
	resp, err := http.Get(srv.URL + "/v1/quotas")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.QuotaState
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Quotas) != 1 || *st.Quotas[0].Entity["user"] != "alice" || st.Quotas[0].Entity["client-id"] != nil ||
		st.Quotas[0].Values["producer_byte_rate"] != 1024 || st.Quotas[0].Values["request_percentage"] != 12.5 {
		t.Fatalf("GET /v1/quotas: %+v", st)
	}
	if _, ok := st.Quotas[0].Entity["client-id"]; !ok {
		t.Fatal("the default client-id is missing from the entity")
	}
}
