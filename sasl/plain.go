package sasl

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"time"
)

// plain is SASL/PLAIN: one message "authzid NUL authcid NUL password".
type plain struct {
	users     Users
	principal string
}

func (p *plain) Step(token []byte) ([]byte, bool, error) {
	if p.principal != "" {
		return nil, false, fail(Plain)
	}
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, false, &Failure{Message: fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))}
	}
	authzid, user, password := string(parts[0]), string(parts[1]), parts[2]
	switch {
	case user == "":
		return nil, false, &Failure{Message: "Authentication failed: username not specified"}
	case len(password) == 0:
		return nil, false, &Failure{Message: "Authentication failed: password not specified"}
	case authzid != "" && authzid != user:
		return nil, false, &Failure{Message: "Authentication failed: Client requested an authorization id that is different from username"}
	}
	want, ok := p.users.Password(user)
	if !ok || subtle.ConstantTimeCompare([]byte(want), password) != 1 {
		return nil, false, &Failure{Message: "Authentication failed: Invalid username or password"}
	}
	p.principal = "User:" + user
	return nil, true, nil
}

func (p *plain) Principal() string { return p.principal }
func (p *plain) Expiry() time.Time { return time.Time{} }
