package server

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// listenerBootstrap is every broker's advertised address on listener name.
func listenerBootstrap(t testing.TB, c *Cluster, name string) []string {
	t.Helper()
	for _, l := range c.Listeners() {
		if l.Name == name {
			var out []string
			for _, b := range l.Brokers {
				out = append(out, b.Advertised)
			}
			return out
		}
	}
	t.Fatalf("no listener %s", name)
	return nil
}

// securedCluster has a PLAINTEXT, an SSL, a SASL_PLAINTEXT and a SASL_SSL
// listener and the users alice and bob.
func securedCluster(t testing.TB, cfg Config) *Cluster {
	cfg.Listeners = []Listener{
		{Name: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SSL", Listen: "127.0.0.1:0"},
		{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SASL_SSL", Listen: "127.0.0.1:0"},
	}
	if cfg.SASLUsers == nil {
		cfg.SASLUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}
	}
	return NewTestCluster(t, cfg)
}

// unsecuredJWS is a token Kafka's unsecured validator accepts.
func unsecuredJWS(sub string, exp time.Time) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"none"}`)) + "." + e([]byte(fmt.Sprintf(`{"sub":%q,"exp":%d,"iat":%d}`, sub, exp.Unix(), time.Now().Unix()-1))) + "."
}

// unsecuredJWSAt is a token without "iat", for a cluster on a manual clock.
func unsecuredJWSAt(sub string, exp time.Time) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"none"}`)) + "." + e([]byte(fmt.Sprintf(`{"sub":%q,"exp":%d}`, sub, exp.Unix()))) + "."
}

// roundTrip produces one record to topic and consumes it back with cl's
// options, proving the connection works end to end.
func roundTrip(t *testing.T, c *Cluster, topic string, opts ...kgo.Opt) error {
	t.Helper()
	ctx := testContext(t)
	base := append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics(topic),
		kgo.RetryTimeout(5 * time.Second)}, opts...)
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v-" + topic)}).FirstErr(); err != nil {
		return err
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		return err
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "v-"+topic || recs[0].Offset != 0 {
		t.Fatalf("consumed %v", recs)
	}
	return nil
}

func waitAuthenticated(t *testing.T, c *Cluster, mech, principal string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e Event) bool {
		return e.Type == EventClientAuthenticated && e.Reason == mech && e.Detail == principal
	}); err != nil {
		t.Fatalf("no client_authenticated event for %s %s: %v", mech, principal, err)
	}
}

func TestSASLMechanismsFranzGo(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 3})
	mechs := map[string]sasl.Mechanism{
		"PLAIN":         plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(),
		"SCRAM-SHA-256": scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism(),
		"SCRAM-SHA-512": scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism(),
		"OAUTHBEARER":   oauth.Auth{Token: unsecuredJWS("carol", time.Now().Add(time.Hour))}.AsMechanism(),
	}
	principals := map[string]string{"PLAIN": "User:alice", "SCRAM-SHA-256": "User:alice", "SCRAM-SHA-512": "User:bob", "OAUTHBEARER": "User:carol"}
	for name, m := range mechs {
		t.Run("SASL_PLAINTEXT "+name, func(t *testing.T) {
			topic := "sasl-" + strings.ToLower(name)
			if err := roundTrip(t, c, topic, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...), kgo.SASL(m)); err != nil {
				t.Fatal(err)
			}
			waitAuthenticated(t, c, name, principals[name])
		})
	}
	t.Run("SASL_SSL SCRAM-SHA-512", func(t *testing.T) {
		if err := roundTrip(t, c, "sasl-ssl", kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_SSL")...),
			kgo.DialTLSConfig(c.ClientTLSConfig()), kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("SSL", func(t *testing.T) {
		if err := roundTrip(t, c, "ssl", kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(c.ClientTLSConfig())); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSASLWrongPassword(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	for _, m := range []sasl.Mechanism{
		plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism(),
		scram.Auth{User: "alice", Pass: "wrong"}.AsSha256Mechanism(),
		scram.Auth{User: "nobody", Pass: "alice-secret"}.AsSha512Mechanism(),
		oauth.Auth{Token: unsecuredJWS("carol", time.Now().Add(-time.Minute))}.AsMechanism(),
	} {
		t.Run(m.Name(), func(t *testing.T) {
			err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...), kgo.SASL(m))
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("err %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}
	if evs := c.Events(0); !containsEvent(evs, EventAuthenticationFailed, "Authentication failed: Invalid username or password") {
		t.Fatal("no authentication_failed event for the wrong PLAIN password")
	}
}

func TestMutualTLSPrincipal(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1, TLSClientAuth: TLSClientAuthRequired})
	certPEM, keyPEM, err := c.IssueClientCert(pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	withCert := c.ClientTLSConfig()
	withCert.Certificates = []tls.Certificate{pair}
	if err := roundTrip(t, c, "mtls", kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(withCert)); err != nil {
		t.Fatal(err)
	}
	waitAuthenticated(t, c, "SSL", "User:CN=alice,OU=eng,O=acme")

	// Without a certificate the handshake fails.
	err = firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(c.ClientTLSConfig()))
	if err == nil {
		t.Fatal("a client without a certificate got through with client auth required")
	}
}

// TestSASLReauthenticationFranzGo: with a session lifetime, franz-go
// re-authenticates its connections (KIP-368) and keeps producing.
func TestSASLReauthenticationFranzGo(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1, SASLSessionLifetime: 1500 * time.Millisecond})
	if err := c.CreateTopic("reauth", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...), kgo.DefaultProduceTopic("reauth"),
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()))
	ctx := testContext(t)
	for i := 0; !hasType(c.Events(0), EventClientReauthenticated); i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("franz-go never re-authenticated")
		case <-time.After(50 * time.Millisecond): // produce pace, not synchronisation
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after re-authentication: %v", err)
	}
	if hasType(c.Events(0), EventAuthenticationFailed) {
		t.Fatal("an authentication failed")
	}
}

func hasType(evs []Event, typ EventType) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
