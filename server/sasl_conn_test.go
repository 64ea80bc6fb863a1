package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// rawClient speaks the protocol by hand, for the exchanges no client
// library lets a test drive exactly.
type rawClient struct {
	t    *testing.T
	nc   net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
}

func (r *rawClient) send(req kmsg.Request) {
	r.t.Helper()
	r.corr++
	if _, err := r.nc.Write(r.f.AppendRequest(nil, req, r.corr)); err != nil {
		r.t.Fatal(err)
	}
}

// readFrame reads one size-prefixed frame.
func (r *rawClient) readFrame() ([]byte, error) {
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(r.nc, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	_, err := io.ReadFull(r.nc, b)
	return b, err
}

// call sends req and decodes its response.
func (r *rawClient) call(req kmsg.Request) kmsg.Response {
	r.t.Helper()
	r.send(req)
	b, err := r.readFrame()
	if err != nil {
		r.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	resp := req.ResponseKind()
	b = b[4:] // correlation id
	if resp.IsFlexible() && req.Key() != apiVersionsKey {
		b = b[1:] // empty tag buffer
	}
	if err := resp.ReadFrom(b); err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// token sends one unframed SASL token (the v0 flow) and reads the answer.
func (r *rawClient) token(tok []byte) ([]byte, error) {
	r.t.Helper()
	if _, err := r.nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...)); err != nil {
		r.t.Fatal(err)
	}
	return r.readFrame()
}

func (r *rawClient) handshake(version int16, mech string) *kmsg.SASLHandshakeResponse {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = version, mech
	return r.call(req).(*kmsg.SASLHandshakeResponse)
}

func (r *rawClient) authenticate(version int16, tok string) *kmsg.SASLAuthenticateResponse {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = version, []byte(tok)
	return r.call(req).(*kmsg.SASLAuthenticateResponse)
}

func (r *rawClient) metadata() *kmsg.MetadataResponse {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	return r.call(req).(*kmsg.MetadataResponse)
}

func saslAddr(t *testing.T, c *Cluster) string { return listenerBootstrap(t, c, "SASL_PLAINTEXT")[0] }

func TestSASLUnsupportedMechanism(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	r := dialRaw(t, saslAddr(t, c))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1" // v3+ needs both (else INVALID_REQUEST)
	if resp := r.call(av).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions before the handshake: %+v", resp)
	}
	resp := r.handshake(1, "GSSAPI")
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
		t.Fatalf("error %d, want UNSUPPORTED_SASL_MECHANISM", resp.ErrorCode)
	}
	if want := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}; !slices.Equal(resp.SupportedMechanisms, want) {
		t.Fatalf("mechanisms %v, want %v", resp.SupportedMechanisms, want)
	}
	expectClosed(t, r.nc)

	// sasl.enabled.mechanisms: only SCRAM-SHA-512 here.
	only := securedCluster(t, Config{Brokers: 1, SASLMechanisms: []string{"SCRAM-SHA-512"}})
	r = dialRaw(t, saslAddr(t, only))
	if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(resp.SupportedMechanisms, []string{"SCRAM-SHA-512"}) {
		t.Fatalf("PLAIN with only SCRAM-SHA-512 enabled: error %d, mechanisms %v", resp.ErrorCode, resp.SupportedMechanisms)
	}
	expectClosed(t, r.nc)
	err := firstRequestErr(t, kgo.SeedBrokers(saslAddr(t, only)), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Fatalf("franz-go with PLAIN: %v, want UNSUPPORTED_SASL_MECHANISM", err)
	}
	if _, err := NewCluster(Config{SASLMechanisms: []string{"GSSAPI"}}); err == nil || !strings.Contains(err.Error(), "GSSAPI") {
		t.Fatalf("GSSAPI accepted: %v", err)
	}
}

