package authorizer

import (
	"slices"
	"strings"
)

// Set is an immutable set of bindings with the authorizer's settings.
// The zero value holds no ACLs, no super users and denies everything.
type Set struct {
	acls []ACL // in creation order, no duplicates
	// SuperUsers are Kafka's super.users: principals allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACL bool
}

// ACLs returns the bindings in creation order.
func (s *Set) ACLs() []ACL { return slices.Clone(s.acls) }

// Len is the number of bindings.
func (s *Set) Len() int { return len(s.acls) }

// Add returns a set with the bindings added; a binding already present is
// not added twice (Kafka's CreateAcls of an existing binding succeeds and
// changes nothing). The bindings must be valid.
func (s *Set) Add(acls ...ACL) *Set {
	n := *s
	n.acls = slices.Clone(s.acls)
	for _, a := range acls {
		if !slices.Contains(n.acls, a) {
			n.acls = append(n.acls, a)
		}
	}
	return &n
}

// Delete returns a set without the bindings that any filter matches, and
// for each filter the bindings it matched (a binding matched by several
// filters is reported by each, as Kafka does).
func (s *Set) Delete(filters ...Filter) (*Set, [][]ACL) {
	matched := make([][]ACL, len(filters))
	n := *s
	n.acls = nil
	for _, a := range s.acls {
		hit := false
		for i, f := range filters {
			if f.Matches(a) {
				matched[i] = append(matched[i], a)
				hit = true
			}
		}
		if !hit {
			n.acls = append(n.acls, a)
		}
	}
	return &n, matched
}

// Describe returns the bindings the filter matches, in creation order.
func (s *Set) Describe(f Filter) []ACL {
	var out []ACL
	for _, a := range s.acls {
		if f.Matches(a) {
			out = append(out, a)
		}
	}
	return out
}

// Action is one authorization question.
type Action struct {
	Principal    string // "User:alice"
	Host         string // the client's IP address
	Operation    Operation
	ResourceType ResourceType
	Name         string
}

// Authorize answers an action: super users are allowed; otherwise a
// matching DENY denies, else a matching ALLOW allows, else the answer is
// AllowEveryoneIfNoACL when no binding at all covers the resource, and
// deny when some do (for other principals, hosts or operations).
func (s *Set) Authorize(a Action) bool {
	if slices.Contains(s.SuperUsers, a.Principal) {
		return true
	}
	resourceHasACLs, allowed := false, false
	for _, b := range s.acls {
		if !b.matchesResource(a.ResourceType, a.Name) {
			continue
		}
		resourceHasACLs = true
		if !b.matchesWho(a.Principal, a.Host) || !b.covers(a.Operation) {
			continue
		}
		if b.Permission == PermissionDeny {
			return false
		}
		allowed = true
	}
	if !resourceHasACLs {
		return s.AllowEveryoneIfNoACL
	}
	return allowed
}

// AuthorizeAny says whether the principal may do op on at least one
// resource of the type, as Kafka's authorizeByResourceType (used, for
// example, for an idempotent producer without IDEMPOTENT_WRITE on the
// cluster but with WRITE on some topic): an ALLOW literal or prefix survives
// unless a DENY literal of the same name or a DENY prefix of it covers it; a
// DENY of every name (literal "*" or prefix "") denies outright and an ALLOW
// of literal "*" allows.
func (s *Set) AuthorizeAny(principal, host string, op Operation, rt ResourceType) bool {
	// Kafka first asks about a made-up literal name, so super users (and
	// allow.everyone.if.no.acl.found) pass regardless of DENY bindings.
	if s.Authorize(Action{principal, host, op, rt, "hardcode"}) {
		return true
	}
	var denyLiteral, denyPrefix, allowLiteral, allowPrefix []string
	allowEvery := false
	for _, b := range s.acls {
		if b.ResourceType != rt || !b.matchesWho(principal, host) || (b.Operation != op && b.Operation != OpAll) {
			continue
		}
		switch {
		case b.Permission == PermissionDeny && b.Pattern == PatternLiteral:
			if b.Name == Wildcard {
				return false
			}
			denyLiteral = append(denyLiteral, b.Name)
		case b.Permission == PermissionDeny && b.Pattern == PatternPrefixed:
			if b.Name == "" {
				return false
			}
			denyPrefix = append(denyPrefix, b.Name)
		case b.Permission == PermissionAllow && b.Pattern == PatternLiteral:
			if b.Name == Wildcard {
				allowEvery = true // a DENY of every name still wins
				continue
			}
			allowLiteral = append(allowLiteral, b.Name)
		case b.Permission == PermissionAllow && b.Pattern == PatternPrefixed:
			allowPrefix = append(allowPrefix, b.Name)
		}
	}
	if allowEvery {
		return true
	}
	deniedByPrefix := func(name string) bool {
		return slices.ContainsFunc(denyPrefix, func(p string) bool { return strings.HasPrefix(name, p) })
	}
	for _, n := range allowLiteral {
		if !slices.Contains(denyLiteral, n) && !deniedByPrefix(n) {
			return true
		}
	}
	for _, n := range allowPrefix {
		if !deniedByPrefix(n) {
			return true
		}
	}
	return false
}

// Operations a client may be told about per resource type (KIP-430's
// authorized operations), as Kafka's AclEntry.supportedOperations.
var supportedOps = map[ResourceType][]Operation{
	ResourceTopic:           {OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs},
	ResourceGroup:           {OpRead, OpDescribe, OpDelete, OpDescribeConfigs, OpAlterConfigs}, // configs since KIP-848
	ResourceCluster:         {OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe},
	ResourceTransactionalID: {OpDescribe, OpWrite, OpTwoPhaseCommit},
	ResourceDelegationToken: {OpDescribe},
	ResourceUser:            {OpCreateTokens, OpDescribeTokens},
}

// SupportedOperations is the bitfield (1<<op) of every operation Kafka
// reports for the resource type.
func SupportedOperations(rt ResourceType) int32 {
	var bits int32
	for _, op := range supportedOps[rt] {
		bits |= 1 << op
	}
	return bits
}

// AuthorizedOperations is the KIP-430 bitfield (1<<op) of the supported
// operations the principal may do on the resource.
func (s *Set) AuthorizedOperations(principal, host string, rt ResourceType, name string) int32 {
	var bits int32
	for _, op := range supportedOps[rt] {
		if s.Authorize(Action{principal, host, op, rt, name}) {
			bits |= 1 << op
		}
	}
	return bits
}
