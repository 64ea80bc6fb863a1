package matrix

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// scSecurity produces and consumes over a SASL_SSL listener with
// SCRAM-SHA-512, trusting the CA the cluster wrote, and checks the broker
// authenticated the client as the user. A wrong password first must fail
// with the client's authentication error and write nothing.
func scSecurity(r *cell, cl Client) {
	sc, ok := cl.(SecureClient)
	if !ok {
		r.notSupported("the adapter has no SASL_SSL settings yet")
		return
	}
	dir := r.TempDir()
	c := server.NewTestCluster(r, server.Config{
		Listeners: []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_SSL", Listen: "127.0.0.1:0"}},
		SASLUsers: map[string]string{"alice": "alice-secret"},
		TLSDir:    dir,
	})
	must(r, c.CreateTopic("secure", 1, 3, nil))
	var bootstrap []string
	for _, b := range c.Listeners()[1].Brokers {
		bootstrap = append(bootstrap, b.Advertised)
	}
	var recs []Record
	for i := range 10 {
		recs = append(recs, Record{Key: fmt.Sprint("k", i), Value: fmt.Sprint("secret-", i)})
	}
	cfg := SecurityConfig{Bootstrap: bootstrap, ClientID: clientID(cl, "security"), CAFile: filepath.Join(dir, "ca.pem"),
		Mechanism: "SCRAM-SHA-512", User: "alice", Password: "alice-secret", Topic: "secure"}

	wrong := cfg
	wrong.Password = "not-alice-secret"
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, werr := sc.SecureRoundTrip(wctx, wrong, recs[:1])
	wcancel()
	if werr == nil || !isAuthenticationError(werr) {
		r.Fatalf("wrong password: got %v, want the client's authentication error", werr)
	}
	if _, err := c.WaitFor(context.Background(), func(e server.Event) bool {
		return e.Type == server.EventAuthenticationFailed && e.Reason == "SCRAM-SHA-512"
	}); err != nil {
		r.Fatalf("no authentication_failed event for the wrong password: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := sc.SecureRoundTrip(ctx, cfg, recs)
	r.check(err, "round trip over SASL_SSL")
	for i, rec := range recs {
		if i >= len(got) || got[i].Offset != int64(i) || got[i].Key != rec.Key || got[i].Value != rec.Value {
			r.Fatalf("consumed %v, want %v at offsets 0..9", got, recs)
		}
	}
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Reason == "SCRAM-SHA-512" && e.Detail == "User:alice"
	}); err != nil {
		r.Fatalf("no client_authenticated event for User:alice: %v", err)
	}
	r.pass("wrong password: %s", cl.Describe(werr))
}

// isAuthenticationError says whether a client's error is about failed
// authentication: each client names it its own way (kerr's
// SASL_AUTHENTICATION_FAILED, SaslAuthenticationException, librdkafka's
// _AUTHENTICATION, KafkaJSSASLAuthenticationError, ...).
func isAuthenticationError(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "authentication")
}
