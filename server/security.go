package server

// The cluster's security settings: the TLS material (tls.go) and the SASL
// users. PLAIN passwords and SCRAM credentials are kept apart, as Kafka
// keeps its JAAS users and its SCRAM store: AlterUserScramCredentials
// changes only the latter.

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
)

// checkSecurity validates the security settings and fills in the
// mechanisms' default.
func (c *Config) checkSecurity() error {
	if len(c.SASLMechanisms) == 0 {
		c.SASLMechanisms = slices.Clone(sasl.Mechanisms)
	}
	for _, m := range c.SASLMechanisms {
		if !slices.Contains(sasl.Mechanisms, m) {
			return fmt.Errorf("SASL mechanism %q: want some of %s", m, strings.Join(sasl.Mechanisms, ", "))
		}
	}
	switch c.TLSClientAuth {
	case "", TLSClientAuthNone, TLSClientAuthRequested, TLSClientAuthRequired:
	default:
		return fmt.Errorf("tls client auth must be none, requested or required, got %q", c.TLSClientAuth)
	}
	for name := range c.SASLUsers {
		if name == "" || strings.ContainsAny(name, ",:") {
			return fmt.Errorf("SASL user name %q: want a non-empty name without ',' or ':'", name)
		}
		if c.SASLUsers[name] == "" {
			return fmt.Errorf("SASL user %s has an empty password", name)
		}
	}
	if c.SASLSessionLifetime < 0 {
		return fmt.Errorf("SASL session lifetime must not be negative, got %v", c.SASLSessionLifetime)
	}
	if c.DelegationTokenMaxLifetime < 0 || c.DelegationTokenExpiryTime < 0 || c.DelegationTokenExpiryCheckInterval < 0 {
		return fmt.Errorf("delegation token lifetimes and check interval must not be negative")
	}
	return nil
}

// saslUsers is the SASL user store; it implements sasl.Users.
type saslUsers struct {
	mu        sync.RWMutex
	passwords map[string]string                          // PLAIN
	scram     map[string]map[string]sasl.ScramCredential // mechanism, user
}

// defaultScramIterations is what --sasl-user credentials get: Kafka's
// minimum, so connections authenticate quickly.
const defaultScramIterations = sasl.MinIterations

func newSASLUsers(users map[string]string) (*saslUsers, error) {
	u := &saslUsers{passwords: map[string]string{}, scram: map[string]map[string]sasl.ScramCredential{}}
	for _, mech := range sasl.ScramMechanisms {
		u.scram[mech] = map[string]sasl.ScramCredential{}
	}
	for name, pw := range users {
		u.passwords[name] = pw
		for _, mech := range sasl.ScramMechanisms {
			salt := make([]byte, 16)
			rand.Read(salt)
			cred, err := sasl.NewScramCredential(mech, pw, salt, defaultScramIterations)
			if err != nil {
				return nil, err
			}
			u.scram[mech][name] = cred
		}
	}
	return u, nil
}

func (u *saslUsers) Password(user string) (string, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	pw, ok := u.passwords[user]
	return pw, ok
}

func (u *saslUsers) Scram(mech, user string) (sasl.ScramCredential, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	cred, ok := u.scram[mech][user]
	return cred, ok
}

// SASLUsers lists the SASL users, sorted by name.
func (c *Cluster) SASLUsers() []SASLUser {
	u := c.users
	u.mu.RLock()
	defer u.mu.RUnlock()
	byName := map[string]*SASLUser{}
	get := func(name string) *SASLUser {
		if byName[name] == nil {
			byName[name] = &SASLUser{Name: name, Scram: []ScramMechanism{}}
		}
		return byName[name]
	}
	for name := range u.passwords {
		get(name).Plain = true
	}
	for _, mech := range sasl.ScramMechanisms {
		for name, cred := range u.scram[mech] {
			s := get(name)
			s.Scram = append(s.Scram, ScramMechanism{Mechanism: mech, Iterations: cred.Iterations})
		}
	}
	out := make([]SASLUser, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b SASLUser) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AddSASLUser adds or replaces a user with credentials for every
// mechanism, as --sasl-user does.
func (c *Cluster) AddSASLUser(name, password string) error {
	if err := (&Config{SASLUsers: map[string]string{name: password}}).checkSecurity(); err != nil {
		return err
	}
	fresh, err := newSASLUsers(map[string]string{name: password})
	if err != nil {
		return err
	}
	u := c.users
	u.mu.Lock()
	u.passwords[name] = password
	for _, mech := range sasl.ScramMechanisms {
		u.scram[mech][name] = fresh.scram[mech][name]
	}
	u.mu.Unlock()
	c.emit(EventSASLUserChanged, func(e *Event) { e.Reason, e.Detail = "added", "User:"+name })
	c.saveMeta() // its SCRAM credentials; a PLAIN password is configuration, as Kafka's JAAS file
	return nil
}

// RemoveSASLUser removes a user's password and SCRAM credentials; its
// connections stay authenticated, as in Kafka.
func (c *Cluster) RemoveSASLUser(name string) bool {
	u := c.users
	u.mu.Lock()
	_, found := u.passwords[name]
	delete(u.passwords, name)
	for _, mech := range sasl.ScramMechanisms {
		if _, ok := u.scram[mech][name]; ok {
			found = true
			delete(u.scram[mech], name)
		}
	}
	u.mu.Unlock()
	if found {
		c.emit(EventSASLUserChanged, func(e *Event) { e.Reason, e.Detail = "removed", "User:"+name })
		c.saveMeta()
	}
	return found
}

// newSecurity sets up TLS (if a listener needs it) and the users.
func newSecurity(cfg Config) (*tlsSetup, *saslUsers, error) {
	var ts *tlsSetup
	if needsTLS(cfg.Listeners) {
		start := time.Now()
		var err error
		if ts, err = newTLSSetup(cfg, time.Now()); err != nil {
			return nil, nil, err
		}
		cfg.Logger.Info("TLS ready", "dir", cfg.TLSDir, "took", time.Since(start))
	}
	users, err := newSASLUsers(cfg.SASLUsers)
	if err != nil {
		return nil, nil, err
	}
	return ts, users, nil
}
