// Package authorizer decides what a principal may do, with the semantics of
// Kafka's StandardAuthorizer: ACL bindings of a resource pattern (LITERAL or
// PREFIXED) and an entry (principal, host, operation, ALLOW or DENY); DENY
// beats ALLOW; an ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE and
// one of ALTER_CONFIGS implies DESCRIBE_CONFIGS; the principal User:* and
// the resource name "*" are wildcards; super users may do everything; a
// resource no ACL names is allowed only with allow.everyone.if.no.acl.found.
//
// It is a pure package: no sockets, goroutines or clocks. A Set is
// immutable; the server swaps whole sets on change and reads them lock-free.
// Every enum uses Kafka's wire codes, so a protocol value converts by a cast.
package authorizer

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ResourceType is Kafka's ResourceType.
type ResourceType int8

const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1 // filters only
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is Kafka's PatternType.
type PatternType int8

const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1 // filters: any pattern type, exact name
	PatternMatch    PatternType = 2 // filters: every pattern that matches the name
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is Kafka's AclOperation.
type Operation int8

const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1 // filters only
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
	OpTwoPhaseCommit  Operation = 15
)

// Permission is Kafka's AclPermissionType.
type Permission int8

const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1 // filters only
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

// Wildcard is the resource name and host that match every name and host.
const Wildcard = "*"

// WildcardPrincipal matches every principal.
const WildcardPrincipal = "User:*"

// ClusterName is the only name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// ACL is one binding: a resource pattern and an access control entry.
type ACL struct {
	ResourceType ResourceType
	Name         string
	Pattern      PatternType // LITERAL or PREFIXED
	Principal    string      // "User:alice", or User:*
	Host         string      // an IP address, a CIDR range (10.0.0.0/8), or *
	Operation    Operation
	Permission   Permission
}

// ErrInvalid wraps every reason an ACL cannot be created; Kafka answers it
// with INVALID_REQUEST.
var ErrInvalid = errors.New("invalid ACL")

// Validate says why Kafka would refuse to create the binding, or nil.
func (a ACL) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch {
	case a.ResourceType < ResourceTopic || a.ResourceType > ResourceUser:
		return bad("invalid resource type %s", a.ResourceType)
	case a.Pattern != PatternLiteral && a.Pattern != PatternPrefixed:
		return bad("invalid pattern type %s", a.Pattern)
	case a.Operation < OpAll || a.Operation > OpTwoPhaseCommit:
		return bad("invalid operation %s", a.Operation)
	case a.Permission != PermissionAllow && a.Permission != PermissionDeny:
		return bad("invalid permission type %s", a.Permission)
	case a.Name == "":
		return bad("invalid empty resource name")
	case a.ResourceType == ResourceCluster && a.Name != ClusterName:
		return bad("the only valid name for the CLUSTER resource is %s", ClusterName)
	case !strings.Contains(a.Principal, ":"):
		return bad("could not parse principal from %q (no colon is found)", a.Principal)
	case a.Host == "":
		return bad("Host pattern cannot be null or empty")
	case strings.Contains(a.Host, "/"):
		if _, err := netip.ParsePrefix(a.Host); err != nil {
			return bad("Invalid CIDR notation '%s': %v", a.Host, err)
		}
	}
	return nil
}

// matchesResource says whether the binding's pattern covers the resource.
func (a ACL) matchesResource(rt ResourceType, name string) bool {
	if a.ResourceType != rt {
		return false
	}
	switch a.Pattern {
	case PatternLiteral:
		return a.Name == name || a.Name == Wildcard
	case PatternPrefixed:
		return strings.HasPrefix(name, a.Name)
	}
	return false
}

// matchesWho says whether the entry applies to the principal and host.
func (a ACL) matchesWho(principal, host string) bool {
	return (a.Principal == principal || a.Principal == WildcardPrincipal) &&
		(a.Host == host || a.Host == Wildcard || inRange(a.Host, host))
}

// inRange says whether host (an IP address) lies in the CIDR range cidr, as
// Kafka's CidrUtils.isInRange: both ends of the range count, an address of
// the other family (or anything unparsable) is not in it, and a host
// without "/" is no range.
func inRange(cidr, host string) bool {
	if !strings.Contains(cidr, "/") {
		return false
	}
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return p.Contains(ip.Unmap())
}

// covers says whether the entry's operation applies to op: ALL covers
// everything; an ALLOW also covers the operations it implies. A DENY covers
// only its own operation (and ALL).
func (a ACL) covers(op Operation) bool {
	if a.Operation == OpAll || a.Operation == op {
		return true
	}
	if a.Permission != PermissionAllow {
		return false
	}
	switch op {
	case OpDescribe:
		return a.Operation == OpRead || a.Operation == OpWrite || a.Operation == OpDelete || a.Operation == OpAlter
	case OpDescribeConfigs:
		return a.Operation == OpAlterConfigs
	}
	return false
}

func (a ACL) String() string {
	return fmt.Sprintf("(%s %s %s) %s %s %s from %s", a.ResourceType, a.Pattern, a.Name, a.Principal, a.Permission, a.Operation, a.Host)
}
