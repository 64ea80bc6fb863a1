package delegation

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"testing"
)

const (
	day  = DefaultExpiryTimeMs
	week = DefaultMaxLifetimeMs
	t0   = int64(1_700_000_000_000)
)

func ids(ts []Token) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestHMAC: HmacSHA512 of the id keyed with the secret, as RFC 4231's
// test case 2 ("Jefe", "what do ya want for nothing?") fixes it.
func TestHMAC(t *testing.T) {
	m := New(Config{SecretKey: "Jefe"})
	want, _ := hex.DecodeString("164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
	if got := m.HMAC("what do ya want for nothing?"); !bytes.Equal(got, want) {
		t.Fatalf("HMAC %x, want %x", got, want)
	}
	tok, err := m.Create(t0, "id-1", "User:alice", "User:alice", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha512.New, []byte("Jefe"))
	mac.Write([]byte("id-1"))
	if !bytes.Equal(tok.HMAC, mac.Sum(nil)) || len(tok.HMACBase64()) != 88 {
		t.Fatalf("token HMAC %x / %q", tok.HMAC, tok.HMACBase64())
	}
}

func TestCreateTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		maxLifetime int64
		wantExpiry  int64
		wantMax     int64
	}{
		{"defaults", Config{}, 0, t0 + day, t0 + week},
		{"request shorter max", Config{}, 3600_000, t0 + 3600_000, t0 + 3600_000},
		{"request between", Config{}, 2 * day, t0 + day, t0 + 2*day},
		{"request longer is capped", Config{}, 30 * day, t0 + day, t0 + week},
		{"negative request", Config{}, -1, t0 + day, t0 + week},
		{"configured", Config{MaxLifetimeMs: 5000, ExpiryTimeMs: 2000}, 0, t0 + 2000, t0 + 5000},
		{"expiry time above max", Config{MaxLifetimeMs: 5000, ExpiryTimeMs: 9000}, 0, t0 + 5000, t0 + 5000},
		{"saturates", Config{MaxLifetimeMs: math.MaxInt64, ExpiryTimeMs: math.MaxInt64}, 0, math.MaxInt64, math.MaxInt64},
	} {
		m := New(tc.cfg)
		tok, err := m.Create(t0, "t", "User:alice", "User:bob", []string{"User:carol"}, tc.maxLifetime)
		if err != nil || tok.IssueMs != t0 || tok.ExpiryMs != tc.wantExpiry || tok.MaxMs != tc.wantMax ||
			tok.Owner != "User:alice" || tok.Requester != "User:bob" || !slices.Equal(tok.Renewers, []string{"User:carol"}) {
			t.Errorf("%s: %+v %v, want expiry %d max %d", tc.name, tok, err, tc.wantExpiry, tc.wantMax)
		}
	}
	m := New(Config{})
	if _, err := m.Create(t0, "t", "User:alice", "User:alice", []string{"User:x", "Group:g"}, 0); !errors.Is(err, ErrPrincipalType) {
		t.Fatalf("Group renewer: %v", err)
	}
	if len(m.All()) != 0 {
		t.Fatal("a refused token was stored")
	}
}

