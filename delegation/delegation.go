// Package delegation holds Kafka's delegation tokens (KIP-48) as rules:
// the token store of the controller (Kafka's DelegationTokenControlManager)
// and the broker's view of it (DelegationTokenManager, DelegationTokenCache).
// A token's id is a random UUID the caller picks; its HMAC is HmacSHA512 of
// the id keyed with delegation.token.secret.key, and the HMAC in base64 is
// the password a client logs in with over SCRAM. Times are milliseconds
// the caller passes: the package reads no clock and draws no randomness.
package delegation

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kafka's defaults of delegation.token.max.lifetime.ms,
// delegation.token.expiry.time.ms and
// delegation.token.expiry.check.interval.ms.
const (
	DefaultMaxLifetimeMs         int64 = 7 * 24 * 60 * 60 * 1000
	DefaultExpiryTimeMs          int64 = 24 * 60 * 60 * 1000
	DefaultExpiryCheckIntervalMs int64 = 60 * 60 * 1000
)

// UserType is the only principal type tokens are issued to and renewable by.
const UserType = "User"

// The errors of the token APIs, each one Kafka error code.
var (
	ErrNotFound      = errors.New("DELEGATION_TOKEN_NOT_FOUND")
	ErrExpired       = errors.New("DELEGATION_TOKEN_EXPIRED")
	ErrOwnerMismatch = errors.New("DELEGATION_TOKEN_OWNER_MISMATCH")
	ErrPrincipalType = errors.New("INVALID_PRINCIPAL_TYPE")
)

// Config is the token settings.
type Config struct {
	SecretKey     string // delegation.token.secret.key
	MaxLifetimeMs int64  // delegation.token.max.lifetime.ms; 0: the default
	ExpiryTimeMs  int64  // delegation.token.expiry.time.ms; 0: the default
}

// Token is one delegation token. Principals are "Type:Name".
type Token struct {
	ID        string
	HMAC      []byte
	Owner     string
	Requester string
	Renewers  []string
	IssueMs   int64
	ExpiryMs  int64
	MaxMs     int64
}

// HMACBase64 is the token's password for SCRAM.
func (t Token) HMACBase64() string { return base64.StdEncoding.EncodeToString(t.HMAC) }

// expired is Kafka's test: past its expiry or its maximum.
func (t *Token) expired(nowMs int64) bool { return t.MaxMs < nowMs || t.ExpiryMs < nowMs }

// mayRenew: Kafka lets the owner and the renewers renew and expire a
// token, not its requester.
func (t *Token) mayRenew(principal string) bool {
	return t.Owner == principal || slices.Contains(t.Renewers, principal)
}

// OwnerOrRenewer is Kafka's TokenInformation.ownerOrRenewer: the owner, the
// requester or a renewer; they always see the token in a describe.
func (t *Token) OwnerOrRenewer(principal string) bool {
	return t.Owner == principal || t.Requester == principal || slices.Contains(t.Renewers, principal)
}

func (t *Token) clone() Token {
	c := *t
	c.HMAC = slices.Clone(t.HMAC)
	c.Renewers = slices.Clone(t.Renewers)
	return c
}

// Manager is the cluster's tokens; it is safe for concurrent use.
type Manager struct {
	cfg Config

	mu     sync.RWMutex
	tokens map[string]*Token // by id
	byHMAC map[string]string // base64 HMAC to id
}

// New is a Manager with cfg, its zero lifetimes set to Kafka's defaults.
func New(cfg Config) *Manager {
	if cfg.MaxLifetimeMs <= 0 {
		cfg.MaxLifetimeMs = DefaultMaxLifetimeMs
	}
	if cfg.ExpiryTimeMs <= 0 {
		cfg.ExpiryTimeMs = DefaultExpiryTimeMs
	}
	return &Manager{cfg: cfg, tokens: map[string]*Token{}, byHMAC: map[string]string{}}
}

// HMAC is HmacSHA512 of id keyed with the secret key, as Kafka makes it.
func (m *Manager) HMAC(id string) []byte {
	mac := hmac.New(sha512.New, []byte(m.cfg.SecretKey))
	mac.Write([]byte(id))
	return mac.Sum(nil)
}

