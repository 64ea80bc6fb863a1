package control

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// oauthServed starts a cluster with the built-in issuer whose brokers
// fetch the JWKS from the control port itself
// (sasl.oauthbearer.jwks.endpoint.url), as a deployment pointing its
// brokers at an identity server would, and serves the control API.
func oauthServed(t *testing.T) (*server.Cluster, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	c := server.NewTestCluster(t, server.Config{Brokers: 1,
		Listeners: []server.Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
		OAuth: server.OAuthConfig{
			JWKSEndpointURL:  base + "/v1/oauth/jwks",
			ExpectedAudience: []string{"kafka"}, ExpectedIssuer: "fakekafka",
			Issuer: &server.OAuthIssuer{Clients: map[string]string{"svc-orders": "orders secret/1", "billing": "b-secret"},
				Subjects: map[string]string{"billing": "billing-service"}},
		}})
	srv := &http.Server{Handler: Handler(c)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return c, base
}

type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	Error       string `json:"error"`
}

func postToken(t *testing.T, base string, form url.Values, header map[string]string) (int, tokenAnswer) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a tokenAnswer
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return resp.StatusCode, a
}

func basic(id, secret string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))}
}

// TestOAuthTokenEndpoint: the client credentials grant with Basic auth
// (plain, and form-encoded as RFC 6749 says) or form credentials, and its
// errors; the token verifies with the JWKS the endpoint publishes.
func TestOAuthTokenEndpoint(t *testing.T) {
	c, base := oauthServed(t)
	cc := url.Values{"grant_type": {"client_credentials"}}

	code, a := postToken(t, base, url.Values{"grant_type": {"client_credentials"}, "scope": {"kafka.produce"}}, basic("svc-orders", "orders secret/1"))
	if code != 200 || a.TokenType != "Bearer" || a.ExpiresIn != 3600 || a.Scope != "kafka.produce" || a.AccessToken == "" {
		t.Fatalf("basic auth: %d %+v", code, a)
	}
	resp, err := http.Get(base + "/v1/oauth/jwks")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	keys, err := sasl.ParseJWKS(doc)
	if err != nil || len(keys) != 1 || keys[0].KeyID != "fakekafka-1" || keys[0].Algorithm != "RS256" {
		t.Fatalf("JWKS %s: %v", doc, err)
	}
	v := &sasl.JWTValidator{ExpectedAudience: []string{"kafka"}, ExpectedIssuer: "fakekafka"}
	tok, err := v.Validate(a.AccessToken, keys, c.Now())
	if err != nil || tok.Subject != "svc-orders" || len(tok.Scopes) != 1 || tok.Scopes[0] != "kafka.produce" ||
		!tok.Expiry.Equal(tok.IssuedAt.Add(time.Hour)) {
		t.Fatalf("token %+v: %v", tok, err)
	}

	if code, a := postToken(t, base, cc, basic(url.QueryEscape("svc-orders"), url.QueryEscape("orders secret/1"))); code != 200 || a.AccessToken == "" {
		t.Fatalf("form-encoded basic auth: %d %+v", code, a)
	}
	code, a = postToken(t, base, url.Values{"grant_type": {"client_credentials"}, "client_id": {"billing"}, "client_secret": {"b-secret"}}, nil)
	if code != 200 {
		t.Fatalf("form credentials: %d %+v", code, a)
	}
	if tok, err := v.Validate(a.AccessToken, keys, c.Now()); err != nil || tok.Subject != "billing-service" {
		t.Fatalf("configured subject: %+v %v", tok, err)
	}

	for _, bad := range []struct {
		form   url.Values
		header map[string]string
		code   int
		err    string
	}{
		{cc, basic("svc-orders", "wrong"), 401, "invalid_client"},
		{cc, basic("nobody", "x"), 401, "invalid_client"},
		{cc, nil, 401, "invalid_client"},
		{url.Values{"grant_type": {"password"}}, basic("svc-orders", "orders secret/1"), 400, "unsupported_grant_type"},
		{url.Values{}, basic("svc-orders", "orders secret/1"), 400, "invalid_request"},
		{url.Values{"grant_type": {"client_credentials"}, "client_id": {"billing"}}, basic("billing", "b-secret"), 400, "invalid_request"},
	} {
		if code, a := postToken(t, base, bad.form, bad.header); code != bad.code || a.Error != bad.err {
			t.Fatalf("%v %v: %d %+v, want %d %s", bad.form, bad.header, code, a, bad.code, bad.err)
		}
	}
	req, _ := http.NewRequest("POST", base+"/v1/oauth/token", strings.NewReader(`{"grant_type":"client_credentials"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Fatalf("JSON body: %v %v", resp, err)
	}
}

// TestOAuthFranzGoViaTokenEndpoint: franz-go's oauth mechanism with a
// token fetched over HTTP from the token endpoint, validated by brokers
// that fetched the JWKS from the control port.
func TestOAuthFranzGoViaTokenEndpoint(t *testing.T) {
	c, base := oauthServed(t)
	fetch := func(ctx context.Context) (oauth.Auth, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/oauth/token",
			strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("svc-orders", "orders secret/1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return oauth.Auth{}, err
		}
		defer resp.Body.Close()
		var a tokenAnswer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
			return oauth.Auth{}, errors.Join(err, errors.New(resp.Status))
		}
		return oauth.Auth{Token: a.AccessToken}, nil
	}
	seeds := kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e api.Event) bool { return e.Type == api.EventJWKSRefreshed }); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(seeds, kgo.SASL(oauth.Oauth(fetch)), kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("paid")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(e api.Event) bool {
		return e.Type == api.EventClientAuthenticated && e.Detail == "User:svc-orders"
	}); err != nil {
		t.Fatal(err)
	}
	// A token the issuer signs for another audience is refused.
	other, _ := c.IssueToken(server.TokenRequest{Subject: "svc-orders", Claims: map[string]any{"aud": "billing"}})
	err = firstRequestErr(t, seeds, kgo.SASL(oauth.Auth{Token: other}.AsMechanism()))
	if err == nil || !strings.Contains(err.Error(), "invalid_token") {
		t.Fatalf("wrong audience: %v", err)
	}
}

// TestOAuthEndpointsOff: without the issuer both endpoints are 404.
func TestOAuthEndpointsOff(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	srv := &http.Server{Handler: Handler(c)}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	if code, _ := postToken(t, base, url.Values{"grant_type": {"client_credentials"}}, basic("a", "b")); code != 404 {
		t.Fatalf("token endpoint: %d", code)
	}
	if resp, err := http.Get(base + "/v1/oauth/jwks"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("jwks: %v %v", resp, err)
	}
}
