package control

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func TestControlUsers(t *testing.T) {
	c := securedCluster(t, server.Config{Brokers: 1})
	srv := httptest.NewServer(Handler(c))
	defer srv.Close()
	do := func(method, path, body string, wantCode int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantCode {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, wantCode)
		}
		return b
	}
	var users []api.SASLUser
	json.Unmarshal(do("GET", "/v1/users", "", 200), &users)
	if len(users) != 2 || users[0].Name != "alice" || !users[0].Plain || len(users[0].Scram) != 2 {
		t.Fatalf("users %+v", users)
	}
	seeds := kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...)
	zed := kgo.SASL(scram.Auth{User: "zed", Pass: "zed-pw"}.AsSha256Mechanism())
	if err := firstRequestErr(t, seeds, zed); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("zed before being added: %v", err)
	}
	do("POST", "/v1/users", `{"name":"zed","password":"zed-pw"}`, 200)
	if err := firstRequestErr(t, seeds, zed); err != nil {
		t.Fatalf("zed after being added: %v", err)
	}
	do("POST", "/v1/users", `{"name":"zed"}`, 400)
	do("POST", "/v1/users", `{"name":"a:b","password":"x"}`, 400)
	do("DELETE", "/v1/users/zed", "", 200)
	do("DELETE", "/v1/users/zed", "", 404)
	if err := firstRequestErr(t, seeds, zed); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("zed after being removed: %v", err)
	}
	if !containsEvent(c.Events(0), api.EventSASLUserChanged, "User:zed") {
		t.Fatal("no sasl_user_changed event")
	}

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(do("GET", "/v1/tls/ca.pem", "", 200)) {
		t.Fatal("GET /v1/tls/ca.pem is no PEM certificate")
	}
	if err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(&tls.Config{RootCAs: pool})); err != nil {
		t.Fatalf("SSL with the CA from the control API: %v", err)
	}
	plain := server.NewTestCluster(t, server.Config{Brokers: 1})
	srv2 := httptest.NewServer(Handler(plain))
	defer srv2.Close()
	if resp, err := http.Get(srv2.URL + "/v1/tls/ca.pem"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("ca.pem without TLS: %v %v", resp.StatusCode, err)
	}
}
