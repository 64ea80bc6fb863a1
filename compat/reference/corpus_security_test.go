package reference

import (
	"bytes"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Security APIs of the corpus, on a PLAINTEXT listener of a cluster without
// an authorizer (Kafka's reference cluster has none; fakekafka runs without
// --authorizer): SaslHandshake and SaslAuthenticate outside a SASL
// exchange, the ACL APIs (SECURITY_DISABLED), client quotas and SCRAM
// credentials. Valid requests at both ends of the common range
// (securityCase), then edge and invalid ones (securityEdgeCases).

// ACL codes (Kafka's AclOperation, ResourceType, PatternType, ...).
const (
	aclAny      = 1
	aclTopic    = 2
	aclLiteral  = 3
	aclRead     = 3
	aclAllow    = 3
	aclUnknown  = 0
	scramSHA256 = 1
	scramSHA512 = 2
)

func aclFilter(v int16) *kmsg.DescribeACLsRequest {
	req := at(v, kmsg.NewPtrDescribeACLsRequest())
	req.ResourceType, req.ResourcePatternType, req.Operation, req.PermissionType = aclAny, aclAny, aclAny, aclAny
	return req
}

func createACLReq(v int16, resourceType kmsg.ACLResourceType) *kmsg.CreateACLsRequest {
	req := at(v, kmsg.NewPtrCreateACLsRequest())
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = resourceType, "corpus", aclLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", aclRead, aclAllow
	req.Creations = append(req.Creations, c)
	return req
}

func deleteACLReq(v int16) *kmsg.DeleteACLsRequest {
	req := at(v, kmsg.NewPtrDeleteACLsRequest())
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = aclTopic, kmsg.StringPtr("corpus"), aclLiteral
	f.Principal, f.Host, f.Operation, f.PermissionType = kmsg.StringPtr("User:alice"), kmsg.StringPtr("*"), aclAny, aclAny
	req.Filters = append(req.Filters, f)
	return req
}

// quotaEntity is an entity from type/name pairs ("" as a name: <default>).
func quotaEntity(kv ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i+1 < len(kv); i += 2 {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type = kv[i]
		if kv[i+1] != "" {
			e.Name = kmsg.StringPtr(kv[i+1])
		}
		out = append(out, e)
	}
	return out
}

// alterQuotasReq sets key to value (remove: removes key) for entity.
func alterQuotasReq(v int16, entity []kmsg.AlterClientQuotasRequestEntryEntity, key string, value float64, remove bool) *kmsg.AlterClientQuotasRequest {
	req := at(v, kmsg.NewPtrAlterClientQuotasRequest())
	e := kmsg.NewAlterClientQuotasRequestEntry()
	e.Entity = entity
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value, op.Remove = key, value, remove
	e.Ops = append(e.Ops, op)
	req.Entries = append(req.Entries, e)
	return req
}

// describeQuotasReq matches each component: typ, match type (0 EXACT,
// 1 DEFAULT, 2 ANY) and the name for EXACT ("" for none).
func describeQuotasReq(v int16, strict bool, typ string, matchType int8, name string) *kmsg.DescribeClientQuotasRequest {
	req := at(v, kmsg.NewPtrDescribeClientQuotasRequest())
	req.Strict = strict
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType = typ, kmsg.QuotasMatchType(matchType)
	if name != "" {
		c.Match = kmsg.StringPtr(name)
	}
	req.Components = append(req.Components, c)
	return req
}

func describeScramReq(v int16, users ...string) *kmsg.DescribeUserSCRAMCredentialsRequest {
	req := at(v, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	for _, u := range users {
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = u
		req.Users = append(req.Users, ru)
	}
	return req
}

// scramUpsert is user's credential for mechanism (1 SHA-256, 2 SHA-512).
func scramUpsert(user string, mechanism int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = user, mechanism, iterations
	u.Salt = []byte("corpus-salt")
	size := 32
	if mechanism == scramSHA512 {
		size = 64
	}
	u.SaltedPassword = bytes.Repeat([]byte{7}, size)
	return u
}

func scramDeletion(user string, mechanism int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = user, mechanism
	return d
}

func alterScramReq(v int16, del []kmsg.AlterUserSCRAMCredentialsRequestDeletion, ups ...kmsg.AlterUserSCRAMCredentialsRequestUpsertion) *kmsg.AlterUserSCRAMCredentialsRequest {
	req := at(v, kmsg.NewPtrAlterUserSCRAMCredentialsRequest())
	req.Deletions, req.Upsertions = del, ups
	return req
}

// telemetryClient is the corpus's telemetry client instance id.
var telemetryClient = [16]byte{0xc0, 0x4f, 0x05, 7: 1, 15: 2}

// securityCase is the valid request of the security APIs at version v, or
// false for an API the corpus sends elsewhere.
func securityCase(key, v int16, oldest bool) (corpusCase, bool) {
	c := corpusCase{name: fmt.Sprintf("%s/v%d", kmsg.NameForKey(key), v)}
	switch kmsg.Key(key) {
	case kmsg.SASLHandshake:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrSASLHandshakeRequest())
			req.Mechanism = "PLAIN"
			return req
		}
	case kmsg.SASLAuthenticate:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrSASLAuthenticateRequest())
			req.SASLAuthBytes = []byte("\x00alice\x00secret")
			return req
		}
	case kmsg.DescribeACLs:
		c.req = func(*corpusEnv) kmsg.Request { return aclFilter(v) }
	case kmsg.CreateACLs:
		c.req = func(*corpusEnv) kmsg.Request { return createACLReq(v, aclTopic) }
	case kmsg.DeleteACLs:
		c.req = func(*corpusEnv) kmsg.Request { return deleteACLReq(v) }
	case kmsg.DescribeClientQuotas:
		// Before any quota is set: nothing to describe.
		c.req = func(*corpusEnv) kmsg.Request { return describeQuotasReq(v, false, "user", 2, "") }
	case kmsg.AlterClientQuotas:
		c.req = func(*corpusEnv) kmsg.Request {
			if oldest {
				return alterQuotasReq(v, quotaEntity("user", "alice"), "producer_byte_rate", 1048576, false)
			}
			return alterQuotasReq(v, quotaEntity("client-id", ""), "consumer_byte_rate", 2097152, false)
		}
	case kmsg.DescribeUserSCRAMCredentials:
		// Before any credential exists: all users, none.
		c.req = func(*corpusEnv) kmsg.Request { return describeScramReq(v) }
	case kmsg.AlterUserSCRAMCredentials:
		c.req = func(*corpusEnv) kmsg.Request {
			return alterScramReq(v, nil, scramUpsert("alice", scramSHA256, 8192), scramUpsert("bob", scramSHA512, 4096))
		}
	default:
		return c, false
	}
	return c, true
}

