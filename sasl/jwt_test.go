package sasl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type testKeys struct {
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	ec384   *ecdsa.PrivateKey
	ed      ed25519.PrivateKey
	rsa1024 *rsa.PrivateKey
}

var keysOnce = func() func(t *testing.T) testKeys {
	var k *testKeys
	return func(t *testing.T) testKeys {
		if k != nil {
			return *k
		}
		r, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		small, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		e384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		k = &testKeys{rsa: r, ec: e, ec384: e384, ed: ed, rsa1024: small}
		return *k
	}
}()

// jwks is the keys' public halves as a JWKS document, parsed back.
func (k testKeys) jwks(t *testing.T) []JWK {
	doc, err := MarshalJWKS([]JWK{
		{KeyID: "rsa-1", Use: "sig", Algorithm: "RS256", Key: k.rsa.Public()},
		{KeyID: "ec-1", Use: "sig", Key: k.ec.Public()},
		{KeyID: "ec384-1", Key: k.ec384.Public()},
		{KeyID: "ed-1", Use: "sig", Key: k.ed.Public()},
		{KeyID: "rsa-small", Key: k.rsa1024.Public()},
	})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 5 {
		t.Fatalf("parsed %d keys, want 5", len(keys))
	}
	return keys
}

func goodClaims() map[string]any {
	return map[string]any{"sub": "alice", "iss": "https://issuer.test", "aud": "kafka",
		"iat": t0.Add(-time.Minute).Unix(), "exp": t0.Add(time.Hour).Unix(), "scope": "read write"}
}

