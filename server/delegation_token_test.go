package server

import (
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestDelegationTokensDisabled: every token API over PLAINTEXT gets
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, and over SASL
// DELEGATION_TOKEN_AUTH_DISABLED, as Kafka 4.4 without
// delegation.token.secret.key answers; CreateDelegationToken names the
// owner and (v3) the requester.
func TestDelegationTokensDisabled(t *testing.T) {
	c := securedCluster(t, Config{})
	ctx := testContext(t)
	plainCl := newClient(t, c)
	saslCl, err := kgo.NewClient(kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(saslCl.Close)

	for _, tc := range []struct {
		name string
		cl   *kgo.Client
		want int16
	}{
		{"PLAINTEXT", plainCl, kerr.DelegationTokenRequestNotAllowed.Code},
		{"SASL_PLAINTEXT", saslCl, kerr.DelegationTokenAuthDisabled.Code},
	} {
		create := kmsg.NewPtrCreateDelegationTokenRequest()
		create.SetVersion(3)
		cr, err := create.RequestWith(ctx, tc.cl)
		if err != nil {
			t.Fatal(err)
		}
		wantPrincipal := "ANONYMOUS"
		if tc.cl == saslCl {
			wantPrincipal = "alice"
		}
		if cr.ErrorCode != tc.want || cr.PrincipalType != "User" || cr.PrincipalName != wantPrincipal ||
			cr.TokenRequesterPrincipalName != wantPrincipal || cr.IssueTimestamp != -1 || cr.MaxTimestamp != -1 || len(cr.HMAC) != 0 {
			t.Errorf("%s: CreateDelegationToken %+v, want code %d for User:%s", tc.name, cr, tc.want, wantPrincipal)
		}
		renew := kmsg.NewPtrRenewDelegationTokenRequest()
		renew.HMAC = []byte("x")
		if r, err := renew.RequestWith(ctx, tc.cl); err != nil || r.ErrorCode != tc.want || r.ExpiryTimestamp != -1 {
			t.Errorf("%s: RenewDelegationToken %v %+v", tc.name, err, r)
		}
		expire := kmsg.NewPtrExpireDelegationTokenRequest()
		if r, err := expire.RequestWith(ctx, tc.cl); err != nil || r.ErrorCode != tc.want || r.ExpiryTimestamp != -1 {
			t.Errorf("%s: ExpireDelegationToken %v %+v", tc.name, err, r)
		}
		describe := kmsg.NewPtrDescribeDelegationTokenRequest()
		if r, err := describe.RequestWith(ctx, tc.cl); err != nil || r.ErrorCode != tc.want || r.TokenDetails != nil {
			t.Errorf("%s: DescribeDelegationToken %v %+v", tc.name, err, r)
		}
	}

	// A renewer that is not a User is refused before the disabled check.
	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "Group", PrincipalName: "x"}}
	if r, err := create.RequestWith(ctx, saslCl); err != nil || r.ErrorCode != kerr.InvalidPrincipalType.Code {
		t.Errorf("renewer Group:x: %v %+v, want INVALID_PRINCIPAL_TYPE", err, r)
	}
}

// TestDelegationTokenOwnerACL: a token for another owner needs
// CREATE_TOKENS on that USER; with it the request reaches the (disabled)
// token manager.
func TestDelegationTokenOwnerACL(t *testing.T) {
	c := securedCluster(t, Config{Authorizer: true})
	ctx := testContext(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	create := func(owner string) int16 {
		req := kmsg.NewPtrCreateDelegationTokenRequest()
		req.SetVersion(3)
		req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr(owner)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.PrincipalName != owner || resp.TokenRequesterPrincipalName != "alice" {
			t.Errorf("owner %s: answer names %s (requester %s)", owner, resp.PrincipalName, resp.TokenRequesterPrincipalName)
		}
		return resp.ErrorCode
	}
	if code := create("alice"); code != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("own token: code %d, want DELEGATION_TOKEN_AUTH_DISABLED", code)
	}
	if code := create("bob"); code != kerr.DelegationTokenAuthorizationFailed.Code {
		t.Errorf("bob's token without CREATE_TOKENS: code %d, want DELEGATION_TOKEN_AUTHORIZATION_FAILED", code)
	}
	if err := c.CreateACLs(authorizer.ACL{ResourceType: authorizer.ResourceUser, Name: "User:bob", Pattern: authorizer.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: authorizer.OpCreateTokens, Permission: authorizer.PermissionAllow}); err != nil {
		t.Fatal(err)
	}
	if code := create("bob"); code != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("bob's token with CREATE_TOKENS: code %d, want DELEGATION_TOKEN_AUTH_DISABLED", code)
	}
}
