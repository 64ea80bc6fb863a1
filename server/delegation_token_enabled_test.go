package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const testTokenKey = "token-secret"

// tokenCluster is a secured cluster with delegation tokens on a manual
// clock: tokens expire after an hour unless renewed, live at most three,
// and expired ones are removed every minute.
func tokenCluster(t *testing.T, cfg Config) (*Cluster, *clock.Clock) {
	clk := clock.NewManual(time.UnixMilli(1_800_000_000_000))
	cfg.Clock = clk
	cfg.DelegationTokenSecretKey = testTokenKey
	cfg.DelegationTokenExpiryTime = time.Hour
	cfg.DelegationTokenMaxLifetime = 3 * time.Hour
	cfg.DelegationTokenExpiryCheckInterval = time.Minute
	cfg.SASLUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
	return securedCluster(t, cfg), clk
}

func scramClient(t *testing.T, c *Cluster, m sasl.Mechanism) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...), kgo.SASL(m), kgo.RetryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func scramAdmin(t *testing.T, c *Cluster, m sasl.Mechanism) *kadm.Client {
	return kadm.NewClient(scramClient(t, c, m))
}

func userAdmin(t *testing.T, c *Cluster, user string) *kadm.Client {
	return scramAdmin(t, c, scram.Auth{User: user, Pass: user + "-secret"}.AsSha256Mechanism())
}

// tokenAuth is franz-go's SCRAM with the token: IsToken sends tokenauth=true.
func tokenAuth(tok kadm.DelegationToken) scram.Auth {
	return scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}
}

func tokenIDs(ts kadm.DelegationTokens) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.TokenID)
	}
	slices.Sort(ids)
	return ids
}

