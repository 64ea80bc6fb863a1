package control

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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

// TestControlSecurity: GET /v1/security lists the principal of a client
// certificate mapped by the rules, per broker and listener, and the
// denial its produce to a topic without ACLs met.
func TestControlSecurity(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true, TLSClientAuth: server.TLSClientAuthRequired,
		SSLPrincipalMappingRules: `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`,
		Listeners:                []server.Listener{{Name: "SSL", Listen: "127.0.0.1:0"}}})
	if err := c.CreateTopic("secret", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	defer srv.Close()
	tlsCfg, err := c.ClientCertTLSConfig(pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(tlsCfg), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce without ACLs: %v", err)
	}
	if _, err := c.WaitFor(ctx, server.AuthorizationDenied("User:alice", "secret")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/v1/security")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.SecurityState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/security: %d %v", resp.StatusCode, err)
	}
	if len(st.Principals) != 1 || st.Principals[0].Principal != "User:alice" || st.Principals[0].Listener != "SSL" ||
		st.Principals[0].Broker != 1 || st.Principals[0].Connections < 1 {
		t.Errorf("principals %+v, want User:alice on broker 1's SSL listener", st.Principals)
	}
	if len(st.Denials) == 0 || st.Denials[0].Principal != "User:alice" || st.Denials[0].Type != api.EventAuthorizationDenied ||
		st.Denials[0].ResourceName != "secret" || !st.Authorizer || st.DeniedTotal != uint64(len(st.Denials)) {
		t.Errorf("security %+v, want alice's denial on secret", st)
	}
}
