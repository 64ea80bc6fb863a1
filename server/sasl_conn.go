package server

// SASL on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's server
// authenticator runs it: a connection may send ApiVersions once, then must
// send SaslHandshake; with handshake v1 the tokens travel in
// SaslAuthenticate requests, with v0 unframed (a size-prefixed token each
// way, the legacy flow). Any other request before authentication closes
// the connection; so do a failed authentication (after its
// SASL_AUTHENTICATION_FAILED answer) and an unsupported mechanism (after
// UNSUPPORTED_SASL_MECHANISM), each failedAuthenticationDelay after the
// answer. KIP-368: a client that used SaslAuthenticate
// v1+ may re-authenticate with a new SaslHandshake on an authenticated
// connection; a session past its lifetime is closed at its next request.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

type saslPhase int8

const (
	saslStart         saslPhase = iota // ApiVersions or SaslHandshake may come
	saslHandshakeNext                  // ApiVersions answered
	saslAuthenticating
	saslDone
)

// saslConn is one connection's SASL state; only its goroutine touches it.
type saslConn struct {
	phase          saslPhase
	raw            bool // handshake v0: tokens come unframed
	mech           string
	x              sasl.Exchange
	supportsReauth bool      // it sent SaslAuthenticate v1+
	expiry         time.Time // end of the session; zero: none
	reauthFrom     string    // the principal being re-authenticated
	badMech        string    // re-authentication asked for another mechanism
	noAnswer       bool      // the failure closes without an answer (sasl.Failure.NoAnswer)
}

// saslGate runs before a request on a SASL listener is dispatched: it
// answers the SASL requests itself (handled) and refuses what Kafka
// refuses (an error closes the connection).
func (cn *conn) saslGate(hdr protocol.RequestHeader, body []byte) (handled bool, err error) {
	s := cn.sasl
	switch s.phase {
	case saslDone:
		if hdr.APIKey == saslHandshakeKey && s.supportsReauth {
			s.reauthFrom = cn.principal
			return true, cn.saslAnswer(hdr, body)
		}
		if !s.expiry.IsZero() && !cn.b.c.now().Before(s.expiry) {
			return false, fmt.Errorf("SASL session of %s expired at %v without re-authentication", cn.principal, s.expiry)
		}
		return false, nil
	case saslStart:
		if hdr.APIKey == apiVersionsKey {
			// As Kafka's SaslServerAuthenticator: an ApiVersions at a version
			// it does not serve is answered (KIP-511's fallback), as is one
			// it finds invalid (api_versions_target.go), and the client may
			// ask again before the handshake.
			if r, ok := protocol.Lookup(apiVersionsKey); (!ok || hdr.APIVersion <= r.Max) && apiVersionsBodyValid(hdr.APIVersion, body) {
				s.phase = saslHandshakeNext
			}
			return false, nil
		}
		fallthrough
	case saslHandshakeNext:
		if hdr.APIKey != saslHandshakeKey {
			return false, fmt.Errorf("unexpected %s request during SASL handshake", kmsg.NameForKey(hdr.APIKey))
		}
		return true, cn.saslAnswer(hdr, body)
	default: // saslAuthenticating with handshake v1
		if hdr.APIKey != saslAuthenticateKey {
			return false, fmt.Errorf("unexpected %s request during SASL authentication", kmsg.NameForKey(hdr.APIKey))
		}
		return true, cn.saslAnswer(hdr, body)
	}
}

// saslAnswer answers a SaslHandshake or SaslAuthenticate of the
// authentication flow; the connection closes after a failure, once the
// client has the answer.
func (cn *conn) saslAnswer(hdr protocol.RequestHeader, body []byte) error {
	req := kmsg.RequestForKey(hdr.APIKey)
	if err := cn.readSASLRequest(hdr, req, body); err != nil {
		return err
	}
	var resp kmsg.Response
	var failed bool
	if rules := cn.b.faults.Load(); rules != nil {
		var err error
		if resp, failed, err = cn.saslWithFaults(*rules, req); err != nil {
			return err
		}
	} else {
		resp, failed = cn.saslServe(req)
	}
	if failed && cn.sasl.noAnswer {
		return errCloseConn
	}
	if err := cn.respond(hdr, resp); err != nil {
		return err
	}
	if failed {
		cn.delayFailedClose()
		return errCloseConn
	}
	return nil
}