// saturatingSum is Kafka's sum of a time and a period: Long.MAX_VALUE
// rather than an overflow.
func saturatingSum(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Create issues a token with id to owner, asked by requester. Its maximum
// is the configured maximum lifetime, or maxLifetimeMs if positive and
// shorter; it expires one expiry time from now, or at its maximum. Renewers
// must be users (ErrPrincipalType).
func (m *Manager) Create(nowMs int64, id, owner, requester string, renewers []string, maxLifetimeMs int64) (Token, error) {
	life := m.cfg.MaxLifetimeMs
	if maxLifetimeMs > 0 {
		life = min(life, maxLifetimeMs)
	}
	maxMs := saturatingSum(nowMs, life)
	t := &Token{ID: id, Owner: owner, Requester: requester, IssueMs: nowMs, MaxMs: maxMs,
		ExpiryMs: min(maxMs, saturatingSum(nowMs, m.cfg.ExpiryTimeMs))}
	for _, r := range renewers {
		if typ, _, _ := strings.Cut(r, ":"); typ != UserType {
			return Token{}, ErrPrincipalType
		}
		t.Renewers = append(t.Renewers, r)
	}
	t.HMAC = m.HMAC(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(t)
	return t.clone(), nil
}

func (m *Manager) put(t *Token) {
	if old := m.tokens[t.ID]; old != nil {
		delete(m.byHMAC, old.HMACBase64())
	}
	m.tokens[t.ID] = t
	m.byHMAC[t.HMACBase64()] = t.ID
}

func (m *Manager) byHMACLocked(mac []byte) *Token {
	return m.tokens[m.byHMAC[base64.StdEncoding.EncodeToString(mac)]]
}

// Renew extends the token whose HMAC is mac by renewPeriodMs (the expiry
// time if not positive, and never more), up to its maximum, and returns it
// with its new expiry. Kafka checks, in order: the token exists, it has not
// expired, principal is its owner or a renewer.
func (m *Manager) Renew(nowMs int64, principal string, mac []byte, renewPeriodMs int64) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHMACLocked(mac)
	switch {
	case t == nil:
		return Token{}, ErrNotFound
	case t.expired(nowMs):
		return Token{}, ErrExpired
	case !t.mayRenew(principal):
		return Token{}, ErrOwnerMismatch
	}
	period := m.cfg.ExpiryTimeMs
	if renewPeriodMs > 0 {
		period = min(period, renewPeriodMs)
	}
	t.ExpiryMs = min(t.MaxMs, nowMs+period)
	return t.clone(), nil
}

// Expire sets the token whose HMAC is mac to expire expiryPeriodMs from
// now (up to its maximum) and returns it with that expiry; a negative
// period removes it at once (its expiry is now). Kafka checks, in order:
// the token exists, principal is its owner or a renewer, and (for a period
// not negative) it has not expired.
func (m *Manager) Expire(nowMs int64, principal string, mac []byte, expiryPeriodMs int64) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHMACLocked(mac)
	switch {
	case t == nil:
		return Token{}, ErrNotFound
	case !t.mayRenew(principal):
		return Token{}, ErrOwnerMismatch
	case expiryPeriodMs < 0:
		m.removeLocked(t.ID)
		gone := t.clone()
		gone.ExpiryMs = nowMs
		return gone, nil
	case t.expired(nowMs):
		return Token{}, ErrExpired
	}
	t.ExpiryMs = min(t.MaxMs, saturatingSum(nowMs, expiryPeriodMs))
	return t.clone(), nil
}

func (m *Manager) removeLocked(id string) {
	if t := m.tokens[id]; t != nil {
		delete(m.byHMAC, t.HMACBase64())
		delete(m.tokens, id)
	}
}

// Sweep removes the tokens past their expiry or maximum, as the
// controller's periodic expiry check does, and returns them.
func (m *Manager) Sweep(nowMs int64) []Token {
	m.mu.Lock()
	defer m.mu.Unlock()
	var gone []Token
	for _, id := range m.idsLocked() {
		if t := m.tokens[id]; t.expired(nowMs) {
			gone = append(gone, t.clone())
			m.removeLocked(id)
		}
	}
	return gone
}

func (m *Manager) idsLocked() []string {
	ids := make([]string, 0, len(m.tokens))
	for id := range m.tokens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Lookup is the token with id, for a SCRAM login (Kafka's
// DelegationTokenCache: present until removed, expired or not).
func (m *Manager) Lookup(id string) (Token, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.tokens[id]
	if !ok {
		return Token{}, false
	}
	return t.clone(), true
}

// Describe lists the tokens principal may see, by id, as Kafka's
// DescribeDelegationToken filters them: with owners non-nil, only the
// tokens one of them owns, requested or may renew; of those, the ones
// principal owns, requested or may renew, and the others that
// mayDescribe allows (DESCRIBE on the token, DESCRIBE_TOKENS on its owner).
// An empty non-nil owners lists nothing.
func (m *Manager) Describe(principal string, owners []string, mayDescribe func(Token) bool) []Token {
	if owners != nil && len(owners) == 0 {
		return nil
	}
	m.mu.RLock()
	var cands []Token
	for _, id := range m.idsLocked() {
		t := m.tokens[id]
		if owners != nil && !slices.ContainsFunc(owners, t.OwnerOrRenewer) {
			continue
		}
		cands = append(cands, t.clone())
	}
	m.mu.RUnlock()
	out := cands[:0]
	for _, t := range cands {
		if t.OwnerOrRenewer(principal) || mayDescribe(t) {
			out = append(out, t)
		}
	}
	return out
}

// All lists every token, by id (for persistence).
func (m *Manager) All() []Token {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Token, 0, len(m.tokens))
	for _, id := range m.idsLocked() {
		out = append(out, m.tokens[id].clone())
	}
	return out
}

// Restore puts tokens back (from persisted metadata); each HMAC is
// recomputed from the current secret key, so tokens issued under another
// key no longer log in or match.
func (m *Manager) Restore(tokens []Token) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range tokens {
		c := t.clone()
		c.HMAC = m.HMAC(c.ID)
		m.put(&c)
	}
}
