package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// Kafka's bounds on SCRAM iterations (AlterUserScramCredentials refuses
// others with UNACCEPTABLE_CREDENTIAL).
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// ScramCredential is what a broker stores for a SCRAM user: never the
// password, only the keys derived from it (RFC 5802 section 3).
type ScramCredential struct {
	Salt       []byte
	Iterations int
	StoredKey  []byte
	ServerKey  []byte
}

func hashOf(mech string) (func() hash.Hash, error) {
	switch mech {
	case ScramSHA256:
		return sha256.New, nil
	case ScramSHA512:
		return sha512.New, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedMechanism, mech)
}

// SaltedPassword is Hi(password, salt, iterations) of mech.
func SaltedPassword(mech, password string, salt []byte, iterations int) ([]byte, error) {
	h, err := hashOf(mech)
	if err != nil {
		return nil, err
	}
	return pbkdf2.Key(h, password, salt, iterations, h().Size())
}

// NewScramCredential derives a credential from a password.
func NewScramCredential(mech, password string, salt []byte, iterations int) (ScramCredential, error) {
	salted, err := SaltedPassword(mech, password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return ScramCredentialFromSalted(mech, salted, salt, iterations)
}

// ScramCredentialFromSalted derives a credential from a salted password,
// which is what AlterUserScramCredentials carries.
func ScramCredentialFromSalted(mech string, salted, salt []byte, iterations int) (ScramCredential, error) {
	h, err := hashOf(mech)
	if err != nil {
		return ScramCredential{}, err
	}
	clientKey := hmacOf(h, salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		Iterations: iterations,
		StoredKey:  sum.Sum(nil),
		ServerKey:  hmacOf(h, salted, "Server Key"),
	}, nil
}

func hmacOf(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
