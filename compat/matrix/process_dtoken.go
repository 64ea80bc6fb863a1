package matrix

import (
	"context"
	"fmt"
)

// AdapterToken is a delegation token as the client's Admin returns it;
// principals are "Type:Name", times Unix milliseconds, HMAC in base64.
type AdapterToken struct {
	TokenID   string   `json:"tokenId"`
	HMAC      string   `json:"hmac"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers"`
	IssueMs   int64    `json:"issueMs"`
	ExpiryMs  int64    `json:"expiryMs"`
	MaxMs     int64    `json:"maxMs"`
}

// TokenRequest is one Admin delegation-token call (the Java adapter's
// dtoken operation): Op is create, renew, expire or describe.
type TokenRequest struct {
	Op            string
	Owner         string   // create: "User:name", empty for the caller
	Renewers      []string // create
	MaxLifetimeMs int64    // create: -1 for the broker's
	HMAC          string   // renew, expire: base64
	PeriodMs      int64    // renew, expire
	Owners        []string // describe: nil for every token the caller may see
}

// DelegationToken runs req with sc's SASL_SSL settings. Create and
// describe return tokens, renew and expire the new expiry; a refused call
// is an *AdapterError naming the client's exception.
func (p Process) DelegationToken(ctx context.Context, sc SecurityConfig, req TokenRequest) (tokens []AdapterToken, expiryMs int64, err error) {
	cfg := newAdapterConfig(sc.Bootstrap, sc.ClientID).withSecurity(sc)
	cfg.TokenOp, cfg.TokenOwner, cfg.TokenRenewers, cfg.TokenMaxLifetimeMs = req.Op, req.Owner, req.Renewers, req.MaxLifetimeMs
	cfg.TokenHMAC, cfg.TokenPeriodMs, cfg.TokenOwners = req.HMAC, req.PeriodMs, req.Owners
	answered := false
	_, err = p.run(ctx, "dtoken", cfg, nil, func(l adapterLine) {
		switch l.Type {
		case "tokens":
			answered, tokens = true, l.Tokens
		case "expiry":
			answered, expiryMs = true, l.ExpiryMs
		}
	})
	if err == nil && !answered {
		err = fmt.Errorf("%s: no answer to dtoken %s", p.name, req.Op)
	}
	return tokens, expiryMs, err
}