// saslServe answers a SASL request of the flow; failed says the
// authentication failed.
func (cn *conn) saslServe(req kmsg.Request) (kmsg.Response, bool) {
	if hs, ok := req.(*kmsg.SASLHandshakeRequest); ok {
		return cn.saslHandshake(hs)
	}
	return cn.saslAuthenticate(req.(*kmsg.SASLAuthenticateRequest))
}

func (cn *conn) saslHandshake(req *kmsg.SASLHandshakeRequest) (kmsg.Response, bool) {
	s := cn.sasl
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	enabled := cn.b.c.cfg.SASLMechanisms
	resp.SupportedMechanisms = slices.Clone(enabled)
	if !slices.Contains(enabled, req.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		cn.saslFailed(req.Mechanism, "unsupported SASL mechanism "+req.Mechanism)
		return resp, true
	}
	s.badMech = ""
	if s.reauthFrom != "" && req.Mechanism != s.mech {
		s.badMech = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, s.mech)
	}
	nonce := make([]byte, 24)
	rand.Read(nonce)
	var users sasl.Users = cn.b.c.users
	if cn.b.c.tokens != nil {
		users = tokenUsers{cn.b.c.users, cn.b.c.tokens}
	}
	x, _ := sasl.New(req.Mechanism, users, base64.RawStdEncoding.EncodeToString(nonce), cn.b.c.now())
	if ov := cn.b.c.oauth; ov != nil && req.Mechanism == sasl.OAuthBearer {
		x = sasl.NewOAuthBearer(ov.validate(cn.b.c.now))
	}
	s.phase, s.mech, s.x, s.raw = saslAuthenticating, req.Mechanism, x, req.Version == 0
	return resp, false
}

func (cn *conn) saslAuthenticate(req *kmsg.SASLAuthenticateRequest) (kmsg.Response, bool) {
	s := cn.sasl
	s.supportsReauth = s.supportsReauth || req.Version > 0
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	reply, lifetime, err := cn.saslStep(req.SASLAuthBytes)
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, true
	}
	resp.SASLAuthBytes = reply
	resp.SessionLifetimeMillis = lifetime.Milliseconds()
	empty := "" // Kafka's default for the field: an empty message, not null
	resp.ErrorMessage = &empty
	return resp, false
}

// saslRawToken takes one unframed token of the v0 flow and answers
// unframed; a failure closes the connection without an answer.
func (cn *conn) saslRawToken(token []byte) error {
	reply, _, err := cn.saslStep(token)
	if err != nil {
		return errCloseConn
	}
	out := binary.BigEndian.AppendUint32(cn.out[:0], uint32(len(reply)))
	cn.out = append(out, reply...)
	_, err = cn.nc.Write(cn.out)
	return err
}

