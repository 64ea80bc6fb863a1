package sasl

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

type users struct {
	passwords map[string]string
	scram     map[string]ScramCredential // mech/user
}

func (u users) Password(user string) (string, bool) { p, ok := u.passwords[user]; return p, ok }
func (u users) Scram(mech, user string) (ScramCredential, bool) {
	c, ok := u.scram[mech+"/"+user]
	return c, ok
}

func rfc7677Users(t *testing.T) users {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	cred, err := NewScramCredential(ScramSHA256, "pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return users{scram: map[string]ScramCredential{ScramSHA256 + "/user": cred}}
}

// The exchange of RFC 7677 section 3, byte for byte.
func TestScramSHA256RFC7677(t *testing.T) {
	x, err := New(ScramSHA256, rfc7677Users(t), "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	reply, done, err := x.Step([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil || done {
		t.Fatalf("first: done %v err %v", done, err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(reply) != want {
		t.Fatalf("server-first %q, want %q", reply, want)
	}
	reply, done, err = x.Step([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil || !done {
		t.Fatalf("final: done %v err %v", done, err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(reply) != want {
		t.Fatalf("server-final %q, want %q", reply, want)
	}
	if x.Principal() != "User:user" {
		t.Fatalf("principal %q", x.Principal())
	}
	if _, _, err := x.Step([]byte("more")); err == nil {
		t.Fatal("a step after the end succeeded")
	}
}

func failure(t *testing.T, err error, want string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err %v, want a Failure", err)
	}
	if !strings.Contains(f.Message, want) {
		t.Fatalf("message %q, want %q in it", f.Message, want)
	}
}

func TestScramFailures(t *testing.T) {
	const nonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	const full = "rOprNGfwEbeRWgbNEkqO" + nonce
	cases := []struct {
		name, first, final, want string
	}{
		{"unknown user", "n,,n=bob,r=rOprNGfwEbeRWgbNEkqO", "", "invalid credentials with SASL mechanism"},
		{"wrong proof", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=" + full + ",p=AAAAZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "invalid credentials with SASL mechanism"},
		{"nonce not extended", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "invalid credentials with SASL mechanism"},
		{"channel binding changed", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=eSws,r=" + full + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", "invalid credentials with SASL mechanism SCRAM-SHA-256"},
		{"no proof", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=" + full, "invalid credentials"},
		{"channel binding required", "p=tls-unique,,n=user,r=x", "", "invalid credentials"},
		{"other authzid", "n,a=admin,n=user,r=x", "", "authorization id that is different"},
		{"bad escape", "n,,n=us=er,r=x", "", "invalid credentials"},
		{"no nonce", "n,,n=user", "", "invalid credentials"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := New(ScramSHA256, rfc7677Users(t), nonce, time.Time{})
			_, _, err := x.Step([]byte(tc.first))
			if tc.final == "" {
				failure(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, done, err := x.Step([]byte(tc.final))
			if done {
				t.Fatal("authenticated")
			}
			failure(t, err, tc.want)
		})
	}
}

// scramClient is the client side, written from RFC 5802 for the test.
func scramClient(t *testing.T, x Exchange, mech, user, password, cnonce string) (string, error) {
	return scramClientEcho(t, x, mech, user, password, cnonce, "")
}

// scramClientEcho puts echo in front of the nonce of the final message,
// as librdkafka does with its own nonce.
func scramClientEcho(t *testing.T, x Exchange, mech, user, password, cnonce, echo string) (string, error) {
	return scramClientExt(t, x, mech, user, password, cnonce, echo, "")
}

// scramClientExt sends ext (",key=value...") after the client nonce.
func scramClientExt(t *testing.T, x Exchange, mech, user, password, cnonce, echo, ext string) (string, error) {
	first := "n,,n=" + strings.NewReplacer("=", "=3D", ",", "=2C").Replace(user) + ",r=" + cnonce + ext
	sf, _, err := x.Step([]byte(first))
	if err != nil {
		return "", err
	}
	var salt []byte
	var iter int
	var nonce string
	for _, a := range strings.Split(string(sf), ",") {
		switch a[:2] {
		case "r=":
			nonce = a[2:]
		case "s=":
			salt, _ = base64.StdEncoding.DecodeString(a[2:])
		case "i=":
			for _, d := range a[2:] {
				iter = iter*10 + int(d-'0')
			}
		}
	}
	if !strings.HasPrefix(nonce, cnonce) || len(nonce) == len(cnonce) {
		t.Fatalf("server nonce %q does not extend %q", nonce, cnonce)
	}
	salted, _ := SaltedPassword(mech, password, salt, iter)
	h, _ := hashOf(mech)
	clientKey := hmacOf(h, salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	finalNoProof := "c=biws,r=" + echo + nonce
	auth := first[3:] + "," + string(sf) + "," + finalNoProof
	sig := hmacOf(h, sum.Sum(nil), auth)
	for i := range sig {
		sig[i] ^= clientKey[i]
	}
	reply, done, err := x.Step([]byte(finalNoProof + ",p=" + base64.StdEncoding.EncodeToString(sig)))
	if err != nil {
		return "", err
	}
	if !done {
		t.Fatal("not done after the final message")
	}
	want := "v=" + base64.StdEncoding.EncodeToString(hmacOf(h, hmacOf(h, salted, "Server Key"), auth))
	if !hmac.Equal(reply, []byte(want)) {
		t.Fatalf("server signature %q, want %q", reply, want)
	}
	return x.Principal(), nil
}

func TestScramSHA512(t *testing.T) {
	cred, _ := NewScramCredential(ScramSHA512, "s3cret", []byte("0123456789abcdef"), 8192)
	u := users{scram: map[string]ScramCredential{ScramSHA512 + "/a,b=c": cred}}
	x, _ := New(ScramSHA512, u, "srvnonce", time.Time{})
	p, err := scramClient(t, x, ScramSHA512, "a,b=c", "s3cret", "clinonce")
	if err != nil || p != "User:a,b=c" {
		t.Fatalf("principal %q err %v", p, err)
	}
	// librdkafka's final message repeats its nonce: Kafka checks only
	// that the nonce ends with the server's.
	x, _ = New(ScramSHA512, u, "srvnonce", time.Time{})
	if p, err := scramClientEcho(t, x, ScramSHA512, "a,b=c", "s3cret", "clinonce", "clinonce"); err != nil || p != "User:a,b=c" {
		t.Fatalf("echoed nonce: principal %q err %v", p, err)
	}
	x, _ = New(ScramSHA512, u, "srvnonce", time.Time{})
	_, err = scramClient(t, x, ScramSHA512, "a,b=c", "wrong", "clinonce")
	failure(t, err, "invalid credentials with SASL mechanism")
	// A SHA-256 credential does not log in over SHA-512.
	x, _ = New(ScramSHA256, u, "srvnonce", time.Time{})
	_, _, err = x.Step([]byte("n,,n=a=2Cb=3Dc,r=x"))
	failure(t, err, "invalid credentials with SASL mechanism")
}

func TestPlain(t *testing.T) {
	u := users{passwords: map[string]string{"alice": "pw"}}
	cases := []struct{ token, principal, fail string }{
		{"\x00alice\x00pw", "User:alice", ""},
		{"alice\x00alice\x00pw", "User:alice", ""},
		{"\x00alice\x00wrong", "", "Invalid username or password"},
		{"\x00bob\x00pw", "", "Invalid username or password"},
		{"\x00\x00pw", "", "username not specified"},
		{"\x00alice\x00", "", "password not specified"},
		{"admin\x00alice\x00pw", "", "authorization id that is different"},
		{"alice\x00pw", "", "expected 3 tokens, got 2"},
	}
	for _, tc := range cases {
		x, _ := New(Plain, u, "", time.Time{})
		reply, done, err := x.Step([]byte(tc.token))
		if tc.fail != "" {
			failure(t, err, tc.fail)
			continue
		}
		if err != nil || !done || len(reply) != 0 || x.Principal() != tc.principal {
			t.Fatalf("%q: reply %q done %v err %v principal %q", tc.token, reply, done, err, x.Principal())
		}
	}
}

func jws(header, claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(header)) + "." + e([]byte(claims)) + "."
}

func TestOAuthBearer(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	none := `{"alg":"none"}`
	cases := []struct {
		name, msg string
		principal string
		expiry    time.Time
	}{
		{"valid", "n,,\x01auth=Bearer " + jws(none, `{"sub":"alice","exp":1700000060.5,"iat":1699999990}`) + "\x01\x01", "User:alice", time.Unix(1_700_000_060, 5e8)},
		{"extensions and authzid", "n,a=bob,\x01host=x\x01auth=Bearer " + jws(none, `{"sub":"bob","exp":1700000100}`) + "\x01\x01", "User:bob", time.Unix(1_700_000_100, 0)},
		{"expired", "n,,\x01auth=Bearer " + jws(none, `{"sub":"alice","exp":1700000000}`) + "\x01\x01", "", time.Time{}},
		{"issued in the future", "n,,\x01auth=Bearer " + jws(none, `{"sub":"alice","exp":1700000100,"iat":1700000050}`) + "\x01\x01", "", time.Time{}},
		{"signed", "n,,\x01auth=Bearer " + jws(`{"alg":"HS256"}`, `{"sub":"alice","exp":1700000100}`) + "c2ln\x01\x01", "", time.Time{}},
		{"alg not none", "n,,\x01auth=Bearer " + jws(`{"alg":"HS256"}`, `{"sub":"alice","exp":1700000100}`) + "\x01\x01", "", time.Time{}},
		{"no sub", "n,,\x01auth=Bearer " + jws(none, `{"exp":1700000100}`) + "\x01\x01", "", time.Time{}},
		{"no exp", "n,,\x01auth=Bearer " + jws(none, `{"sub":"alice"}`) + "\x01\x01", "", time.Time{}},
		{"scheme in lower case", "n,,\x01auth=bearer " + jws(none, `{"sub":"alice","exp":1700000100}`) + "\x01\x01", "User:alice", time.Unix(1_700_000_100, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := New(OAuthBearer, users{}, "", now)
			reply, done, err := x.Step([]byte(tc.msg))
			if err != nil {
				t.Fatal(err)
			}
			if tc.principal == "" {
				if done || string(reply) != `{"status":"invalid_token"}` {
					t.Fatalf("reply %q done %v, want the invalid_token challenge", reply, done)
				}
				_, done, err = x.Step([]byte{1})
				if done {
					t.Fatal("authenticated after the error challenge")
				}
				failure(t, err, `{"status":"invalid_token"}`)
				return
			}
			if !done || len(reply) != 0 || x.Principal() != tc.principal || !x.Expiry().Equal(tc.expiry) {
				t.Fatalf("reply %q done %v principal %q expiry %v", reply, done, x.Principal(), x.Expiry())
			}
		})
	}
}

// Client first messages Kafka fails at once, without the invalid_token
// challenge (checked against Kafka 4.4 by compat/reference's
// TestOAuthReference).
func TestOAuthBearerMalformed(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tok := jws(`{"alg":"none"}`, `{"sub":"alice","exp":1700000100}`)
	const generic = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
	cases := []struct {
		name, msg, want string
		noAnswer        bool
	}{
		{"other authzid", "n,a=eve,\x01auth=Bearer " + tok + "\x01\x01", "Authentication failed: Client requested an authorization id (eve) that is different from the token's principal name (alice)", false},
		{"unterminated", "n,,\x01auth=Bearer " + tok + "\x01", generic, false},
		{"no auth", "n,,\x01host=kafka\x01\x01", generic, false},
		{"garbage", "garbage", generic, false},
		{"token with a space", "n,,\x01auth=Bearer abc def\x01\x01", generic, false},
		{"bad extension key", "n,,\x01ho-st=x\x01auth=Bearer " + tok + "\x01\x01", generic, false},
		{"not bearer", "n,,\x01auth=Basic abc\x01\x01", "OAUTHBEARER scheme Basic is not Bearer", true},
	}
	for _, tc := range cases {
		x, _ := New(OAuthBearer, users{}, "", now)
		reply, done, err := x.Step([]byte(tc.msg))
		var f *Failure
		if done || reply != nil || !errors.As(err, &f) || f.Message != tc.want || f.NoAnswer != tc.noAnswer {
			t.Fatalf("%s: reply %q done %v err %+v, want %q", tc.name, reply, done, err, tc.want)
		}
	}
}

func TestUnsupportedMechanism(t *testing.T) {
	if _, err := New("GSSAPI", users{}, "", time.Time{}); !errors.Is(err, ErrUnsupportedMechanism) {
		t.Fatalf("err %v", err)
	}
}

// tokenUsers has one delegation token, "tok1", owned by alice.
type tokenUsers struct {
	users
	expiry time.Time
}

func (u tokenUsers) Token(mech, id string) (ScramCredential, string, time.Time, bool) {
	if id != "tok1" {
		return ScramCredential{}, "", time.Time{}, false
	}
	cred, _ := NewScramCredential(mech, "hmac-b64", []byte("salt"), MinIterations)
	return cred, "alice", u.expiry, true
}

// TestScramToken: tokenauth=true (any case) logs in with a delegation
// token as its owner, its expiry bounding the session; without it, or with
// an unknown id, or against a store without tokens, it fails. Token
// failures are Kafka 4.4's generic message (checked against it).
func TestScramToken(t *testing.T) {
	exp := time.UnixMilli(1_800_000_000_000)
	u := tokenUsers{expiry: exp}
	for _, ext := range []string{",tokenauth=true", ",tokenauth=TRUE", ",other=x,tokenauth=true"} {
		x, _ := New(ScramSHA512, u, "srv", time.Time{})
		p, err := scramClientExt(t, x, ScramSHA512, "tok1", "hmac-b64", "cli", "", ext)
		if err != nil || p != "User:alice" || !x.Expiry().Equal(exp) || !x.(TokenAuthenticated).TokenAuthenticated() {
			t.Fatalf("%s: principal %q err %v expiry %v", ext, p, err, x.Expiry())
		}
	}
	x, _ := New(ScramSHA256, u, "srv", time.Time{})
	_, err := scramClientExt(t, x, ScramSHA256, "tok2", "hmac-b64", "cli", "", ",tokenauth=true")
	failure(t, err, "invalid credentials with SASL mechanism SCRAM-SHA-256")
	x, _ = New(ScramSHA256, u, "srv", time.Time{})
	_, err = scramClientExt(t, x, ScramSHA256, "tok1", "wrong", "cli", "", ",tokenauth=true")
	failure(t, err, "invalid credentials with SASL mechanism SCRAM-SHA-256")
	// Without the extension the token id is a user name, and there is none.
	x, _ = New(ScramSHA256, u, "srv", time.Time{})
	_, err = scramClientExt(t, x, ScramSHA256, "tok1", "hmac-b64", "cli", "", ",tokenauth=false")
	failure(t, err, "invalid credentials with SASL mechanism")
	x, _ = New(ScramSHA256, users{}, "srv", time.Time{})
	_, err = scramClientExt(t, x, ScramSHA256, "tok1", "hmac-b64", "cli", "", ",tokenauth=true")
	failure(t, err, "invalid credentials with SASL mechanism SCRAM-SHA-256")
}