// waitQuotas waits until broker 1 describes n quota entities: Kafka's
// controller applies the change, and the broker learns it from the
// metadata log.
func waitQuotas(n int) func(*run, *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.waitFor(fmt.Sprintf("%d quota entities", n), func() bool {
			req := at(0, kmsg.NewPtrDescribeClientQuotasRequest())
			return len(r.do(1, req).(*kmsg.DescribeClientQuotasResponse).Entries) == n
		})
	}
}

// waitScram waits until broker 1 describes user's credentials (want) or
// no longer does.
func waitScram(user string, want bool) func(*run, *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.waitFor(fmt.Sprintf("SCRAM credentials of %s: %v", user, want), func() bool {
			resp := r.do(1, describeScramReq(0, user)).(*kmsg.DescribeUserSCRAMCredentialsResponse)
			return len(resp.Results) == 1 && (resp.Results[0].ErrorCode == 0) == want
		})
	}
}

// securityEdgeCases are the security APIs' edge and invalid requests, at
// the newest common version.
func securityEdgeCases(latest func(kmsg.Key) int16) []corpusCase {
	dq, aq := latest(kmsg.DescribeClientQuotas), latest(kmsg.AlterClientQuotas)
	ds, as := latest(kmsg.DescribeUserSCRAMCredentials), latest(kmsg.AlterUserSCRAMCredentials)
	user := func(name string) []kmsg.AlterClientQuotasRequestEntryEntity { return quotaEntity("user", name) }
	return []corpusCase{
		{name: "SASLHandshake/unknown-mechanism", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.SASLHandshake), kmsg.NewPtrSASLHandshakeRequest())
			req.Mechanism = "NO-SUCH-MECHANISM"
			return req
		}},
		{name: "CreateACLs/invalid-binding", req: func(*corpusEnv) kmsg.Request { return createACLReq(latest(kmsg.CreateACLs), aclUnknown) }},
		{name: "DescribeACLs/unknown-filter", req: func(*corpusEnv) kmsg.Request {
			req := aclFilter(latest(kmsg.DescribeACLs))
			req.Operation = aclUnknown
			return req
		}},

		{name: "AlterClientQuotas/user-and-client-id", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, quotaEntity("user", "alice", "client-id", "app"), "request_percentage", 12.5, false)
		}},
		{name: "DescribeClientQuotas/exact-user", settle: waitQuotas(3), req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, false, "user", 0, "alice")
		}},
		{name: "DescribeClientQuotas/default-client-id", req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, false, "client-id", 1, "")
		}},
		{name: "DescribeClientQuotas/strict-any-user", req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, true, "user", 2, "")
		}},
		{name: "DescribeClientQuotas/unknown-entity-type", req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, false, "no-such-type", 2, "")
		}},
		{name: "DescribeClientQuotas/exact-without-name", req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, false, "user", 0, "")
		}},
		{name: "DescribeClientQuotas/repeated-type", req: func(*corpusEnv) kmsg.Request {
			req := describeQuotasReq(dq, false, "user", 2, "")
			req.Components = append(req.Components, req.Components[0])
			return req
		}},
		{name: "DescribeClientQuotas/ip-with-user", req: func(*corpusEnv) kmsg.Request {
			req := describeQuotasReq(dq, false, "user", 2, "")
			req.Components = append(req.Components, describeQuotasReq(dq, false, "ip", 2, "").Components...)
			return req
		}},
		{name: "AlterClientQuotas/unknown-key", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, user("carol"), "no_such_rate", 1, false)
		}},
		{name: "AlterClientQuotas/negative-value", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, user("carol"), "producer_byte_rate", -5, false)
		}},
		{name: "AlterClientQuotas/fractional-byte-rate", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, user("carol"), "producer_byte_rate", 1.5, false)
		}},
		{name: "AlterClientQuotas/ip-key-for-user", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, user("carol"), "connection_creation_rate", 5, false)
		}},
		{name: "AlterClientQuotas/ip-with-user", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, quotaEntity("user", "carol", "ip", "127.0.0.1"), "producer_byte_rate", 5, false)
		}},
		{name: "AlterClientQuotas/repeated-entity-type", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, quotaEntity("user", "carol", "user", "dave"), "producer_byte_rate", 5, false)
		}},
		{name: "AlterClientQuotas/unknown-entity-type", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, quotaEntity("no-such-type", "x"), "producer_byte_rate", 5, false)
		}},
		// No ip entity with a host name: Kafka's check of it asks the DNS
		// resolver, traffic off this machine (fakekafka checks the name's
		// form only, TestQuotaIPHostNames).
		{name: "AlterClientQuotas/one-good-one-bad-validate-only", req: func(*corpusEnv) kmsg.Request {
			req := alterQuotasReq(aq, user("carol"), "request_percentage", 50, false)
			req.Entries = append(req.Entries, alterQuotasReq(aq, user("dave"), "no_such_rate", 1, false).Entries...)
			req.ValidateOnly = true
			return req
		}},
		{name: "AlterClientQuotas/remove-absent-key", req: func(*corpusEnv) kmsg.Request {
			return alterQuotasReq(aq, user("alice"), "consumer_byte_rate", 0, true)
		}},
		{name: "DescribeClientQuotas/after-validate-only", req: func(*corpusEnv) kmsg.Request {
			return describeQuotasReq(dq, false, "user", 0, "carol")
		}},
		// Every quota set above goes again: the scenarios that run after
		// the corpus share both clusters.
		{name: "AlterClientQuotas/remove-all", req: func(*corpusEnv) kmsg.Request {
			req := alterQuotasReq(aq, user("alice"), "producer_byte_rate", 0, true)
			for _, e := range []*kmsg.AlterClientQuotasRequest{
				alterQuotasReq(aq, quotaEntity("client-id", ""), "consumer_byte_rate", 0, true),
				alterQuotasReq(aq, quotaEntity("user", "alice", "client-id", "app"), "request_percentage", 0, true),
				alterQuotasReq(aq, user("dave"), "producer_byte_rate", 0, true),
			} {
				req.Entries = append(req.Entries, e.Entries...)
			}
			return req
		}},
		{name: "DescribeClientQuotas/after-remove-all", settle: waitQuotas(0), req: func(*corpusEnv) kmsg.Request {
			return at(dq, kmsg.NewPtrDescribeClientQuotasRequest())
		}},

		{name: "DescribeUserSCRAMCredentials/known-and-unknown", settle: waitScram("bob", true), req: func(*corpusEnv) kmsg.Request {
			return describeScramReq(ds, "alice", "nobody")
		}},
		{name: "DescribeUserSCRAMCredentials/duplicate-user", req: func(*corpusEnv) kmsg.Request {
			return describeScramReq(ds, "alice", "alice")
		}},
		{name: "DescribeUserSCRAMCredentials/empty-name", req: func(*corpusEnv) kmsg.Request { return describeScramReq(ds, "") }},
		{name: "AlterUserSCRAMCredentials/iterations-too-low", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, nil, scramUpsert("carol", scramSHA256, 100))
		}},
		{name: "AlterUserSCRAMCredentials/iterations-too-high", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, nil, scramUpsert("carol", scramSHA512, 1000000))
		}},
		{name: "AlterUserSCRAMCredentials/unknown-mechanism", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, nil, scramUpsert("carol", 0, 8192))
		}},
		{name: "AlterUserSCRAMCredentials/mechanism-out-of-range", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, nil, scramUpsert("carol", 9, 8192))
		}},
		{name: "AlterUserSCRAMCredentials/empty-user", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, nil, scramUpsert("", scramSHA256, 8192))
		}},
		{name: "AlterUserSCRAMCredentials/empty-salt", req: func(*corpusEnv) kmsg.Request {
			u := scramUpsert("carol", scramSHA256, 8192)
			u.Salt = nil
			return alterScramReq(as, nil, u)
		}},
		{name: "AlterUserSCRAMCredentials/empty-salted-password", req: func(*corpusEnv) kmsg.Request {
			u := scramUpsert("carol", scramSHA256, 8192)
			u.SaltedPassword = nil
			return alterScramReq(as, nil, u)
		}},
		{name: "AlterUserSCRAMCredentials/delete-unknown", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, []kmsg.AlterUserSCRAMCredentialsRequestDeletion{scramDeletion("nobody", scramSHA256)})
		}},
		{name: "AlterUserSCRAMCredentials/upsert-and-delete-same-user", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, []kmsg.AlterUserSCRAMCredentialsRequestDeletion{scramDeletion("carol", scramSHA512)}, scramUpsert("carol", scramSHA256, 8192))
		}},
		{name: "AlterUserSCRAMCredentials/delete", req: func(*corpusEnv) kmsg.Request {
			return alterScramReq(as, []kmsg.AlterUserSCRAMCredentialsRequestDeletion{scramDeletion("bob", scramSHA512)})
		}},
		{name: "DescribeUserSCRAMCredentials/after-delete", settle: waitScram("bob", false), req: func(*corpusEnv) kmsg.Request {
			return describeScramReq(ds, "alice", "bob", "carol")
		}},

		// Telemetry (KIP-714): neither cluster advertises it without a
		// metrics plugin, and both answer it anyway.
		{name: "GetTelemetrySubscriptions/new-client", blank: []string{"ClientInstanceID", "SubscriptionID"}, req: func(*corpusEnv) kmsg.Request {
			return at(0, kmsg.NewPtrGetTelemetrySubscriptionsRequest()) // both pick a random id, and the subscription id follows it
		}},
		{name: "GetTelemetrySubscriptions/known-client", req: func(*corpusEnv) kmsg.Request {
			req := at(0, kmsg.NewPtrGetTelemetrySubscriptionsRequest())
			req.ClientInstanceID = telemetryClient
			return req
		}, after: func(e *corpusEnv, resp kmsg.Response) {
			e.subscription = resp.(*kmsg.GetTelemetrySubscriptionsResponse).SubscriptionID
		}},
		{name: "PushTelemetry/current-subscription", req: func(e *corpusEnv) kmsg.Request {
			req := at(0, kmsg.NewPtrPushTelemetryRequest())
			req.ClientInstanceID, req.SubscriptionID = telemetryClient, e.subscription
			return req
		}},
		// Not sent: a second request or push within the push interval.
		// Kafka throttles it or not depending on when the broker last
		// re-evaluated the instance's subscription (asynchronously), so
		// two runs disagree; fakekafka never throttles (telemetry.go).
		{name: "PushTelemetry/reserved-client-instance-id", req: func(*corpusEnv) kmsg.Request {
			req := at(0, kmsg.NewPtrPushTelemetryRequest())
			req.ClientInstanceID = [16]byte{15: 1}
			return req
		}},
		{name: "PushTelemetry/unknown-subscription", req: func(*corpusEnv) kmsg.Request {
			req := at(0, kmsg.NewPtrPushTelemetryRequest())
			req.ClientInstanceID, req.SubscriptionID = [16]byte{1, 2, 3}, 12345
			return req
		}},
		{name: "PushTelemetry/no-client-instance-id", req: func(*corpusEnv) kmsg.Request {
			return at(0, kmsg.NewPtrPushTelemetryRequest())
		}},
	}
}
