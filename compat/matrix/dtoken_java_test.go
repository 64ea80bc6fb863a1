package matrix

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
)

// TestMatrixJavaDelegationTokens drives delegation tokens (KIP-48) with the
// Java client over SASL_SSL: the Admin client creates, describes, renews
// and expires them, and a producer and a consumer log in with one over
// SCRAM-SHA-256 and -512 (ScramLoginModule with tokenauth="true") as its
// owner. Tokens expire on the cluster's manual clock. It runs when
// MATRIX_CLIENTS selects kafka-clients (CI's "langs" step).
func TestMatrixJavaDelegationTokens(t *testing.T) {
	requireJavaCell(t)
	dir := t.TempDir()
	// The clock starts at the wall clock's time: the clients stamp records
	// with theirs, and records a year old would be past retention.
	clk := clock.NewManual(time.Now().Truncate(time.Millisecond))
	c := server.NewTestCluster(t, server.Config{
		Clock:                              clk,
		Listeners:                          []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_SSL", Listen: "127.0.0.1:0"}},
		SASLUsers:                          map[string]string{"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"},
		TLSDir:                             dir,
		Authorizer:                         true,
		DelegationTokenSecretKey:           "matrix-token-key",
		DelegationTokenExpiryTime:          time.Hour,
		DelegationTokenMaxLifetime:         3 * time.Hour,
		DelegationTokenExpiryCheckInterval: time.Minute,
	})
	if err := c.CreateTopic("dt", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	// alice may use the topic; bob may describe alice's tokens. (With
	// allow.everyone.if.no.acl.found, as in Kafka, everyone could describe
	// every token: DESCRIBE on a DELEGATION_TOKEN no ACL names is allowed.)
	if err := c.CreateACLs(authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "dt", Pattern: authorizer.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: authorizer.OpAll, Permission: authorizer.PermissionAllow},
		authorizer.ACL{ResourceType: authorizer.ResourceUser, Name: "User:alice", Pattern: authorizer.PatternLiteral,
			Principal: "User:bob", Host: "*", Operation: authorizer.OpDescribeTokens, Permission: authorizer.PermissionAllow}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var bootstrap []string
	for _, b := range c.Listeners()[1].Brokers {
		bootstrap = append(bootstrap, b.Advertised)
	}
	as := func(user string) SecurityConfig {
		return SecurityConfig{Bootstrap: bootstrap, ClientID: "java-dtoken", CAFile: filepath.Join(dir, "ca.pem"),
			Mechanism: "SCRAM-SHA-512", User: user, Password: user + "-secret", Topic: "dt"}
	}
	call := func(sc SecurityConfig, req TokenRequest) ([]AdapterToken, int64, error) {
		t.Helper()
		return KafkaClients.DelegationToken(ctx, sc, req)
	}
	mustCall := func(sc SecurityConfig, req TokenRequest) ([]AdapterToken, int64) {
		t.Helper()
		ts, exp, err := call(sc, req)
		if err != nil {
			t.Fatalf("%s as %s: %v", req.Op, sc.User, err)
		}
		return ts, exp
	}
	refused := func(err error, name string) bool {
		var ae *AdapterError
		return errors.As(err, &ae) && ae.Name == name
	}
	t0 := clk.Now().UnixMilli()

	ts, _ := mustCall(as("alice"), TokenRequest{Op: "create", Renewers: []string{"User:bob"}, MaxLifetimeMs: -1})
	if len(ts) != 1 {
		t.Fatalf("create answered %v", ts)
	}
	tok := ts[0]
	if tok.Owner != "User:alice" || tok.Requester != "User:alice" || !slices.Equal(tok.Renewers, []string{"User:bob"}) ||
		tok.IssueMs != t0 || tok.ExpiryMs != t0+time.Hour.Milliseconds() || tok.MaxMs != t0+3*time.Hour.Milliseconds() || tok.HMAC == "" {
		t.Fatalf("token %+v, want alice's, renewable by bob, issued now, expiring in 1h, max 3h", tok)
	}

	// A Java producer and consumer log in with the token, as alice.
	viaToken := func(mech string) SecurityConfig {
		sc := as("")
		sc.Mechanism, sc.User, sc.Password, sc.TokenAuth = mech, tok.TokenID, tok.HMAC, true
		return sc
	}
	var offset int64
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		rec := Record{Key: mech, Value: "via-token-" + mech}
		got, err := KafkaClients.SecureRoundTrip(ctx, viaToken(mech), []Record{rec})
		if err != nil {
			t.Fatalf("%s round trip with the token: %v", mech, err)
		}
		if len(got) == 0 || got[len(got)-1].Value == "" {
			t.Fatalf("%s: consumed %v", mech, got)
		}
		offset++
		if _, err := c.WaitFor(ctx, func(e server.Event) bool {
			return e.Type == server.EventClientAuthenticated && e.Reason == mech && e.Detail == "User:alice"
		}); err != nil {
			t.Fatalf("no client_authenticated event for the token over %s: %v", mech, err)
		}
	}
	// franz-go's SCRAM with IsToken over the same SASL_SSL listener.
	if _, err := (FranzGo{}).SecureRoundTrip(ctx, viaToken("SCRAM-SHA-512"), []Record{{Key: "franz-go", Value: "via-token"}}); err != nil {
		t.Fatalf("franz-go with the token: %v", err)
	}
	offset++
	if st, ok := c.Partition("dt", 0); !ok || st.HighWatermark != offset {
		t.Fatalf("high watermark %+v, want %d", st, offset)
	}
	// Over a token login, the Admin client may not manage tokens.
	if _, _, err := call(viaToken("SCRAM-SHA-512"), TokenRequest{Op: "create", MaxLifetimeMs: -1}); !refused(err, "UnsupportedByAuthenticationException") {
		t.Fatalf("create over a token login: %v, want UnsupportedByAuthenticationException (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)", err)
	}

	// Describe: the renewer and a DESCRIBE_TOKENS grant see it, a stranger not.
	if ts, _ := mustCall(as("bob"), TokenRequest{Op: "describe"}); len(ts) != 1 || ts[0].TokenID != tok.TokenID || ts[0].HMAC != tok.HMAC {
		t.Fatalf("bob describes %+v", ts)
	}
	if ts, _ := mustCall(as("carol"), TokenRequest{Op: "describe"}); len(ts) != 0 {
		t.Fatalf("carol describes %+v, want none", ts)
	}
	if ts, _ := mustCall(as("bob"), TokenRequest{Op: "describe", Owners: []string{"User:carol"}}); len(ts) != 0 {
		t.Fatalf("bob asks for carol's: %+v, want none", ts)
	}

	// Renew: carol may not; bob renews for 30 minutes at +50m.
	if _, _, err := call(as("carol"), TokenRequest{Op: "renew", HMAC: tok.HMAC, PeriodMs: -1}); !refused(err, "DelegationTokenOwnerMismatchException") {
		t.Fatalf("carol renews: %v", err)
	}
	clk.Advance(50 * time.Minute)
	if _, exp := mustCall(as("bob"), TokenRequest{Op: "renew", HMAC: tok.HMAC, PeriodMs: (30 * time.Minute).Milliseconds()}); exp != t0+(80*time.Minute).Milliseconds() {
		t.Fatalf("renewed to %d, want +80m", exp-t0)
	}
	clk.Advance(20 * time.Minute) // +70m: alive only thanks to the renewal
	if _, err := KafkaClients.SecureRoundTrip(ctx, viaToken("SCRAM-SHA-512"), []Record{{Key: "k", Value: "after-renewal"}}); err != nil {
		t.Fatalf("round trip after the renewal: %v", err)
	}

	// Past its expiry the token is removed: not listed, and no login.
	clk.Advance(12 * time.Minute) // +82m
	if ts, _ := mustCall(as("alice"), TokenRequest{Op: "describe"}); len(ts) != 0 {
		t.Fatalf("alice describes %+v after expiry, want none", ts)
	}
	lctx, lcancel := context.WithTimeout(ctx, time.Minute)
	_, err := KafkaClients.SecureRoundTrip(lctx, viaToken("SCRAM-SHA-256"), []Record{{Key: "k", Value: "expired"}})
	lcancel()
	if err == nil || !isAuthenticationError(err) {
		t.Fatalf("login with an expired token: %v, want the client's authentication error", err)
	}

	// Expire with the client's default period (-1) ends a token at once.
	ts, _ = mustCall(as("alice"), TokenRequest{Op: "create", MaxLifetimeMs: (10 * time.Minute).Milliseconds()})
	tok2 := ts[0]
	if tok2.MaxMs != clk.Now().UnixMilli()+(10*time.Minute).Milliseconds() || tok2.ExpiryMs != tok2.MaxMs {
		t.Fatalf("token with a 10 minute max lifetime: %+v", tok2)
	}
	if _, exp := mustCall(as("alice"), TokenRequest{Op: "expire", HMAC: tok2.HMAC, PeriodMs: -1}); exp != clk.Now().UnixMilli() {
		t.Fatalf("expired at %d, want now (%d)", exp, clk.Now().UnixMilli())
	}
	if _, _, err := call(as("alice"), TokenRequest{Op: "renew", HMAC: tok2.HMAC, PeriodMs: -1}); !refused(err, "DelegationTokenNotFoundException") {
		t.Fatalf("renew an expired token: %v", err)
	}
}
