package server

// CreateDelegationToken v1-3, RenewDelegationToken v1-2,
// ExpireDelegationToken v1-2 and DescribeDelegationToken v1-3, answered as
// Kafka 4.4 answers them with delegation tokens disabled (no
// delegation.token.secret.key, its default). Delegation tokens (KIP-48)
// are a later piece of work; it replaces this file.
//
// Kafka's broker first refuses token requests on a channel that cannot
// carry them: PLAINTEXT, SSL without a client certificate (principal
// ANONYMOUS), or a token-authenticated one (fakekafka has none), with
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED. On the others, CreateDelegationToken
// checks its owner (a token for another principal needs CREATE_TOKENS on
// that USER: DELEGATION_TOKEN_AUTHORIZATION_FAILED) and its renewers (type
// "User" only: INVALID_PRINCIPAL_TYPE), and then every request is
// DELEGATION_TOKEN_AUTH_DISABLED. CreateDelegationToken's answer names the
// owner (the requester when none is given) and, from v3, the requester;
// its timestamps are -1.

import (
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
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
	default:
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
	}
	return resp, nil
}

func (cn *conn) handleRenewDelegationToken(req *kmsg.RenewDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = cn.tokensDisabled(), -1
	return resp, nil
}

func (cn *conn) handleExpireDelegationToken(req *kmsg.ExpireDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = cn.tokensDisabled(), -1
	return resp, nil
}

func (cn *conn) handleDescribeDelegationToken(req *kmsg.DescribeDelegationTokenRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	resp.ErrorCode = cn.tokensDisabled()
	return resp, nil
}

// allowTokenRequests is Kafka's check of the channel a token request came
// on.
func (cn *conn) allowTokenRequests() bool {
	switch cn.bl.protocol {
	case "PLAINTEXT":
		return false
	case "SSL":
		return cn.principal != anonymousPrincipal
	}
	return true
}

// tokensDisabled is the answer to a token request with tokens disabled.
func (cn *conn) tokensDisabled() int16 {
	if !cn.allowTokenRequests() {
		return kerr.DelegationTokenRequestNotAllowed.Code
	}
	return kerr.DelegationTokenAuthDisabled.Code
}
