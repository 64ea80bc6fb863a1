package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tokenCode reads a delegation token answer's code for the ACL table: on
// PLAINTEXT (the table's listener) Kafka refuses token requests before any
// ACL is looked at, so DELEGATION_TOKEN_REQUEST_NOT_ALLOWED counts as "no
// ACL needed"; the owner's CREATE_TOKENS check runs on SASL connections
// (TestDelegationTokenOwnerACL).
func tokenCode(code int16) int16 {
	if code == kerr.DelegationTokenRequestNotAllowed.Code {
		return 0
	}
	return code
}

// wireKeysACLCases are the rows of the keys answered as Kafka answers them
// with the feature off or the topology fixed (delegation_token.go,
// update_features.go, unregister_*.go, *_raft_voter.go,
// streams_group_topology_update.go).
func wireKeysACLCases() []aclCase {
	return []aclCase{
		{name: "CreateDelegationToken", key: 38,
			req: func(*aclEnv) kmsg.Request { return kmsg.NewPtrCreateDelegationTokenRequest() },
			code: func(r kmsg.Response) int16 {
				return tokenCode(r.(*kmsg.CreateDelegationTokenResponse).ErrorCode)
			}},
		{name: "RenewDelegationToken", key: 39,
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrRenewDelegationTokenRequest() },
			code: func(r kmsg.Response) int16 { return tokenCode(r.(*kmsg.RenewDelegationTokenResponse).ErrorCode) }},
		{name: "ExpireDelegationToken", key: 40,
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrExpireDelegationTokenRequest() },
			code: func(r kmsg.Response) int16 { return tokenCode(r.(*kmsg.ExpireDelegationTokenResponse).ErrorCode) }},
		{name: "DescribeDelegationToken", key: 41,
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrDescribeDelegationTokenRequest() },
			code: func(r kmsg.Response) int16 { return tokenCode(r.(*kmsg.DescribeDelegationTokenResponse).ErrorCode) }},
		{name: "UpdateFeatures", key: 57, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrUpdateFeaturesRequest()
				u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
				u.Feature, u.MaxVersionLevel, u.UpgradeType = "share.version", 2, 1
				req.FeatureUpdates, req.ValidateOnly = append(req.FeatureUpdates, u), true
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.UpdateFeaturesResponse).ErrorCode }},
		{name: "UnregisterBroker", key: 64, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrUnregisterBrokerRequest()
				req.BrokerID = 1
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.UnregisterBrokerResponse).ErrorCode }},
		{name: "AddRaftVoter", key: 80, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAddRaftVoterRequest()
				req.VoterID = 5
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AddRaftVoterResponse).ErrorCode }},
		{name: "RemoveRaftVoter", key: 81, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrRemoveRaftVoterRequest()
				req.VoterID = 1
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.RemoveRaftVoterResponse).ErrorCode }},
		{name: "StreamsGroupTopologyDescriptionUpdate", key: 93, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
				req.Group, req.MemberID = "g", "m"
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse).ErrorCode
			}},
		{name: "UnregisterController", key: 94, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrUnregisterControllerRequest()
				req.ControllerID = 7
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.UnregisterControllerResponse).ErrorCode }},
	}
}