// saslStep feeds a token to the exchange and, once it is done, makes the
// connection authenticated. The error is what the client is told.
func (cn *conn) saslStep(token []byte) ([]byte, time.Duration, error) {
	s := cn.sasl
	c := cn.b.c
	if s.badMech != "" {
		cn.saslFailed(s.mech, s.badMech)
		return nil, 0, errors.New(s.badMech)
	}
	reply, done, err := s.x.Step(token)
	if err != nil {
		var f *sasl.Failure
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + s.mech
		detail := msg
		if errors.As(err, &f) {
			msg, detail = f.Message, f.Message
			if f.Reason != "" { // a refused token: the client is told invalid_token, the event says why
				detail = f.Message + ": " + f.Reason
			}
			s.noAnswer = f.NoAnswer
		}
		cn.saslFailed(s.mech, detail)
		return nil, 0, errors.New(msg)
	}
	if !done {
		return reply, 0, nil
	}
	principal := s.x.Principal()
	if s.reauthFrom != "" && principal != s.reauthFrom {
		msg := fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", s.reauthFrom, principal)
		cn.saslFailed(s.mech, msg)
		return nil, 0, errors.New(msg)
	}
	now := c.now()
	var lifetime time.Duration
	s.expiry = time.Time{}
	if exp := s.x.Expiry(); !exp.IsZero() || c.cfg.SASLSessionLifetime > 0 {
		lifetime = c.cfg.SASLSessionLifetime
		if !exp.IsZero() && (lifetime == 0 || exp.Sub(now) < lifetime) {
			lifetime = max(0, exp.Sub(now))
		}
		s.expiry = now.Add(lifetime)
	}
	typ := EventClientAuthenticated
	if s.reauthFrom != "" {
		typ = EventClientReauthenticated
	}
	cn.setPrincipal(principal)
	t, ok := s.x.(sasl.TokenAuthenticated)
	cn.tokenAuthenticated = ok && t.TokenAuthenticated()
	s.phase, s.raw, s.x, s.reauthFrom = saslDone, false, nil, ""
	c.emit(typ, func(e *Event) { e.Broker, e.Reason, e.Detail = cn.b.id, s.mech, principal })
	return reply, lifetime, nil
}

func (cn *conn) saslFailed(mech, msg string) {
	cn.b.c.emit(EventAuthenticationFailed, func(e *Event) { e.Broker, e.Reason, e.Detail = cn.b.id, mech, msg })
}

func (cn *conn) readSASLRequest(hdr protocol.RequestHeader, req kmsg.Request, body []byte) error {
	rng, _ := protocol.Lookup(hdr.APIKey)
	if hdr.APIVersion < rng.Min || hdr.APIVersion > rng.Max {
		return fmt.Errorf("unsupported version %d of %s", hdr.APIVersion, rng.Name())
	}
	req.SetVersion(hdr.APIVersion)
	if err := req.ReadFrom(body); err != nil {
		return fmt.Errorf("malformed %s v%d request: %w", rng.Name(), hdr.APIVersion, err)
	}
	return nil
}

// handleSaslHandshake answers SaslHandshake where no authentication is
// under way (PLAINTEXT and SSL listeners, or an authenticated connection
// whose client cannot re-authenticate): ILLEGAL_SASL_STATE, as Kafka.
func (cn *conn) handleSaslHandshake(req *kmsg.SASLHandshakeRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	return resp, nil
}

// handleSaslAuthenticate answers SaslAuthenticate outside an
// authentication: ILLEGAL_SASL_STATE.
func (cn *conn) handleSaslAuthenticate(req *kmsg.SASLAuthenticateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.ErrorCode = kerr.IllegalSaslState.Code
	msg := "SaslAuthenticate request received after successful authentication"
	resp.ErrorMessage = &msg
	return resp, nil
}

// failedAuthenticationDelay is the default of Kafka's
// connection.failed.authentication.delay.ms: the broker closes a
// connection that failed authentication that long after its answer. The
// client reads the answer before the close: some clients (kafka-python)
// report only the closed connection when both arrive together.
const failedAuthenticationDelay = 100 * time.Millisecond

// delayFailedClose waits failedAuthenticationDelay, not reading the
// connection meanwhile: on the cluster's clock, or on the wall clock if
// that comes first (a manual clock must not hold connections open), or
// until the connection or the cluster closes.
func (cn *conn) delayFailedClose() {
	c := cn.b.c
	due := make(chan struct{})
	t := c.cfg.Clock.AfterFunc(failedAuthenticationDelay, func() { close(due) })
	defer t.Stop()
	wall := time.NewTimer(failedAuthenticationDelay)
	defer wall.Stop()
	select {
	case <-due:
	case <-wall.C:
	case <-cn.closed:
	case <-c.closing:
	}
}
