package server

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestSASLFaultsFranzGo: fault rules reach the SASL flow. franz-go, with
// the right password, sees the injected SASL_AUTHENTICATION_FAILED and
// ILLEGAL_SASL_STATE; once the rule's count is spent it logs in.
func TestSASLFaultsFranzGo(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	seeds := kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...)
	good := kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())
	for _, tc := range []struct {
		api, error string
		afterWork  bool
		want       *kerr.Error
	}{
		{"SaslAuthenticate", "SASL_AUTHENTICATION_FAILED", false, kerr.SaslAuthenticationFailed},
		{"SaslAuthenticate", "SASL_AUTHENTICATION_FAILED", true, kerr.SaslAuthenticationFailed},
		{"SaslHandshake", "ILLEGAL_SASL_STATE", false, kerr.IllegalSaslState},
		{"SaslHandshake", "UNSUPPORTED_SASL_MECHANISM", false, kerr.UnsupportedSaslMechanism},
	} {
		rule, err := c.InjectFault(Fault{API: tc.api, Error: tc.error, Count: 1, AfterWork: tc.afterWork})
		if err != nil {
			t.Fatal(err)
		}
		if err := firstRequestErr(t, seeds, good); !errors.Is(err, tc.want) {
			t.Fatalf("%s fault %s (after work %v): %v, want %v", tc.api, tc.error, tc.afterWork, err, tc.want)
		}
		if hits := rule.State().Hits; hits != 1 {
			t.Fatalf("%s rule hits %d, want 1", tc.api, hits)
		}
		if err := firstRequestErr(t, seeds, good); err != nil {
			t.Fatalf("after the %s fault is spent: %v", tc.api, err)
		}
	}
	if !containsEventPrefix(c.Events(0), EventAuthenticationFailed, "injected fault ") {
		t.Fatal("no authentication_failed event for an injected fault")
	}
}

// TestSASLFaultsDropAndDelay: a rule can drop the connection at
// SaslAuthenticate, or only delay it (the login then succeeds); the
// connection really closes after an injected failure.
func TestSASLFaultsDropAndDelay(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	seeds := kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...)
	good := kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())
	// franz-go takes a connection dropped during authentication as a
	// connection error and dials again: the second login succeeds.
	drop, err := c.InjectFault(Fault{API: "SaslAuthenticate", DropConnection: true, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := firstRequestErr(t, seeds, good); err != nil || drop.State().Hits != 1 {
		t.Fatalf("after one dropped SaslAuthenticate: %v, hits %d", err, drop.State().Hits)
	}
	if _, err := c.InjectFault(Fault{API: "SaslAuthenticate", DropConnection: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	raw := dialRaw(t, saslAddr(t, c))
	if hs := raw.handshake(1, "PLAIN"); hs.ErrorCode != 0 {
		t.Fatalf("handshake: %+v", hs)
	}
	raw.send(&kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: []byte("\x00alice\x00alice-secret")})
	if _, err := raw.readFrame(); err == nil {
		t.Fatal("a dropped SaslAuthenticate was answered")
	}
	if _, err := c.InjectFault(Fault{API: "SaslAuthenticate", Delay: 50 * time.Millisecond, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := firstRequestErr(t, seeds, good); err != nil {
		t.Fatalf("a delayed SaslAuthenticate: %v", err)
	}

	// By hand: the injected answer, then the broker closes the connection.
	if _, err := c.InjectFault(Fault{API: "SaslAuthenticate", Error: "SASL_AUTHENTICATION_FAILED", Count: 1}); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, saslAddr(t, c))
	if hs := r.handshake(1, "PLAIN"); hs.ErrorCode != 0 {
		t.Fatalf("handshake: %+v", hs)
	}
	resp := r.authenticate(2, "\x00alice\x00alice-secret")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "injected") {
		t.Fatalf("authenticate: %+v", resp)
	}
	r.send(kmsg.NewPtrMetadataRequest())
	if _, err := r.readFrame(); err == nil {
		t.Fatal("the connection stayed open after an injected authentication failure")
	}
}

func containsEventPrefix(evs []Event, typ EventType, prefix string) bool {
	for _, e := range evs {
		if e.Type == typ && strings.HasPrefix(e.Detail, prefix) {
			return true
		}
	}
	return false
}