// TestDelegationTokenLifecycleFranzGo: alice creates a token that bob may
// renew; a client logs in with it over SCRAM-SHA-256 and -512 as alice;
// renewals extend it on the cluster clock, it expires, and an expired or
// expired-by-request token no longer logs in nor is listed.
func TestDelegationTokenLifecycleFranzGo(t *testing.T) {
	c, clk := tokenCluster(t, Config{Brokers: 3})
	ctx := testContext(t)
	alice, bob, carol := userAdmin(t, c, "alice"), userAdmin(t, c, "bob"), userAdmin(t, c, "carol")
	t0 := clk.Now()

	tok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte(testTokenKey))
	mac.Write([]byte(tok.TokenID))
	if len(tok.TokenID) != 22 || !hmac.Equal(tok.HMAC, mac.Sum(nil)) {
		t.Fatalf("token id %q hmac %x: want a 22-character id and HmacSHA512(key, id)", tok.TokenID, tok.HMAC)
	}
	if tok.Owner != (kadm.Principal{Type: "User", Name: "alice"}) || tok.TokenRequesterPrincipal != tok.Owner ||
		!tok.IssueTimestamp.Equal(t0) || !tok.ExpiryTimestamp.Equal(t0.Add(time.Hour)) || !tok.MaxTimestamp.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("token %+v, want alice's issued now, expiring in 1h, max 3h", tok)
	}

	// Log in with the token: the principal is its owner.
	for name, m := range map[string]sasl.Mechanism{
		"SCRAM-SHA-256": tokenAuth(tok).AsSha256Mechanism(),
		"SCRAM-SHA-512": tokenAuth(tok).AsSha512Mechanism(),
	} {
		if err := roundTrip(t, c, "dt-"+name, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...), kgo.SASL(m)); err != nil {
			t.Fatalf("%s with the token: %v", name, err)
		}
		waitAuthenticated(t, c, name, "User:alice")
	}
	// The token's password is its HMAC, not alice's password; without
	// tokenauth the token id is no user.
	wrong := tokenAuth(tok)
	wrong.Pass = "alice-secret"
	noExt := tokenAuth(tok)
	noExt.IsToken = false
	for name, a := range map[string]scram.Auth{"wrong password": wrong, "no tokenauth": noExt} {
		if _, err := scramAdmin(t, c, a.AsSha256Mechanism()).ListBrokers(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}

	// A token-authenticated connection may not manage tokens.
	viaToken := scramAdmin(t, c, tokenAuth(tok).AsSha512Mechanism())
	if _, err := viaToken.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Errorf("create over a token login: %v", err)
	}
	if _, err := viaToken.RenewDelegationToken(ctx, tok.HMAC, 0); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Errorf("renew over a token login: %v", err)
	}
	if _, err := viaToken.DescribeDelegationTokens(ctx); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Errorf("describe over a token login: %v", err)
	}

	// Renew: the owner and the renewer, not a stranger; the period is
	// capped by delegation.token.expiry.time.ms.
	if _, err := carol.RenewDelegationToken(ctx, tok.HMAC, 0); !errors.Is(err, kerr.DelegationTokenOwnerMismatch) {
		t.Errorf("carol renews: %v, want DELEGATION_TOKEN_OWNER_MISMATCH", err)
	}
	if _, err := carol.ExpireDelegationToken(ctx, tok.HMAC, -1); !errors.Is(err, kerr.DelegationTokenOwnerMismatch) {
		t.Errorf("carol expires: %v, want DELEGATION_TOKEN_OWNER_MISMATCH", err)
	}
	if _, err := alice.RenewDelegationToken(ctx, []byte("no such hmac"), 0); !errors.Is(err, kerr.DelegationTokenNotFound) {
		t.Errorf("unknown hmac: %v, want DELEGATION_TOKEN_NOT_FOUND", err)
	}
	clk.Advance(50 * time.Minute)
	if exp, err := bob.RenewDelegationToken(ctx, tok.HMAC, 30*time.Minute); err != nil || !exp.Equal(t0.Add(80*time.Minute)) {
		t.Fatalf("bob renews for 30m at +50m: %v %v, want +80m", exp, err)
	}
	clk.Advance(20 * time.Minute) // +70m: past the first expiry, within the renewed one
	if exp, err := alice.RenewDelegationToken(ctx, tok.HMAC, 5*time.Hour); err != nil || !exp.Equal(t0.Add(130*time.Minute)) {
		t.Fatalf("alice renews for 5h at +70m: %v %v, want +130m (one expiry time)", exp, err)
	}
	if err := roundTrip(t, c, "dt-renewed", kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...),
		kgo.SASL(tokenAuth(tok).AsSha512Mechanism())); err != nil {
		t.Fatalf("login after renewals: %v", err)
	}
	ds, err := bob.DescribeDelegationTokens(ctx)
	if err != nil || len(ds) != 1 || !ds[0].ExpiryTimestamp.Equal(t0.Add(130*time.Minute)) || !hmac.Equal(ds[0].HMAC, tok.HMAC) ||
		!slices.Equal(ds[0].Renewers, []kadm.Principal{{Type: "User", Name: "bob"}}) {
		t.Fatalf("bob (renewer) describes %+v %v", ds, err)
	}
	// Without the authorizer every check passes, so carol sees it too
	// (Kafka 4.4 without an authorizer does the same).
	if ds, err := carol.DescribeDelegationTokens(ctx); err != nil || len(ds) != 1 {
		t.Fatalf("carol without an authorizer describes %+v %v", ds, err)
	}

	// Past its expiry, the periodic check removes it: not listed, no login,
	// not renewable; each change was an event.
	clk.Advance(62 * time.Minute) // +132m
	for _, reason := range []string{"created", "renewed", "removed"} {
		if _, err := c.WaitFor(ctx, func(e Event) bool {
			return e.Type == EventDelegationTokenChanged && e.Reason == reason && strings.HasPrefix(e.Detail, "token "+tok.TokenID+" of User:alice")
		}); err != nil {
			t.Fatalf("no delegation_token_changed event %s: %v", reason, err)
		}
	}
	if ds, err := alice.DescribeDelegationTokens(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("after expiry alice describes %+v %v, want none", ds, err)
	}
	if _, err := scramAdmin(t, c, tokenAuth(tok).AsSha256Mechanism()).ListBrokers(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("login with an expired token: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	if _, err := alice.RenewDelegationToken(ctx, tok.HMAC, 0); !errors.Is(err, kerr.DelegationTokenNotFound) {
		t.Fatalf("renew a removed token: %v", err)
	}

	// Expire ends a token at once (a negative period: kadm takes a
	// Duration, and -1 ns is 0 ms); a positive period sets its expiry.
	tok2, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{MaxLifetime: 30 * time.Minute})
	if err != nil || !tok2.ExpiryTimestamp.Equal(tok2.IssueTimestamp.Add(30*time.Minute)) || !tok2.MaxTimestamp.Equal(tok2.ExpiryTimestamp) {
		t.Fatalf("token with max lifetime 30m: %+v %v", tok2, err)
	}
	if exp, err := alice.ExpireDelegationToken(ctx, tok2.HMAC, time.Minute); err != nil || !exp.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("expire in 1m: %v %v", exp, err)
	}
	now := clk.Now()
	if exp, err := alice.ExpireDelegationToken(ctx, tok2.HMAC, -time.Millisecond); err != nil || !exp.Equal(now) {
		t.Fatalf("expire now: %v %v, want %v", exp, err, now)
	}
	if _, err := scramAdmin(t, c, tokenAuth(tok2).AsSha512Mechanism()).ListBrokers(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("login with an expired-by-request token: %v", err)
	}
	if _, err := alice.ExpireDelegationToken(ctx, tok2.HMAC, -time.Millisecond); !errors.Is(err, kerr.DelegationTokenNotFound) {
		t.Fatalf("expire twice: %v", err)
	}
}