func TestSASLRequestBeforeAuthenticationCloses(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	// Before the handshake: closed without an answer.
	r := dialRaw(t, saslAddr(t, c))
	r.send(kmsg.NewPtrMetadataRequest())
	if b, err := r.readFrame(); err == nil {
		t.Fatalf("got an answer of %d bytes", len(b))
	}
	// After the handshake, before authenticating.
	r = dialRaw(t, saslAddr(t, c))
	if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(resp.ErrorCode))
	}
	r.send(kmsg.NewPtrMetadataRequest())
	expectClosed(t, r.nc)
	// SaslHandshake on a PLAINTEXT listener: ILLEGAL_SASL_STATE.
	r = dialRaw(t, c.Bootstrap()[0])
	if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("error %d on PLAINTEXT, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
}

// The legacy flow of SaslHandshake v0: unframed tokens, as old clients
// (and sarama with handshake v0) send them.
func TestSASLLegacyUnframedTokens(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	r := dialRaw(t, saslAddr(t, c))
	if resp := r.handshake(0, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(resp.ErrorCode))
	}
	if reply, err := r.token([]byte("\x00alice\x00alice-secret")); err != nil || len(reply) != 0 {
		t.Fatalf("PLAIN token: reply %q err %v", reply, err)
	}
	if len(r.metadata().Brokers) != 1 {
		t.Fatal("no brokers in metadata after authenticating")
	}

	// SCRAM over unframed tokens, driven by franz-go's SCRAM client.
	r = dialRaw(t, saslAddr(t, c))
	r.handshake(0, "SCRAM-SHA-512")
	session, first, err := scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism().Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	msg := first
	for done := false; !done; {
		reply, err := r.token(msg)
		if err != nil {
			t.Fatal(err)
		}
		if done, msg, err = session.Challenge(reply); err != nil {
			t.Fatal(err) // includes a wrong server signature
		}
	}
	if len(r.metadata().Brokers) != 1 {
		t.Fatal("no brokers in metadata after SCRAM")
	}

	// A wrong password closes the connection without an answer.
	r = dialRaw(t, saslAddr(t, c))
	r.handshake(0, "PLAIN")
	if reply, err := r.token([]byte("\x00alice\x00nope")); err == nil {
		t.Fatalf("wrong password answered %q", reply)
	}
}

func TestSASLReauthenticationAndSessionExpiry(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_800_000_000, 0))
	c := securedCluster(t, Config{Brokers: 1, Clock: clk, SASLSessionLifetime: time.Minute})
	r := dialRaw(t, saslAddr(t, c))
	r.handshake(1, "PLAIN")
	if resp := r.authenticate(2, "\x00alice\x00alice-secret"); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 60000 {
		t.Fatalf("authenticate: error %d lifetime %d, want 0 and 60000", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	c.AdvanceClock(45 * time.Second)
	r.metadata()
	// KIP-368 re-authentication renews the session for another minute.
	if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := r.authenticate(2, "\x00alice\x00alice-secret"); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 60000 {
		t.Fatalf("re-authenticate: error %d lifetime %d", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	c.AdvanceClock(45 * time.Second) // 90 s after the first authentication
	r.metadata()
	c.AdvanceClock(15 * time.Second) // the renewed session ends
	r.send(kmsg.NewPtrMetadataRequest())
	expectClosed(t, r.nc)

	// Re-authenticating as someone else fails and closes.
	r = dialRaw(t, saslAddr(t, c))
	r.handshake(1, "PLAIN")
	r.authenticate(1, "\x00alice\x00alice-secret")
	r.handshake(1, "PLAIN")
	resp := r.authenticate(1, "\x00bob\x00bob-secret")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "Cannot change principals") {
		t.Fatalf("re-authentication as bob: error %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
	expectClosed(t, r.nc)

	// An OAUTHBEARER token expiring before the configured lifetime ends
	// the session sooner.
	r = dialRaw(t, saslAddr(t, c))
	r.handshake(1, "OAUTHBEARER")
	tok := "n,,\x01auth=Bearer " + unsecuredJWSAt("carol", c.now().Add(20*time.Second)) + "\x01\x01"
	if resp := r.authenticate(1, tok); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != 20000 {
		t.Fatalf("oauth: error %d lifetime %d, want 20000", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	c.AdvanceClock(20 * time.Second)
	r.send(kmsg.NewPtrMetadataRequest())
	expectClosed(t, r.nc)
}
