// Package sasl holds the broker side of Kafka's SASL mechanisms as pure
// state machines: PLAIN (RFC 4616), SCRAM-SHA-256 and SCRAM-SHA-512
// (RFC 5802, RFC 7677) and OAUTHBEARER (RFC 7628) with unsecured JWS
// tokens, as Kafka's default validator accepts for testing, or signed JWTs
// checked against a JWKS (jwt.go) as Kafka's broker validator does. An
// Exchange takes the client's tokens one at a time and answers the
// server's; it never touches sockets, clocks or randomness: the caller
// passes the server nonce and the time.
package sasl

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Kafka's mechanism names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
)

// Mechanisms are the mechanisms served, in the order a broker lists them.
var Mechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer}

// ScramMechanisms are the SCRAM mechanisms, whose credentials
// DescribeUserScramCredentials and AlterUserScramCredentials manage.
var ScramMechanisms = []string{ScramSHA256, ScramSHA512}

// IsScram says whether mech is a SCRAM mechanism.
func IsScram(mech string) bool { return slices.Contains(ScramMechanisms, mech) }

// Failure is an authentication that failed: the broker answers
// SASL_AUTHENTICATION_FAILED with Message and closes the connection.
type Failure struct {
	Message string
	// Reason is what the broker logs when it is more than Message (a
	// refused OAUTHBEARER token: the client is told only invalid_token).
	Reason string
	// NoAnswer: the broker closes the connection without answering, as
	// Kafka does where its server fails outside its SASL error handling.
	NoAnswer bool
}

func (f *Failure) Error() string { return f.Message }

// fail is a Failure with Kafka's wording for mech when the cause is
// a malformed exchange rather than wrong credentials.
func fail(mech string) error {
	return &Failure{Message: "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech}
}

var errInvalidCredentials = &Failure{Message: "Authentication failed: Invalid user credentials"}

// Users is where an exchange looks credentials up.
type Users interface {
	// Password is a user's PLAIN password.
	Password(user string) (string, bool)
	// Scram is a user's credential for a SCRAM mechanism.
	Scram(mech, user string) (ScramCredential, bool)
}

// Tokens is where SCRAM looks up delegation tokens (KIP-48): a client
// that sends the extension tokenauth=true logs in with the token id as its
// name and the token's HMAC in base64 as its password. Users may implement
// it; without it no token logs in.
type Tokens interface {
	// Token is the token's credential for a SCRAM mechanism, its owner's
	// name (the principal is User:owner) and its expiry, which bounds the
	// session.
	Token(mech, id string) (cred ScramCredential, owner string, expiry time.Time, ok bool)
}

// TokenAuthenticated is implemented by a SCRAM exchange: whether the
// client logged in with a delegation token.
type TokenAuthenticated interface{ TokenAuthenticated() bool }

// Exchange is one authentication under way.
type Exchange interface {
	// Step takes the client's next token and returns the server's reply;
	// done says the client is authenticated. An error fails the
	// authentication (a *Failure carries the message for the client).
	Step(token []byte) (reply []byte, done bool, err error)
	// Principal is the authenticated principal ("User:alice") once done.
	Principal() string
	// Expiry is when the credential expires (OAUTHBEARER tokens), zero
	// for none; it bounds the session lifetime.
	Expiry() time.Time
}

// ErrUnsupportedMechanism is returned by New for a mechanism not served.
var ErrUnsupportedMechanism = errors.New("unsupported SASL mechanism")

// New starts an exchange of mech. nonce is the server's part of a SCRAM
// nonce (printable, without commas: use random bytes in base64); now is
// the time OAUTHBEARER tokens are checked against.
func New(mech string, users Users, nonce string, now time.Time) (Exchange, error) {
	switch mech {
	case Plain:
		return &plain{users: users}, nil
	case ScramSHA256, ScramSHA512:
		return &scram{mech: mech, users: users, nonce: nonce}, nil
	case OAuthBearer:
		return NewOAuthBearer(UnsecuredValidator(now)), nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedMechanism, mech)
}