func TestRenew(t *testing.T) {
	m := New(Config{})
	tok, _ := m.Create(t0, "t", "User:alice", "User:bob", []string{"User:carol"}, 3*day)
	for _, tc := range []struct {
		name      string
		now       int64
		principal string
		mac       []byte
		period    int64
		want      int64
		err       error
	}{
		{"unknown hmac", t0, "User:alice", []byte("nope"), 0, 0, ErrNotFound},
		{"requester may not renew", t0, "User:bob", tok.HMAC, 0, 0, ErrOwnerMismatch},
		{"stranger", t0, "User:eve", tok.HMAC, 0, 0, ErrOwnerMismatch},
		{"owner, default period", t0 + 1000, "User:alice", tok.HMAC, 0, t0 + 1000 + day, nil},
		{"renewer, shorter period", t0 + 2000, "User:carol", tok.HMAC, 5000, t0 + 7000, nil},
		{"longer period capped at expiry time", t0 + 3000, "User:alice", tok.HMAC, 10 * day, t0 + 3000 + day, nil},
		{"renew again before expiry", t0 + day + 3000, "User:alice", tok.HMAC, 0, t0 + 2*day + 3000, nil},
		{"capped at max", t0 + 2*day + 3000, "User:alice", tok.HMAC, -7, t0 + 3*day, nil},
		{"at its max still renewable", t0 + 3*day, "User:alice", tok.HMAC, 0, t0 + 3*day, nil},
		{"past max: expired before ownership", t0 + 3*day + 1, "User:eve", tok.HMAC, 0, 0, ErrExpired},
	} {
		got, err := m.Renew(tc.now, tc.principal, tc.mac, tc.period)
		if got.ExpiryMs != tc.want || !errors.Is(err, tc.err) || err == nil && got.ID != "t" {
			t.Errorf("%s: %+v %v, want expiry %d %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	// Past its expiry but not its max is expired too.
	tok2, _ := m.Create(t0, "t2", "User:alice", "User:alice", nil, 0)
	if _, err := m.Renew(t0+day+1, "User:alice", tok2.HMAC, 0); !errors.Is(err, ErrExpired) {
		t.Fatalf("renew past expiry: %v", err)
	}
}

func TestExpire(t *testing.T) {
	m := New(Config{})
	tok, _ := m.Create(t0, "t", "User:alice", "User:alice", []string{"User:carol"}, 0)
	if _, err := m.Expire(t0, "User:eve", tok.HMAC, -1); !errors.Is(err, ErrOwnerMismatch) {
		t.Fatalf("stranger: %v", err)
	}
	if got, err := m.Expire(t0+10, "User:carol", tok.HMAC, 100); err != nil || got.ExpiryMs != t0+110 {
		t.Fatalf("renewer expire in 100: %+v %v", got, err)
	}
	if got, err := m.Expire(t0+20, "User:alice", tok.HMAC, 2*week); err != nil || got.ExpiryMs != t0+week {
		t.Fatalf("expire capped at max: %+v %v", got, err)
	}
	if _, err := m.Expire(t0+week+1, "User:alice", tok.HMAC, 0); !errors.Is(err, ErrExpired) {
		t.Fatalf("expire an expired token with a period: %v", err)
	}
	// A negative period removes it, expired or not, and answers now.
	if got, err := m.Expire(t0+week+2, "User:alice", tok.HMAC, -1); err != nil || got.ExpiryMs != t0+week+2 || got.ID != "t" {
		t.Fatalf("expire now: %+v %v", got, err)
	}
	if _, ok := m.Lookup("t"); ok {
		t.Fatal("still there")
	}
	if _, err := m.Expire(t0, "User:alice", tok.HMAC, -1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("twice: %v", err)
	}
	if _, err := m.Renew(t0, "User:alice", tok.HMAC, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("renew removed: %v", err)
	}
}

func TestSweep(t *testing.T) {
	m := New(Config{ExpiryTimeMs: 1000, MaxLifetimeMs: 5000})
	m.Create(t0, "a", "User:alice", "User:alice", nil, 0)
	m.Create(t0+500, "b", "User:alice", "User:alice", nil, 0)
	if gone := m.Sweep(t0 + 1000); len(gone) != 0 {
		t.Fatalf("at expiry (not past): %v", ids(gone))
	}
	if gone := m.Sweep(t0 + 1001); !slices.Equal(ids(gone), []string{"a"}) {
		t.Fatalf("swept %v, want a", ids(gone))
	}
	if got := ids(m.All()); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("left %v", got)
	}
	// Found until swept, expired or not (Kafka's cache).
	if tok, ok := m.Lookup("b"); !ok || tok.ExpiryMs != t0+1500 {
		t.Fatalf("lookup b: %+v %v", tok, ok)
	}
}

func TestDescribe(t *testing.T) {
	m := New(Config{})
	m.Create(t0, "1", "User:alice", "User:alice", nil, 0)
	m.Create(t0, "2", "User:bob", "User:admin", []string{"User:carol"}, 0)
	m.Create(t0, "3", "User:dave", "User:dave", nil, 0)
	none := func(Token) bool { return false }
	ownerDave := func(t Token) bool { return t.Owner == "User:dave" }
	for _, tc := range []struct {
		name      string
		principal string
		owners    []string
		may       func(Token) bool
		want      []string
	}{
		{"own token", "User:alice", nil, none, []string{"1"}},
		{"requester sees it", "User:admin", nil, none, []string{"2"}},
		{"renewer sees it", "User:carol", nil, none, []string{"2"}},
		{"stranger sees none", "User:eve", nil, none, nil},
		{"ACL grants dave's", "User:eve", nil, ownerDave, []string{"3"}},
		{"ACL and own", "User:alice", nil, ownerDave, []string{"1", "3"}},
		{"owners filter", "User:alice", []string{"User:dave"}, ownerDave, []string{"3"}},
		{"owners filter by renewer", "User:carol", []string{"User:carol"}, none, []string{"2"}},
		{"owners filter hides own", "User:alice", []string{"User:bob"}, none, nil},
		{"empty owners", "User:alice", []string{}, ownerDave, nil},
	} {
		if got := ids(m.Describe(tc.principal, tc.owners, tc.may)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRestore(t *testing.T) {
	a := New(Config{SecretKey: "k1"})
	tok, _ := a.Create(t0, "x", "User:alice", "User:alice", nil, 0)
	b := New(Config{SecretKey: "k1"})
	b.Restore(a.All())
	if got, ok := b.Lookup("x"); !ok || !bytes.Equal(got.HMAC, tok.HMAC) || got.ExpiryMs != tok.ExpiryMs {
		t.Fatalf("restored %+v %v", got, ok)
	}
	if _, err := b.Renew(t0, "User:alice", tok.HMAC, 0); err != nil {
		t.Fatalf("renew restored: %v", err)
	}
	c := New(Config{SecretKey: "k2"})
	c.Restore(a.All())
	if _, err := c.Renew(t0, "User:alice", tok.HMAC, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another key: %v", err)
	}
}
