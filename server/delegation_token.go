package server

// CreateDelegationToken v1-3, RenewDelegationToken v1-2,
// ExpireDelegationToken v1-2 and DescribeDelegationToken v1-3: delegation
// tokens (KIP-48), with their rules in package delegation. They are on
// when Config.DelegationTokenSecretKey (delegation.token.secret.key) is
// set; without it every request is answered as Kafka 4.4 answers it with
// tokens disabled.
//
// Kafka's broker first refuses token requests on a channel that cannot
// carry them: PLAINTEXT, SSL without a client certificate (principal
// ANONYMOUS), or a token-authenticated one, with
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED. On the others, CreateDelegationToken
// checks its owner (a token for another principal needs CREATE_TOKENS on
// that USER: DELEGATION_TOKEN_AUTHORIZATION_FAILED) and its renewers (type
// "User" only: INVALID_PRINCIPAL_TYPE); with tokens disabled every request
// then gets DELEGATION_TOKEN_AUTH_DISABLED. CreateDelegationToken's answer
// names the owner (the requester when none is given) and, from v3, the
// requester; disabled, its timestamps are -1.
//
// Create, Renew and Expire are the controller's in Kafka, and their
// errors there leave the answer's timestamps 0; Describe is the broker's.
// Checked by hand against Kafka 4.4 with a key: those zeros, the order of
// the checks, a token past its expiry still logging in until the expiry
// check removes it, and every failed token login answered with the
// generic SCRAM failure.
//
// The tokens are the cluster's, as Kafka's metadata log holds them: every
// broker sees the same, a broker restart keeps them, and with
// Config.DataDir meta.json keeps them across a cluster restart (their
// HMACs are recomputed from the key then). Expired tokens are removed
// every delegation.token.expiry.check.interval.ms on the cluster clock.

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/delegation"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// userPrincipalType is the only principal type Kafka issues tokens to.
const userPrincipalType = "User"

func (cn *conn) handleCreateDelegationToken(req *kmsg.CreateDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	reqType, reqName, _ := strings.Cut(cn.principal, ":")
	ownerType, ownerName := reqType, reqName
	if req.OwnerPrincipalName != nil && *req.OwnerPrincipalName != "" {
		ownerName, ownerType = *req.OwnerPrincipalName, ""
		if req.OwnerPrincipalType != nil {
			ownerType = *req.OwnerPrincipalType
		}
	}
	resp.PrincipalType, resp.PrincipalName = ownerType, ownerName
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = reqType, reqName
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
	resp.HMAC = []byte{}
	owner := ownerType + ":" + ownerName
	badType := false
	for _, r := range req.Renewers {
		badType = badType || r.PrincipalType != userPrincipalType
	}
	switch {
	case !cn.allowTokenRequests():
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
	case owner != cn.principal && !cn.allowed(authorizer.OpCreateTokens, authorizer.ResourceUser, owner):
		resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
	case badType:
		resp.ErrorCode = kerr.InvalidPrincipalType.Code
	case cn.b.c.tokens == nil:
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
	default:
		cn.createToken(req, resp, owner)
	}
	return resp, nil
}

func (cn *conn) createToken(req *kmsg.CreateDelegationTokenRequest, resp *kmsg.CreateDelegationTokenResponse, owner string) {
	c := cn.b.c
	var renewers []string
	for _, r := range req.Renewers {
		renewers = append(renewers, r.PrincipalType+":"+r.PrincipalName)
	}
	t, err := c.tokens.Create(c.now().UnixMilli(), newTokenID(), owner, cn.principal, renewers, req.MaxLifetimeMillis)
	if err != nil {
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = 0, 0, 0
		resp.ErrorCode = tokenErrorCode(err)
		return
	}
	resp.TokenID, resp.HMAC = t.ID, t.HMAC
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = t.IssueMs, t.ExpiryMs, t.MaxMs
	c.tokensChanged("created", t)
}

