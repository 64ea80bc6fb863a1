package server

// Fault rules on the SASL flow. SaslHandshake and SaslAuthenticate of an
// authentication never reach the handler table (the SASL gate answers
// them), so the gate runs them through serveWithFaults itself: a rule can
// delay them, drop the connection, or answer with its error, e.g.
// SASL_AUTHENTICATION_FAILED or ILLEGAL_SASL_STATE to test how a client
// takes a failed login. As after any failed authentication in Kafka, the
// connection closes once the client has the answer. Before the work, an
// error answers without touching the exchange; with AfterWork the step
// runs first (a last step does authenticate the connection) and only its
// answer is replaced. The unframed tokens of SaslHandshake v0 are not
// requests: no rule sees them.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslWithFaults is saslServe under the fault rules; failed says the
// connection closes after the answer.
func (cn *conn) saslWithFaults(rules []*FaultRule, req kmsg.Request) (resp kmsg.Response, failed bool, err error) {
	serve := func(cn *conn, req kmsg.Request) (kmsg.Response, error) {
		resp, failed = cn.saslServe(req)
		return resp, nil
	}
	if resp, err = cn.serveWithFaults(rules, serve, req); err != nil {
		return nil, false, err
	}
	if code := saslErrorCode(resp); code != 0 && !failed {
		// A rule's error on a step that did not fail by itself: the
		// answer of a failed login.
		switch resp := resp.(type) {
		case *kmsg.SASLHandshakeResponse:
			resp.SupportedMechanisms = slices.Clone(cn.b.c.cfg.SASLMechanisms) // Kafka lists them with every answer
		case *kmsg.SASLAuthenticateResponse:
			resp.SASLAuthBytes, resp.SessionLifetimeMillis = nil, 0
		}
		cn.saslFailed(cn.sasl.mech, "injected fault "+kerr.ErrorForCode(code).(*kerr.Error).Message)
		failed = true
	}
	return resp, failed, nil
}

// saslErrorCode is the error code of a SASL flow answer.
func saslErrorCode(resp kmsg.Response) int16 {
	switch resp := resp.(type) {
	case *kmsg.SASLHandshakeResponse:
		return resp.ErrorCode
	case *kmsg.SASLAuthenticateResponse:
		return resp.ErrorCode
	}
	return 0
}
