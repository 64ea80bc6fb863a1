package matrix

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/control"
	"github.com/fakekafka/fakekafka/server"
)

// oidcCluster is a cluster with a SASL_SSL listener, the built-in OAuth
// issuer with the client svc-orders, and the control API (its token
// endpoint) on loopback. expectAudience, when set, replaces the audience
// the brokers expect (the issuer's tokens say "kafka").
func oidcCluster(t *testing.T, expectAudience string, tokenLifetime time.Duration, clk ...*clock.Clock) (*server.Cluster, SecurityConfig) {
	t.Helper()
	dir := t.TempDir()
	oauth := server.OAuthConfig{Issuer: &server.OAuthIssuer{Clients: map[string]string{"svc-orders": "orders-secret"},
		TokenLifetime: tokenLifetime}}
	if expectAudience != "" {
		oauth.ExpectedAudience = []string{expectAudience}
	}
	cfg := server.Config{
		Listeners: []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_SSL", Listen: "127.0.0.1:0"}},
		TLSDir:    dir,
		OAuth:     oauth,
	}
	if len(clk) > 0 {
		cfg.Clock = clk[0]
	}
	c := server.NewTestCluster(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: control.Handler(c)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	must(t, c.CreateTopic("orders", 1, 3, nil))
	var bootstrap []string
	for _, b := range c.Listeners()[1].Brokers {
		bootstrap = append(bootstrap, b.Advertised)
	}
	return c, SecurityConfig{Bootstrap: bootstrap, CAFile: filepath.Join(dir, "ca.pem"), Mechanism: "OAUTHBEARER",
		User: "svc-orders", Password: "orders-secret", Topic: "orders", Scope: "kafka.produce",
		TokenEndpointURL: "http://" + ln.Addr().String() + "/v1/oauth/token"}
}

// oidcRoundTrip: the client's real OIDC settings (client credentials at
// the built-in issuer's token endpoint) produce and consume over SASL_SSL
// as the client id's principal; a wrong secret fails at the endpoint; a
// token the brokers do not accept (another audience) fails with the
// client's authentication error.
func oidcRoundTrip(t *testing.T, cl Client) {
	sc := cl.(SecureClient)
	c, cfg := oidcCluster(t, "", 0)
	cfg.ClientID = clientID(cl, "oidc")
	var recs []Record
	for i := range 5 {
		recs = append(recs, Record{Key: fmt.Sprint("k", i), Value: fmt.Sprint("order-", i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	got, err := sc.SecureRoundTrip(ctx, cfg, recs)
	if err != nil {
		t.Fatalf("round trip with OIDC: %v", err)
	}
	for i, rec := range recs {
		if i >= len(got) || got[i].Offset != int64(i) || got[i].Key != rec.Key || got[i].Value != rec.Value {
			t.Fatalf("consumed %v, want %v at offsets 0..4", got, recs)
		}
	}
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Reason == "OAUTHBEARER" && e.Detail == "User:svc-orders"
	}); err != nil {
		t.Fatalf("no client_authenticated event for User:svc-orders: %v", err)
	}

	wrong := cfg
	wrong.Password = "not-the-secret"
	wctx, wcancel := context.WithTimeout(context.Background(), 60*time.Second)
	_, werr := sc.SecureRoundTrip(wctx, wrong, recs[:1])
	timedOut := wctx.Err() != nil
	wcancel()
	if werr == nil || timedOut {
		t.Fatalf("wrong client secret: got %v, want the client's error", werr)
	}
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventAuthenticationFailed && e.Reason == "oauth-token-endpoint"
	}); err != nil {
		t.Fatalf("the token endpoint saw no wrong secret: %v", err)
	}

	other, ocfg := oidcCluster(t, "another-cluster", 0)
	ocfg.ClientID = cfg.ClientID
	octx, ocancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer ocancel()
	_, oerr := sc.SecureRoundTrip(octx, ocfg, recs[:1])
	if oerr == nil || !isAuthenticationError(oerr) {
		t.Fatalf("token for another audience: got %v, want the client's authentication error", oerr)
	}
	if _, err := other.WaitFor(octx, func(e server.Event) bool {
		return e.Type == server.EventAuthenticationFailed && e.Reason == "OAUTHBEARER" &&
			strings.Contains(e.Detail, "Audience (aud) claim [kafka] doesn't contain an acceptable identifier. Expected another-cluster as an aud value.")
	}); err != nil {
		t.Fatalf("no authentication_failed event naming the audience: %v", err)
	}
	t.Logf("wrong secret: %s; wrong audience: %s", cl.Describe(werr), cl.Describe(oerr))
}

// TestOIDCJava: the Java client's OAuthBearerLoginCallbackHandler with
// sasl.oauthbearer.token.endpoint.url and JAAS clientId/clientSecret.
func TestOIDCJava(t *testing.T) {
	requireJavaCell(t)
	oidcRoundTrip(t, KafkaClients)
}

// TestOIDCLibrdkafka: librdkafka (confluent-kafka-go) with
// sasl.oauthbearer.method=oidc.
func TestOIDCLibrdkafka(t *testing.T) {
	oidcRoundTrip(t, Confluent{})
}

// TestOIDCJavaReauthentication (KIP-368): with tokens of 20 s the broker
// bounds the Java consumer's session by the token's exp, and the client
// re-authenticates on its connection before the session ends, with the
// token its login refreshed at the endpoint; no connection is refused.
func TestOIDCJavaReauthentication(t *testing.T) {
	requireJavaCell(t)
	c, cfg := oidcCluster(t, "", 20*time.Second)
	cfg.ClientID = clientID(KafkaClients, "oidc-reauth")
	cc := newAdapterConfig(cfg.Bootstrap, cfg.ClientID).withSecurity(cfg)
	cc.Topic = cfg.Topic
	// The refresher's defaults (5 min buffer, 1 min minimum period) are
	// longer than the token: let it refresh at 80% of the lifetime.
	cc.Settings = map[string]string{"sasl.login.refresh.buffer.seconds": "0", "sasl.login.refresh.min.period.seconds": "0"}
	since := c.LastEventSeq()
	s, err := KafkaClients.stream("consume", cc)
	must(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.WaitForAfter(ctx, since, func(e server.Event) bool {
		return e.Type == server.EventClientReauthenticated && e.Reason == "OAUTHBEARER" && e.Detail == "User:svc-orders"
	}); err != nil {
		t.Fatalf("no re-authentication within a minute of 20 s tokens: %v", err)
	}
	for _, e := range c.Events(since) {
		if e.Type == server.EventAuthenticationFailed {
			t.Fatalf("an authentication failed: %+v", e)
		}
	}
}

// TestOIDCLibrdkafkaExpiry: librdkafka logs in with a token from the
// endpoint; the cluster's clock then passes the token's exp (and the
// skew). The broker closes the connection at its next request (the session
// ended) and refuses the token librdkafka presents again, with Kafka's
// answer; librdkafka reports the authentication error.
func TestOIDCLibrdkafkaExpiry(t *testing.T) {
	clk := clock.NewManual(time.Now())
	c, cfg := oidcCluster(t, "", 10*time.Minute, clk)
	cfg.ClientID = clientID(Confluent{}, "oidc-expiry")
	cm := confluentSecure(cfg)
	cm["acks"] = "all"
	p, err := kafka.NewProducer(&cm)
	must(t, err)
	defer p.Close()
	go func() {
		for range p.Logs() {
		}
	}()
	topic := cfg.Topic
	produce := func(v string) chan kafka.Event {
		ch := make(chan kafka.Event, 1)
		must(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(v)}, ch))
		return ch
	}
	select {
	case e := <-produce("before"):
		if err := e.(*kafka.Message).TopicPartition.Error; err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery before expiry")
	}
	since := c.LastEventSeq()
	c.AdvanceClock(11 * time.Minute) // past exp + 30 s on the cluster's clock; librdkafka's token looks fresh to it
	produce("after")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.WaitForAfter(ctx, since, func(e server.Event) bool {
		return e.Type == server.EventAuthenticationFailed && e.Reason == "OAUTHBEARER" && strings.Contains(e.Detail, "The JWT is no longer valid")
	}); err != nil {
		t.Fatalf("the expired token was not refused: %v", err)
	}
	for {
		select {
		case e := <-p.Events():
			if ke, ok := e.(kafka.Error); ok && ke.Code() == kafka.ErrAuthentication {
				t.Logf("librdkafka: %v", ke)
				return
			}
		case <-ctx.Done():
			t.Fatal("librdkafka reported no authentication error")
		}
	}
}