// newTokenID is a token id as Kafka makes one: a random UUID in URL-safe
// base64 without padding, never starting with '-'.
func newTokenID() string {
	for {
		var b [16]byte
		rand.Read(b[:])
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id
		}
	}
}

// tokenErrorCode is the Kafka error of a delegation package error.
func tokenErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, delegation.ErrNotFound):
		return kerr.DelegationTokenNotFound.Code
	case errors.Is(err, delegation.ErrExpired):
		return kerr.DelegationTokenExpired.Code
	case errors.Is(err, delegation.ErrOwnerMismatch):
		return kerr.DelegationTokenOwnerMismatch.Code
	case errors.Is(err, delegation.ErrPrincipalType):
		return kerr.InvalidPrincipalType.Code
	}
	return kerr.UnknownServerError.Code
}

func (cn *conn) handleRenewDelegationToken(req *kmsg.RenewDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = cn.tokensDisabled(), -1
	if resp.ErrorCode == 0 {
		c := cn.b.c
		t, err := c.tokens.Renew(c.now().UnixMilli(), cn.principal, req.HMAC, req.RenewTimeMillis)
		if resp.ExpiryTimestamp, resp.ErrorCode = t.ExpiryMs, tokenErrorCode(err); err == nil {
			c.tokensChanged("renewed", t)
		}
	}
	return resp, nil
}

func (cn *conn) handleExpireDelegationToken(req *kmsg.ExpireDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = cn.tokensDisabled(), -1
	if resp.ErrorCode == 0 {
		c := cn.b.c
		t, err := c.tokens.Expire(c.now().UnixMilli(), cn.principal, req.HMAC, req.ExpiryPeriodMillis)
		if resp.ExpiryTimestamp, resp.ErrorCode = t.ExpiryMs, tokenErrorCode(err); err == nil {
			c.tokensChanged("expired", t)
		}
	}
	return resp, nil
}

func (cn *conn) handleDescribeDelegationToken(req *kmsg.DescribeDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	if resp.ErrorCode = cn.tokensDisabled(); resp.ErrorCode != 0 {
		return resp, nil
	}
	var owners []string
	if req.Owners != nil {
		owners = []string{}
		for _, o := range req.Owners {
			owners = append(owners, o.PrincipalType+":"+o.PrincipalName)
		}
	}
	// Tokens the principal neither owns, requested nor renews need DESCRIBE
	// on the token or DESCRIBE_TOKENS on its owner.
	may := func(t delegation.Token) bool {
		return cn.allowed(authorizer.OpDescribe, authorizer.ResourceDelegationToken, t.ID) ||
			cn.allowed(authorizer.OpDescribeTokens, authorizer.ResourceUser, t.Owner)
	}
	for _, t := range cn.b.c.tokens.Describe(cn.principal, owners, may) {
		d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		d.PrincipalType, d.PrincipalName, _ = strings.Cut(t.Owner, ":")
		d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName, _ = strings.Cut(t.Requester, ":")
		d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.IssueMs, t.ExpiryMs, t.MaxMs
		d.TokenID, d.HMAC = t.ID, t.HMAC
		for _, r := range t.Renewers {
			rn := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
			rn.PrincipalType, rn.PrincipalName, _ = strings.Cut(r, ":")
			d.Renewers = append(d.Renewers, rn)
		}
		resp.TokenDetails = append(resp.TokenDetails, d)
	}
	return resp, nil
}

// allowTokenRequests is Kafka's check of the channel a token request came
// on.
func (cn *conn) allowTokenRequests() bool {
	if cn.tokenAuthenticated {
		return false
	}
	switch cn.bl.protocol {
	case "PLAINTEXT":
		return false
	case "SSL":
		return cn.principal != anonymousPrincipal
	}
	return true
}

// tokensDisabled is the error of a token request on a channel that may
// not send one or with tokens disabled, else 0.
func (cn *conn) tokensDisabled() int16 {
	switch {
	case !cn.allowTokenRequests():
		return kerr.DelegationTokenRequestNotAllowed.Code
	case cn.b.c.tokens == nil:
		return kerr.DelegationTokenAuthDisabled.Code
	}
	return 0
}