// TestDelegationTokenDescribeACLs: with the authorizer, a principal sees
// the tokens it owns, requested or renews, and others' only with
// DESCRIBE_TOKENS on their owner (or DESCRIBE on the token); a token for
// another owner needs CREATE_TOKENS on it.
func TestDelegationTokenDescribeACLs(t *testing.T) {
	c, _ := tokenCluster(t, Config{Brokers: 1, Authorizer: true})
	ctx := testContext(t)
	alice, bob, carol := userAdmin(t, c, "alice"), userAdmin(t, c, "bob"), userAdmin(t, c, "carol")
	acl := func(principal string, op authorizer.Operation, rt authorizer.ResourceType, name string) {
		t.Helper()
		if err := c.CreateACLs(authorizer.ACL{ResourceType: rt, Name: name, Pattern: authorizer.PatternLiteral,
			Principal: principal, Host: "*", Operation: op, Permission: authorizer.PermissionAllow}); err != nil {
			t.Fatal(err)
		}
	}
	ta, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Name: "bob"}}); !errors.Is(err, kerr.DelegationTokenAuthorizationFailed) {
		t.Fatalf("alice creates bob's token without CREATE_TOKENS: %v", err)
	}
	acl("User:alice", authorizer.OpCreateTokens, authorizer.ResourceUser, "User:bob")
	tb, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Name: "bob"}})
	if err != nil || tb.Owner.Name != "bob" || tb.TokenRequesterPrincipal.Name != "alice" {
		t.Fatalf("alice creates bob's token with CREATE_TOKENS: %+v %v", tb, err)
	}
	tc, err := carol.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}

	describe := func(who *kadm.Client, owners ...kadm.Principal) []string {
		t.Helper()
		ds, err := who.DescribeDelegationTokens(ctx, owners...)
		if err != nil {
			t.Fatal(err)
		}
		return tokenIDs(ds)
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	if got := describe(alice); !slices.Equal(got, sorted(ta.TokenID, tb.TokenID)) {
		t.Errorf("alice sees %v, want her own and the one she requested", got)
	}
	if got := describe(bob); !slices.Equal(got, []string{tb.TokenID}) {
		t.Errorf("bob sees %v, want his own only", got)
	}
	if got := describe(carol); !slices.Equal(got, []string{tc.TokenID}) {
		t.Errorf("carol sees %v before any ACL", got)
	}
	acl("User:carol", authorizer.OpDescribeTokens, authorizer.ResourceUser, "User:alice")
	if got := describe(carol); !slices.Equal(got, sorted(ta.TokenID, tc.TokenID)) {
		t.Errorf("carol with DESCRIBE_TOKENS on alice sees %v", got)
	}
	acl("User:carol", authorizer.OpDescribe, authorizer.ResourceDelegationToken, tb.TokenID)
	if got := describe(carol); !slices.Equal(got, sorted(ta.TokenID, tb.TokenID, tc.TokenID)) {
		t.Errorf("carol with DESCRIBE on bob's token sees %v", got)
	}
	if got := describe(carol, kadm.Principal{Type: "User", Name: "alice"}); !slices.Equal(got, sorted(ta.TokenID, tb.TokenID)) {
		t.Errorf("carol asking for alice's sees %v (alice owns one and requested the other)", got)
	}
	// An empty owner list lists nothing.
	req := kmsg.NewPtrDescribeDelegationTokenRequest()
	req.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
	resp, err := req.RequestWith(ctx, scramClient(t, c, scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism()))
	if err != nil || resp.ErrorCode != 0 || len(resp.TokenDetails) != 0 {
		t.Errorf("empty owners: %+v %v", resp, err)
	}
}

