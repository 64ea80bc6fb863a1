package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestQuotasHTTP(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	srv := httptest.NewServer(c.ControlHandler())
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
	var st QuotaState
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

// TestQuotaIPHostNames: an ip entity's host name is checked for its form
// and never looked up (no traffic leaves the machine).
func TestQuotaIPHostNames(t *testing.T) {
	for host, ok := range map[string]bool{
		"localhost": true, "broker-1.example": true, "broker.example.": true, "a1": true,
		"not a host!": false, "": false, "-bad.example": false, "bad-.example": false, "a..b": false,
		strings.Repeat("a", 64) + ".example": false,
	} {
		if got := wellFormedHost(host); got != ok {
			t.Errorf("wellFormedHost(%q) = %v, want %v", host, got, ok)
		}
	}
}