// newTokens is the cluster's token store, nil with tokens disabled.
func newTokens(cfg *Config) *delegation.Manager {
	if cfg.DelegationTokenSecretKey == "" {
		return nil
	}
	return delegation.New(delegation.Config{SecretKey: cfg.DelegationTokenSecretKey,
		MaxLifetimeMs: cfg.DelegationTokenMaxLifetime.Milliseconds(), ExpiryTimeMs: cfg.DelegationTokenExpiryTime.Milliseconds()})
}

// tokenExpiryCheckInterval is delegation.token.expiry.check.interval.ms.
func (c *Cluster) tokenExpiryCheckInterval() time.Duration {
	if d := c.cfg.DelegationTokenExpiryCheckInterval; d > 0 {
		return d
	}
	return time.Duration(delegation.DefaultExpiryCheckIntervalMs) * time.Millisecond
}

// sweepTokens removes the expired tokens, as the controller's periodic
// expiry check does.
func (c *Cluster) sweepTokens() {
	for _, t := range c.tokens.Sweep(c.now().UnixMilli()) {
		c.log.Info("delegation token expired", "token", t.ID, "owner", t.Owner)
		c.tokensChanged("removed", t)
	}
}

// tokensChanged keeps the tokens in meta.json (Config.DataDir) and tells
// of the change with a delegation_token_changed event.
func (c *Cluster) tokensChanged(reason string, t delegation.Token) {
	c.saveMeta()
	c.emit(EventDelegationTokenChanged, func(e *Event) {
		e.Reason, e.Detail = reason, fmt.Sprintf("token %s of %s, expiry %d", t.ID, t.Owner, t.ExpiryMs)
	})
}

// tokenUsers are the SASL users and the delegation tokens, for a SCRAM
// login with tokenauth=true (Kafka's DelegationTokenCache).
type tokenUsers struct {
	*saslUsers
	tokens *delegation.Manager
}

// Token is the token's SCRAM credential for mech, derived from its HMAC
// in base64 with Kafka's minimum iterations, as Kafka derives it.
func (u tokenUsers) Token(mech, id string) (sasl.ScramCredential, string, time.Time, bool) {
	t, ok := u.tokens.Lookup(id)
	if !ok {
		return sasl.ScramCredential{}, "", time.Time{}, false
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	cred, err := sasl.NewScramCredential(mech, t.HMACBase64(), salt, sasl.MinIterations)
	if err != nil {
		return sasl.ScramCredential{}, "", time.Time{}, false
	}
	_, owner, _ := strings.Cut(t.Owner, ":")
	return cred, owner, time.UnixMilli(t.ExpiryMs), true
}

// metaTokens are the tokens for meta.json.
func (c *Cluster) metaTokens() []storage.MetaDelegationToken {
	if c.tokens == nil {
		return nil
	}
	var out []storage.MetaDelegationToken
	for _, t := range c.tokens.All() {
		out = append(out, storage.MetaDelegationToken{ID: t.ID, Owner: t.Owner, Requester: t.Requester,
			Renewers: t.Renewers, Issue: t.IssueMs, Expiry: t.ExpiryMs, Max: t.MaxMs})
	}
	return out
}

// restoreTokens puts meta.json's tokens back; with tokens now disabled
// they are dropped.
func (c *Cluster) restoreTokens(ms []storage.MetaDelegationToken) {
	if c.tokens == nil {
		return
	}
	var ts []delegation.Token
	for _, m := range ms {
		ts = append(ts, delegation.Token{ID: m.ID, Owner: m.Owner, Requester: m.Requester, Renewers: m.Renewers,
			IssueMs: m.Issue, ExpiryMs: m.Expiry, MaxMs: m.Max})
	}
	c.tokens.Restore(ts)
}