// TestDelegationTokenSessionLifetime: a token login's session ends when
// the token expires (KIP-368), counted on the cluster clock.
func TestDelegationTokenSessionLifetime(t *testing.T) {
	c, clk := tokenCluster(t, Config{Brokers: 1})
	ctx := testContext(t)
	tok, err := userAdmin(t, c, "alice").CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Minute)
	r := dialRaw(t, saslAddr(t, c))
	r.handshake(1, "SCRAM-SHA-512")
	sess, first, err := tokenAuth(tok).AsSha512Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	msg := first
	var resp *kmsg.SASLAuthenticateResponse
	for done := false; !done; {
		if resp = r.authenticate(1, string(msg)); resp.ErrorCode != 0 {
			t.Fatalf("authenticate: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		if done, msg, err = sess.Challenge(resp.SASLAuthBytes); err != nil {
			t.Fatal(err)
		}
	}
	if resp.SessionLifetimeMillis != (40 * time.Minute).Milliseconds() {
		t.Fatalf("session lifetime %d ms, want 40m: the token's expiry", resp.SessionLifetimeMillis)
	}
	r.metadata()
	clk.Advance(40 * time.Minute)
	r.send(kmsg.NewPtrMetadataRequest())
	expectClosed(t, r.nc)
}

// TestDelegationTokenLoginDisabled: without a secret key, tokenauth=true
// logs nobody in, and a SASL user's own login is unaffected.
func TestDelegationTokenLoginDisabled(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	ctx := testContext(t)
	a := scram.Auth{User: "alice", Pass: "alice-secret", IsToken: true}
	if _, err := scramAdmin(t, c, a.AsSha256Mechanism()).ListBrokers(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("tokenauth without tokens: %v", err)
	}
	if _, err := userAdmin(t, c, "alice").ListBrokers(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDelegationTokensPersisted: with a data dir, tokens survive a cluster
// restart and still log in.
func TestDelegationTokensPersisted(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Brokers: 1, DataDir: dir, DelegationTokenSecretKey: testTokenKey,
		SASLUsers: map[string]string{"alice": "alice-secret"}}
	c := securedCluster(t, cfg)
	ctx := testContext(t)
	tok, err := userAdmin(t, c, "alice").CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2 := securedCluster(t, cfg)
	ds, err := userAdmin(t, c2, "alice").DescribeDelegationTokens(ctx)
	if err != nil || len(ds) != 1 || ds[0].TokenID != tok.TokenID || !hmac.Equal(ds[0].HMAC, tok.HMAC) ||
		!ds[0].ExpiryTimestamp.Equal(tok.ExpiryTimestamp) {
		t.Fatalf("after restart: %+v %v", ds, err)
	}
	if err := roundTrip(t, c2, "dt-restart", kgo.SeedBrokers(listenerBootstrap(t, c2, "SASL_PLAINTEXT")...),
		kgo.SASL(tokenAuth(tok).AsSha256Mechanism())); err != nil {
		t.Fatalf("token login after restart: %v", err)
	}
}

// TestDelegationTokenBrokerConfigs: the token settings are Kafka's static
// broker configs: set by name they turn tokens on, and DescribeConfigs
// shows them (the key as a sensitive value).
func TestDelegationTokenBrokerConfigs(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1, BrokerConfigs: map[string]string{
		"delegation.token.secret.key": "by-name", "delegation.token.expiry.time.ms": "60000"}})
	ctx := testContext(t)
	alice := userAdmin(t, c, "alice")
	tok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil || tok.ExpiryTimestamp.Sub(tok.IssueTimestamp) != time.Minute {
		t.Fatalf("token %+v %v, want one expiring in a minute", tok, err)
	}
	mac := hmac.New(sha512.New, []byte("by-name"))
	mac.Write([]byte(tok.TokenID))
	if !hmac.Equal(tok.HMAC, mac.Sum(nil)) {
		t.Fatal("HMAC not keyed with delegation.token.secret.key")
	}
	rcs, err := alice.DescribeBrokerConfigs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := rcs.On("1", nil)
	found := 0
	for _, cfg := range key.Configs {
		switch cfg.Key {
		case "delegation.token.secret.key":
			found++
			if cfg.Value != nil || !cfg.Sensitive || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig {
				t.Errorf("secret key described %+v, want a sensitive static config without its value", cfg)
			}
		case "delegation.token.expiry.time.ms":
			found++
			if cfg.MaybeValue() != "60000" || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig {
				t.Errorf("expiry time described %+v", cfg)
			}
		case "delegation.token.max.lifetime.ms":
			found++
			if cfg.MaybeValue() != "604800000" || cfg.Source != kmsg.ConfigSourceDefaultConfig {
				t.Errorf("max lifetime described %+v", cfg)
			}
		}
	}
	if found != 3 {
		t.Errorf("%d of the 3 token configs described", found)
	}
}