func sign(t *testing.T, claims map[string]any, alg, kid string, key crypto.Signer) string {
	t.Helper()
	tok, err := SignJWT(claims, alg, kid, key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func validator() *JWTValidator {
	return &JWTValidator{ExpectedAudience: []string{"kafka"}, ExpectedIssuer: "https://issuer.test", ClockSkew: 30 * time.Second}
}

func TestJWTValidatesEachAlgorithm(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	cases := []struct {
		alg, kid string
		key      crypto.Signer
	}{
		{"RS256", "rsa-1", k.rsa},
		{"RS256", "", k.rsa}, // no kid: every RSA key is tried
		{"ES256", "ec-1", k.ec},
		{"ES256", "", k.ec},
		{"ES384", "ec384-1", k.ec384},
		{"EdDSA", "ed-1", k.ed},
	}
	for _, c := range cases {
		tok, err := validator().Validate(sign(t, goodClaims(), c.alg, c.kid, c.key), keys, t0)
		if err != nil {
			t.Fatalf("%s kid %q: %v", c.alg, c.kid, err)
		}
		if tok.Subject != "alice" || !tok.Expiry.Equal(t0.Add(time.Hour)) || !tok.IssuedAt.Equal(t0.Add(-time.Minute)) ||
			!slices.Equal(tok.Scopes, []string{"read write"}) {
			t.Fatalf("%s: token %+v", c.alg, tok)
		}
	}
	// PS256 with a key bound to no alg verifies too.
	pssKeys := []JWK{{KeyID: "p", Key: k.rsa.Public()}}
	if _, err := validator().Validate(sign(t, goodClaims(), "PS256", "p", k.rsa), pssKeys, t0); err != nil {
		t.Fatalf("PS256: %v", err)
	}
}

func tokenError(t *testing.T, err error, want string) {
	t.Helper()
	var te *TokenError
	if !errors.As(err, &te) {
		t.Fatalf("err %v (%T), want a TokenError", err, err)
	}
	if te.Message != want {
		t.Fatalf("message\n %q\nwant\n %q", te.Message, want)
	}
}

// nd is jose4j's NumericDate in messages.
func nd(secs int64) string { return numericDateString(secs) }

func TestJWTRefusals(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	with := func(f func(m map[string]any)) map[string]any { m := goodClaims(); f(m); return m }
	const prefix = "Could not validate the access token: JWT rejected due to invalid claims or other invalid content. Additional details: ["
	exp := t0.Add(time.Hour).Unix()
	if got := nd(exp); got != "NumericDate{1772370000 -> March 1, 2026, 1:00:00 PM UTC}" {
		t.Fatalf("NumericDate %s", got)
	}
	cases := []struct {
		name   string
		claims map[string]any
		v      *JWTValidator
		now    time.Time
		want   string
	}{
		{"wrong audience", with(func(m map[string]any) { m["aud"] = []string{"other", "x"} }), validator(), t0,
			prefix + "Audience (aud) claim [other, x] doesn't contain an acceptable identifier. Expected kafka as an aud value.]"},
		{"no audience", with(func(m map[string]any) { delete(m, "aud") }), validator(), t0, prefix + "No Audience (aud) claim present.]"},
		{"audience when none expected", goodClaims(), &JWTValidator{}, t0,
			prefix + "Audience (aud) claim [kafka] present in the JWT but no expected audience value(s) were provided to the JWT Consumer. Expected one of [] as an aud value.]"},
		{"wrong issuer", with(func(m map[string]any) { m["iss"] = "evil" }), validator(), t0,
			prefix + "Issuer (iss) claim value (evil) doesn't match expected value of https://issuer.test]"},
		{"no issuer", with(func(m map[string]any) { delete(m, "iss") }), validator(), t0,
			prefix + "No Issuer (iss) claim present but was expecting https://issuer.test]"},
		{"issuer and audience both wrong", with(func(m map[string]any) { m["iss"], m["aud"] = "evil", "x" }), validator(), t0,
			prefix + "Audience (aud) claim [x] doesn't contain an acceptable identifier. Expected kafka as an aud value., Issuer (iss) claim value (evil) doesn't match expected value of https://issuer.test]"},
		{"expired beyond the skew", goodClaims(), validator(), t0.Add(time.Hour + 30*time.Second), fmt.Sprintf(prefix+
			"The JWT is no longer valid - the evaluation time %s is on or after the Expiration Time (exp=%s) claim value (even when providing 30 seconds of leeway to account for clock skew).]", nd(t0.Add(time.Hour+30*time.Second).Unix()), nd(exp))},
		{"expired without skew", goodClaims(), &JWTValidator{ExpectedAudience: []string{"kafka"}}, t0.Add(time.Hour), fmt.Sprintf(prefix+
			"The JWT is no longer valid - the evaluation time %s is on or after the Expiration Time (exp=%s) claim value.]", nd(exp), nd(exp))},
		{"not yet valid", with(func(m map[string]any) { m["nbf"] = t0.Add(31 * time.Second).Unix() }), validator(), t0, fmt.Sprintf(prefix+
			"The JWT is not yet valid as the evaluation time %s is before the Not Before (nbf=%s) claim time (even when providing 30 seconds of leeway to account for clock skew).]", nd(t0.Unix()), nd(t0.Add(31*time.Second).Unix()))},
		{"no exp", with(func(m map[string]any) { delete(m, "exp") }), validator(), t0, prefix + "No Expiration Time (exp) claim present.]"},
		{"no iat", with(func(m map[string]any) { delete(m, "iat") }), validator(), t0, prefix + "No Issued At (iat) claim present.]"},
		{"exp before iat", with(func(m map[string]any) { m["iat"] = t0.Add(2 * time.Hour).Unix() }), validator(), t0, fmt.Sprintf(prefix+
			"The Expiration Time (exp=%s) claim value cannot be before the Issued At (iat=%s) claim value.]", nd(exp), nd(t0.Add(2*time.Hour).Unix()))},
		{"exp a string", with(func(m map[string]any) { m["exp"] = "soon" }), validator(), t0, prefix + "The value of the 'exp' claim is not the expected type (soon - not a number)]"},
		{"no sub", with(func(m map[string]any) { delete(m, "sub") }), validator(), t0, "sub value must be non-null"},
		{"blank sub", with(func(m map[string]any) { m["sub"] = "  " }), validator(), t0, "sub value must not contain only whitespace"},
		{"sub a number", with(func(m map[string]any) { m["sub"] = 7 }), validator(), t0, "Could not extract the 'sub' claim from the access token"},
		{"duplicate scopes", with(func(m map[string]any) { m["scope"] = []string{"a", " a"} }), validator(), t0, "scope value must not contain duplicates - a already present"},
		{"empty scope", with(func(m map[string]any) { m["scope"] = []string{""} }), validator(), t0, "scope value must be non-empty"},
		{"audience unverified, issuer still checked", with(func(m map[string]any) { m["aud"], m["iss"] = "x", "evil" }),
			&JWTValidator{AllowUnverifiedAudience: true, ExpectedIssuer: "https://issuer.test"}, t0,
			prefix + "Issuer (iss) claim value (evil) doesn't match expected value of https://issuer.test]"},
		{"custom sub claim missing", goodClaims(), &JWTValidator{ExpectedAudience: []string{"kafka"}, SubClaimName: "client_id"}, t0, "client_id value must be non-null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.v.Validate(sign(t, c.claims, "RS256", "rsa-1", k.rsa), keys, c.now)
			tokenError(t, err, c.want)
		})
	}
}

func TestJWTTimesAtTheirEdges(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	tok := sign(t, goodClaims(), "ES256", "ec-1", k.ec)
	// Valid up to the second before exp+skew; nbf up to skew ahead.
	if _, err := validator().Validate(tok, keys, t0.Add(time.Hour+29*time.Second)); err != nil {
		t.Fatalf("inside the skew: %v", err)
	}
	nbf := goodClaims()
	nbf["nbf"] = t0.Add(30 * time.Second).Unix()
	if _, err := validator().Validate(sign(t, nbf, "ES256", "ec-1", k.ec), keys, t0); err != nil {
		t.Fatalf("nbf within the skew: %v", err)
	}
	// iat in the future is not checked (jose4j's default).
	future := goodClaims()
	future["iat"] = t0.Add(10 * time.Minute).Unix()
	if _, err := validator().Validate(sign(t, future, "ES256", "ec-1", k.ec), keys, t0); err != nil {
		t.Fatalf("iat ahead: %v", err)
	}
	// A scope list holding a number: Kafka closes the connection unanswered.
	odd := goodClaims()
	odd["scope"] = []any{"a", 7}
	_, err := validator().Validate(sign(t, odd, "ES256", "ec-1", k.ec), keys, t0)
	var f *Failure
	if !errors.As(err, &f) || !f.NoAnswer {
		t.Fatalf("scope list with a number: %v", err)
	}
	// Audience unverified: any aud, or none, passes.
	anyAud := goodClaims()
	anyAud["aud"] = []string{"x", "y"}
	if _, err := (&JWTValidator{AllowUnverifiedAudience: true}).Validate(sign(t, anyAud, "ES256", "ec-1", k.ec), keys, t0); err != nil {
		t.Fatalf("unverified audience: %v", err)
	}
	// The custom claim names are read.
	custom := goodClaims()
	custom["client_id"], custom["scp"] = "svc", []string{"b", "a"}
	v := validator()
	v.SubClaimName, v.ScopeClaimName = "client_id", "scp"
	got, err := v.Validate(sign(t, custom, "ES256", "ec-1", k.ec), keys, t0)
	if err != nil || got.Subject != "svc" || !slices.Equal(got.Scopes, []string{"a", "b"}) {
		t.Fatalf("custom claims: %+v %v", got, err)
	}
}

func TestJWTKeysAndSignatures(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	v := validator()
	good := sign(t, goodClaims(), "RS256", "rsa-1", k.rsa)

	// Unknown kid: a KeyError naming it.
	_, err := v.Validate(sign(t, goodClaims(), "RS256", "rsa-2", k.rsa), keys, t0)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.KeyID != "rsa-2" || !strings.Contains(err.Error(), `"kid":"rsa-2"`) {
		t.Fatalf("unknown kid: %v", err)
	}
	// A key published for RS256 verifies PS256 too, as in Kafka 4.4; one
	// meant for encryption verifies nothing; an ES256 token may not name an RSA kid.
	if _, err := v.Validate(sign(t, goodClaims(), "PS256", "rsa-1", k.rsa), keys, t0); err != nil {
		t.Fatalf("PS256 with a key published as RS256: %v", err)
	}
	enc := []JWK{{KeyID: "e", Use: "enc", Key: k.ec.Public()}}
	if _, err := v.Validate(sign(t, goodClaims(), "ES256", "e", k.ec), enc, t0); !errors.As(err, &ke) {
		t.Fatalf("encryption key: %v", err)
	}
	if _, err := v.Validate(sign(t, goodClaims(), "ES256", "rsa-1", k.ec), keys, t0); !errors.As(err, &ke) {
		t.Fatalf("wrong key type: %v", err)
	}
	// Bad signature: a payload changed after signing, or another key's signature.
	parts := strings.Split(good, ".")
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin","aud":"kafka","iss":"https://issuer.test","iat":1,"exp":9999999999}`)) + "." + parts[2]
	_, err = v.Validate(forged, keys, t0)
	tokenError(t, err, "Could not validate the access token: JWS signature is invalid: crypto/rsa: verification error")
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, err = v.Validate(sign(t, goodClaims(), "ES256", "ec-1", other), keys, t0)
	tokenError(t, err, "Could not validate the access token: JWS signature is invalid: signature mismatch")
	// RSA keys under 2048 bits are refused, as jose4j refuses them.
	_, err = v.Validate(sign(t, goodClaims(), "RS256", "rsa-small", k.rsa1024), keys, t0)
	tokenError(t, err, "Could not validate the access token: JWS signature is invalid: an RSA key of size 1024 bits is too small: 2048 bits or larger must be used with the RSA algorithms")
	// alg none and unknown algorithms.
	_, err = v.Validate(unsigned(`{"alg":"none"}`, "x"), keys, t0)
	tokenError(t, err, "Could not validate the access token: 'none' is a blocked algorithm for this context.")
	_, err = v.Validate(unsigned(`{"alg":"HS256"}`, "x"), keys, t0)
	tokenError(t, err, `Could not validate the access token: "HS256" is an unknown, unsupported or unavailable alg algorithm.`)
	// Malformed serializations.
	_, err = v.Validate("a.b", keys, t0)
	tokenError(t, err, "Malformed JWT provided; expected three sections (header, payload, and signature), but 2 sections provided")
	_, err = v.Validate(parts[0]+"."+parts[1]+".", keys, t0)
	tokenError(t, err, "Malformed JWT provided; expected at least a signature section")
}

func unsigned(header, sig string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(header)) + "." + e([]byte(`{"sub":"a"}`)) + "." + e([]byte(sig))
}

