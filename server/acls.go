package server

// ACLs: the cluster keeps the authorizer's bindings (package authorizer) as
// an immutable set swapped whole on change, so every request reads them
// without a lock. Config.Authorizer turns checking on; without it every
// request is allowed and the ACL APIs answer SECURITY_DISABLED, as a Kafka
// broker without authorizer.class.name does.
//
// Handlers authorize after the fault rules: a fault that replaces the
// answer (or drops the connection) fires for denied requests too, so a
// test can inject errors without granting ACLs first.

import (
	"fmt"
	"net"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateACLs adds bindings, as CreateAcls does; a binding already present
// changes nothing. It fails on the first invalid binding without adding
// any.
func (c *Cluster) CreateACLs(acls ...authorizer.ACL) error {
	for _, a := range acls {
		if err := a.Validate(); err != nil {
			return err
		}
	}
	c.aclMu.Lock()
	defer c.aclMu.Unlock()
	cur := c.acls.Load()
	next := cur.Add(acls...)
	c.acls.Store(next)
	for _, a := range next.ACLs()[cur.Len():] {
		c.emit(EventACLCreated, func(e *Event) { e.Detail = a.String() })
	}
	if next.Len() != cur.Len() {
		c.saveMeta()
	}
	return nil
}

// DeleteACLs removes the bindings any filter matches, as DeleteAcls does,
// and returns per filter the bindings it matched.
func (c *Cluster) DeleteACLs(filters ...authorizer.Filter) ([][]authorizer.ACL, error) {
	for _, f := range filters {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("%w: a filter may not hold UNKNOWN values", err)
		}
	}
	c.aclMu.Lock()
	defer c.aclMu.Unlock()
	cur := c.acls.Load()
	next, matched := cur.Delete(filters...)
	c.acls.Store(next)
	for _, a := range cur.ACLs() {
		if next.Describe(exactFilter(a)) == nil {
			c.emit(EventACLDeleted, func(e *Event) { e.Detail = a.String() })
		}
	}
	if next.Len() != cur.Len() {
		c.saveMeta()
	}
	return matched, nil
}

// ACLs returns every binding in creation order.
func (c *Cluster) ACLs() []authorizer.ACL { return c.acls.Load().ACLs() }

// AuthorizerEnabled says whether requests are checked (Config.Authorizer).
func (c *Cluster) AuthorizerEnabled() bool { return c.cfg.Authorizer }

// exactFilter matches exactly one binding.
func exactFilter(a authorizer.ACL) authorizer.Filter {
	return authorizer.Filter{ResourceType: a.ResourceType, Name: &a.Name, Pattern: a.Pattern,
		Principal: &a.Principal, Host: &a.Host, Operation: a.Operation, Permission: a.Permission}
}

// host is the client's IP address, as ACL hosts name it.
func (cn *conn) host() string {
	if cn.remoteHost != "" {
		return cn.remoteHost
	}
	return hostOf(cn.nc.RemoteAddr())
}