// TestOIDCJavaExpiry: the Java consumer's token expires on the cluster's
// clock (its own clock says it is fresh): the broker ends the session at
// its next request and refuses the token when the client logs in again;
// the consumer surfaces SaslAuthenticationException.
func TestOIDCJavaExpiry(t *testing.T) {
	requireJavaCell(t)
	clk := clock.NewManual(time.Now())
	c, cfg := oidcCluster(t, "", 10*time.Minute, clk)
	cfg.ClientID = clientID(KafkaClients, "oidc-expiry")
	cc := newAdapterConfig(cfg.Bootstrap, cfg.ClientID).withSecurity(cfg)
	cc.Topic = cfg.Topic
	s, err := KafkaClients.stream("consume", cc)
	must(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Detail == "User:svc-orders"
	}); err != nil {
		t.Fatal(err)
	}
	since := c.LastEventSeq()
	c.AdvanceClock(11 * time.Minute)
	if _, err := c.WaitForAfter(ctx, since, func(e server.Event) bool {
		return e.Type == server.EventAuthenticationFailed && e.Reason == "OAUTHBEARER" && strings.Contains(e.Detail, "The JWT is no longer valid")
	}); err != nil {
		t.Fatalf("the expired token was not refused: %v", err)
	}
	for {
		ev, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("the consumer reported no authentication error: %v", err)
		}
		if ev.Err != nil && isAuthenticationError(ev.Err) {
			t.Logf("Java: %v", ev.Err)
			return
		}
	}
}