func TestParseJWKS(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	if keys[0].KeyID != "rsa-1" || keys[0].Algorithm != "RS256" || keys[0].Use != "sig" {
		t.Fatalf("first key %+v", keys[0])
	}
	// Symmetric and unknown-curve keys are skipped; malformed known ones fail.
	got, err := ParseJWKS([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kty":"EC","crv":"secp256k1","x":"AA","y":"AA"}]}`))
	if err != nil || len(got) != 0 {
		t.Fatalf("skipped keys: %v %v", got, err)
	}
	for _, doc := range []string{`{}`, `{"keys":[{"kty":"RSA","n":"","e":"AQAB"}]}`, `{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}`, `not json`} {
		if _, err := ParseJWKS([]byte(doc)); err == nil {
			t.Fatalf("%s parsed", doc)
		}
	}
}

// The exchange refuses a token the validator refuses with the invalid_token
// challenge, then fails with it; the reason is kept for the broker's log.
func TestOAuthBearerSignedExchange(t *testing.T) {
	k := keysOnce(t)
	keys := k.jwks(t)
	validate := func(tok string) (Token, error) { return validator().Validate(tok, keys, t0) }
	x := NewOAuthBearer(validate)
	msg := "n,,\x01auth=Bearer " + sign(t, goodClaims(), "RS256", "rsa-1", k.rsa) + "\x01\x01"
	if reply, done, err := x.Step([]byte(msg)); err != nil || !done || len(reply) != 0 {
		t.Fatalf("good token: %q %v %v", reply, done, err)
	}
	if x.Principal() != "User:alice" || !x.Expiry().Equal(t0.Add(time.Hour)) {
		t.Fatalf("principal %q expiry %v", x.Principal(), x.Expiry())
	}
	bad := goodClaims()
	bad["aud"] = "other"
	x = NewOAuthBearer(validate)
	reply, done, err := x.Step([]byte("n,,\x01auth=Bearer " + sign(t, bad, "RS256", "rsa-1", k.rsa) + "\x01\x01"))
	if err != nil || done || string(reply) != `{"status":"invalid_token"}` {
		t.Fatalf("bad token: %q %v %v", reply, done, err)
	}
	_, _, err = x.Step([]byte{1})
	var f *Failure
	if !errors.As(err, &f) || f.Message != `{"status":"invalid_token"}` || !strings.Contains(f.Reason, "Audience (aud) claim [other]") {
		t.Fatalf("failure %+v", err)
	}
}