func hostOf(a net.Addr) string {
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// allowed says whether the connection's principal may do op on the
// resource; always true without Config.Authorizer. A denial is recorded
// (denials.go).
func (cn *conn) allowed(op authorizer.Operation, rt authorizer.ResourceType, name string) bool {
	return cn.authorize(op, rt, name, true)
}

// allowedQuiet is allowed for the filters of listings (all topics, all
// groups), where Kafka's authorizer does not log a denial
// (logIfDenied=false): a resource hidden is no denial event.
func (cn *conn) allowedQuiet(op authorizer.Operation, rt authorizer.ResourceType, name string) bool {
	return cn.authorize(op, rt, name, false)
}

func (cn *conn) authorize(op authorizer.Operation, rt authorizer.ResourceType, name string, logDenied bool) bool {
	if !cn.b.c.cfg.Authorizer {
		return true
	}
	host := cn.host()
	ok := cn.b.c.acls.Load().Authorize(authorizer.Action{Principal: cn.principal, Host: host, Operation: op, ResourceType: rt, Name: name})
	if !ok && logDenied {
		cn.recordDenial(op, rt, name, host)
	}
	return ok
}

// The usual questions, one per resource type.
func (cn *conn) allowedTopic(op authorizer.Operation, topic string) bool {
	return cn.allowed(op, authorizer.ResourceTopic, topic)
}

func (cn *conn) allowedGroup(op authorizer.Operation, group string) bool {
	return cn.allowed(op, authorizer.ResourceGroup, group)
}

func (cn *conn) allowedCluster(op authorizer.Operation) bool {
	return cn.allowed(op, authorizer.ResourceCluster, authorizer.ClusterName)
}

func (cn *conn) allowedTxn(op authorizer.Operation, id string) bool {
	return cn.allowed(op, authorizer.ResourceTransactionalID, id)
}

// authorizedOps is the KIP-430 bitfield of what the principal may do on the
// resource: every supported operation without the authorizer.
func (cn *conn) authorizedOps(rt authorizer.ResourceType, name string) int32 {
	if !cn.b.c.cfg.Authorizer {
		return authorizer.SupportedOperations(rt)
	}
	return cn.b.c.acls.Load().AuthorizedOperations(cn.principal, cn.host(), rt, name)
}

// allowedIdempotentWrite is Kafka's check for an idempotent producer
// without a transactional id: IDEMPOTENT_WRITE on the cluster, or WRITE on
// some topic (KIP-679).
func (cn *conn) allowedIdempotentWrite() bool {
	// Kafka asks about IDEMPOTENT_WRITE without logging a denial.
	if !cn.b.c.cfg.Authorizer || cn.allowedQuiet(authorizer.OpIdempotentWrite, authorizer.ResourceCluster, authorizer.ClusterName) {
		return true
	}
	return cn.b.c.acls.Load().AuthorizeAny(cn.principal, cn.host(), authorizer.OpWrite, authorizer.ResourceTopic)
}

// Kafka's authorization error codes.
var (
	errTopicAuth   = kerr.TopicAuthorizationFailed.Code
	errGroupAuth   = kerr.GroupAuthorizationFailed.Code
	errClusterAuth = kerr.ClusterAuthorizationFailed.Code
	errTxnAuth     = kerr.TransactionalIDAuthorizationFailed.Code
)

// errAuth is the first error whose condition holds, or 0.
func errAuth(cond1 bool, code1 int16, cond2 bool, code2 int16) int16 {
	switch {
	case cond1:
		return code1
	case cond2:
		return code2
	}
	return 0
}

// configDenied is the configs APIs' check: op (DESCRIBE_CONFIGS or
// ALTER_CONFIGS) on the topic (TOPIC_AUTHORIZATION_FAILED), the group
// (GROUP_AUTHORIZATION_FAILED) or, for broker, broker-logger and
// client-metrics resources, the cluster (CLUSTER_AUTHORIZATION_FAILED); nil
// when allowed.
func (cn *conn) configDenied(typ kmsg.ConfigResourceType, name string, op authorizer.Operation) *kerr.Error {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if !cn.allowedTopic(op, name) {
			return kerr.TopicAuthorizationFailed
		}
	case kmsg.ConfigResourceType(32): // GROUP (KIP-848)
		if !cn.allowedGroup(op, name) {
			return kerr.GroupAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceType(16): // 16: CLIENT_METRICS
		if !cn.allowedCluster(op) {
			return kerr.ClusterAuthorizationFailed
		}
	}
	return nil
}

// notAuthorizedMsg is the message of Kafka's authorizeClusterOperation
// failures (the APIs the controller checks: reassignments, quorum, SCRAM
// changes), which name the request.
func (cn *conn) notAuthorizedMsg() *string {
	return kmsg.StringPtr(fmt.Sprintf("Request %s from %s is not authorized.", kmsg.NameForKey(cn.hdr.APIKey), cn.principal))
}

// ACLState returns the authorizer's settings and bindings.
func (c *Cluster) ACLState() ACLState {
	st := ACLState{Authorizer: c.cfg.Authorizer, SuperUsers: append([]string{}, c.cfg.SuperUsers...),
		AllowEveryoneIfNoACLFound: c.cfg.AllowEveryoneIfNoACLFound, ACLs: []ACLBinding{}}
	for _, a := range c.ACLs() {
		st.ACLs = append(st.ACLs, ACLBinding{ResourceType: a.ResourceType.String(), ResourceName: a.Name, PatternType: a.Pattern.String(),
			Principal: a.Principal, Host: a.Host, Operation: a.Operation.String(), Permission: a.Permission.String()})
	}
	return st
}
