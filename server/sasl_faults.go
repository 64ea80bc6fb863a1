package server

// Fault rules on the SASL flow. SaslHandshake and SaslAuthenticate of an
// authentication never reach the handler table (the SASL gate answers
// them), so the rules are run here: a rule can delay them, drop the
// connection, or answer with its error, e.g. SASL_AUTHENTICATION_FAILED or
// ILLEGAL_SASL_STATE to test how a client takes a failed login. As after
// any failed authentication in Kafka, the connection closes once the
// client has the answer. Before the work, an error answers without
// touching the exchange; with AfterWork the step runs first (a last step
// does authenticate the connection) and only its answer is replaced. The
// unframed tokens of SaslHandshake v0 are not requests: no rule sees them.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslWithFaults is saslServe under the fault rules; failed says the
// connection closes after the answer.
func (cn *conn) saslWithFaults(rules []*FaultRule, req kmsg.Request) (resp kmsg.Response, failed bool, err error) {
	r := cn.fire(rules, req)
	if r == nil {
		resp, failed = cn.saslServe(req)
		return resp, failed, nil
	}
	if !r.f.AfterWork {
		if err := cn.faultDelay(r.f.Delay); err != nil {
			return nil, false, err
		}
		switch {
		case r.f.DropConnection:
			return nil, false, errCloseConn
		case r.code == 0:
			resp, failed = cn.saslServe(req)
			return resp, failed, nil
		}
		return cn.saslFaultAnswer(r, req.ResponseKind()), true, nil
	}
	resp, failed = cn.saslServe(req)
	if err := cn.faultDelay(r.f.Delay); err != nil {
		return nil, false, err
	}
	switch {
	case r.f.DropConnection:
		return nil, false, errCloseConn
	case r.code != 0:
		return cn.saslFaultAnswer(r, resp), true, nil
	}
	return resp, failed, nil
}

// saslFaultAnswer puts r's error into resp, as a failed authentication.
func (cn *conn) saslFaultAnswer(r *FaultRule, resp kmsg.Response) kmsg.Response {
	cn.b.c.setFaultErrors(resp, r)
	switch resp := resp.(type) {
	case *kmsg.SASLHandshakeResponse:
		resp.SupportedMechanisms = slices.Clone(cn.b.c.cfg.SASLMechanisms) // Kafka lists them with every answer
	case *kmsg.SASLAuthenticateResponse:
		resp.SASLAuthBytes, resp.SessionLifetimeMillis = nil, 0
	}
	msg := "injected fault " + r.id + ": " + r.f.Error
	cn.saslFailed(cn.sasl.mech, msg)
	return resp
}
