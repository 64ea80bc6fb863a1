package authorizer

import (
	"errors"
	"testing"
)

func allow(rt ResourceType, pt PatternType, name, principal string, op Operation) ACL {
	return ACL{rt, name, pt, principal, Wildcard, op, PermissionAllow}
}

func deny(rt ResourceType, pt PatternType, name, principal string, op Operation) ACL {
	return ACL{rt, name, pt, principal, Wildcard, op, PermissionDeny}
}

func TestAuthorize(t *testing.T) {
	const alice, bob = "User:alice", "User:bob"
	topic := func(name string, op Operation) Action { return Action{alice, "10.0.0.1", op, ResourceTopic, name} }
	for _, tc := range []struct {
		name     string
		acls     []ACL
		everyone bool
		super    []string
		action   Action
		want     bool
	}{
		{"no ACLs denies by default", nil, false, nil, topic("t", OpRead), false},
		{"no ACLs with allow.everyone.if.no.acl.found", nil, true, nil, topic("t", OpRead), true},
		{"ACLs for another principal keep the default from applying", []ACL{allow(ResourceTopic, PatternLiteral, "t", bob, OpRead)}, true, nil, topic("t", OpRead), false},
		{"ACLs on another resource leave the default", []ACL{allow(ResourceTopic, PatternLiteral, "u", bob, OpRead)}, true, nil, topic("t", OpRead), true},
		{"literal allow", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpRead), true},
		{"literal is exact", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("tt", OpRead), false},
		{"other operation", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpWrite), false},
		{"other resource type", []ACL{allow(ResourceGroup, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpRead), false},
		{"wildcard resource", []ACL{allow(ResourceTopic, PatternLiteral, "*", alice, OpWrite)}, false, nil, topic("anything", OpWrite), true},
		{"wildcard principal", []ACL{allow(ResourceTopic, PatternLiteral, "t", WildcardPrincipal, OpRead)}, false, nil, topic("t", OpRead), true},
		{"prefixed", []ACL{allow(ResourceTopic, PatternPrefixed, "orders.", alice, OpRead)}, false, nil, topic("orders.eu", OpRead), true},
		{"prefixed needs the prefix", []ACL{allow(ResourceTopic, PatternPrefixed, "orders.", alice, OpRead)}, false, nil, topic("orders", OpRead), false},
		{"prefixed * is not a wildcard", []ACL{allow(ResourceTopic, PatternPrefixed, "*", alice, OpRead)}, false, nil, topic("t", OpRead), false},
		{"ALL covers every operation", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpAll)}, false, nil, topic("t", OpAlterConfigs), true},
		{"READ implies DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpDescribe), true},
		{"WRITE implies DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, false, nil, topic("t", OpDescribe), true},
		{"DELETE implies DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpDelete)}, false, nil, topic("t", OpDescribe), true},
		{"ALTER implies DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpAlter)}, false, nil, topic("t", OpDescribe), true},
		{"CREATE does not imply DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpCreate)}, false, nil, topic("t", OpDescribe), false},
		{"ALTER_CONFIGS implies DESCRIBE_CONFIGS", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpAlterConfigs)}, false, nil, topic("t", OpDescribeConfigs), true},
		{"DESCRIBE implies nothing", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpDescribe)}, false, nil, topic("t", OpRead), false},
		{"DENY beats ALLOW", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead), deny(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpRead), false},
		{"wildcard DENY beats literal ALLOW", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpAll), deny(ResourceTopic, PatternLiteral, "*", WildcardPrincipal, OpWrite)}, false, nil, topic("t", OpWrite), false},
		{"prefixed DENY beats literal ALLOW", []ACL{allow(ResourceTopic, PatternLiteral, "secret.x", alice, OpRead), deny(ResourceTopic, PatternPrefixed, "secret.", alice, OpRead)}, false, nil, topic("secret.x", OpRead), false},
		{"DENY READ does not deny DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false, nil, topic("t", OpDescribe), true},
		{"DENY ALL denies DESCRIBE", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "t", alice, OpAll)}, false, nil, topic("t", OpDescribe), false},
		{"DENY for another principal", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead), deny(ResourceTopic, PatternLiteral, "t", bob, OpRead)}, false, nil, topic("t", OpRead), true},
		{"host must match", []ACL{{ResourceTopic, "t", PatternLiteral, alice, "10.0.0.2", OpRead, PermissionAllow}}, false, nil, topic("t", OpRead), false},
		{"exact host", []ACL{{ResourceTopic, "t", PatternLiteral, alice, "10.0.0.1", OpRead, PermissionAllow}}, false, nil, topic("t", OpRead), true},
		{"DENY from another host", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead), {ResourceTopic, "t", PatternLiteral, alice, "10.0.0.9", OpRead, PermissionDeny}}, false, nil, topic("t", OpRead), true},
		{"super user beats DENY", []ACL{deny(ResourceTopic, PatternLiteral, "*", WildcardPrincipal, OpAll)}, false, []string{alice}, topic("t", OpRead), true},
		{"super user without ACLs", nil, false, []string{alice}, Action{alice, "h", OpAlter, ResourceCluster, ClusterName}, true},
		{"cluster ACL", []ACL{allow(ResourceCluster, PatternLiteral, ClusterName, alice, OpCreate)}, false, nil, Action{alice, "h", OpCreate, ResourceCluster, ClusterName}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := (&Set{SuperUsers: tc.super, AllowEveryoneIfNoACL: tc.everyone}).Add(tc.acls...)
			if got := s.Authorize(tc.action); got != tc.want {
				t.Fatalf("Authorize(%+v) = %v, want %v", tc.action, got, tc.want)
			}
		})
	}
}

func TestAuthorizeAny(t *testing.T) {
	const alice = "User:alice"
	for _, tc := range []struct {
		name string
		acls []ACL
		want bool
	}{
		{"nothing", nil, false},
		{"a literal allow", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, true},
		{"ALL counts", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpAll)}, true},
		{"another operation", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpRead)}, false},
		{"literal allow denied by the same literal", []ACL{allow(ResourceTopic, PatternLiteral, "t", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, false},
		{"literal allow denied by a prefix", []ACL{allow(ResourceTopic, PatternLiteral, "abc", alice, OpWrite), deny(ResourceTopic, PatternPrefixed, "ab", alice, OpWrite)}, false},
		{"prefix allow wider than the deny prefix", []ACL{allow(ResourceTopic, PatternPrefixed, "a", alice, OpWrite), deny(ResourceTopic, PatternPrefixed, "ab", alice, OpWrite)}, true},
		{"literal deny does not cover a prefix allow", []ACL{allow(ResourceTopic, PatternPrefixed, "a", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "a", alice, OpWrite)}, true},
		{"deny of every name", []ACL{allow(ResourceTopic, PatternLiteral, "*", alice, OpWrite), deny(ResourceTopic, PatternLiteral, "*", alice, OpWrite)}, false},
		{"wildcard allow", []ACL{allow(ResourceTopic, PatternLiteral, "*", WildcardPrincipal, OpWrite), deny(ResourceTopic, PatternLiteral, "t", alice, OpWrite)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := (&Set{}).Add(tc.acls...)
			if got := s.AuthorizeAny(alice, "h", OpWrite, ResourceTopic); got != tc.want {
				t.Fatalf("AuthorizeAny = %v, want %v", got, tc.want)
			}
		})
	}
	if !(&Set{SuperUsers: []string{alice}}).Add(deny(ResourceTopic, PatternLiteral, "*", alice, OpAll)).AuthorizeAny(alice, "h", OpWrite, ResourceTopic) {
		t.Fatal("a super user may write some topic whatever the DENY bindings")
	}
}

func TestFilterMatches(t *testing.T) {
	str := func(s string) *string { return &s }
	lit := allow(ResourceTopic, PatternLiteral, "orders", "User:alice", OpRead)
	wild := allow(ResourceTopic, PatternLiteral, "*", "User:alice", OpRead)
	pre := allow(ResourceTopic, PatternPrefixed, "ord", "User:alice", OpRead)
	other := allow(ResourceGroup, PatternLiteral, "orders", "User:bob", OpRead)
	all := []ACL{lit, wild, pre, other}
	any := Filter{ResourceType: ResourceAny, Pattern: PatternAny, Operation: OpAny, Permission: PermissionAny}
	for _, tc := range []struct {
		name string
		f    func(Filter) Filter
		want []ACL
	}{
		{"everything", func(f Filter) Filter { return f }, all},
		{"resource type", func(f Filter) Filter { f.ResourceType = ResourceGroup; return f }, []ACL{other}},
		{"ANY pattern compares the name exactly", func(f Filter) Filter { f.Name = str("orders"); return f }, []ACL{lit, other}},
		{"MATCH finds what applies", func(f Filter) Filter {
			f.ResourceType, f.Name, f.Pattern = ResourceTopic, str("orders"), PatternMatch
			return f
		}, []ACL{lit, wild, pre}},
		{"LITERAL", func(f Filter) Filter { f.Pattern = PatternLiteral; f.Name = str("*"); return f }, []ACL{wild}},
		{"PREFIXED", func(f Filter) Filter { f.Pattern = PatternPrefixed; return f }, []ACL{pre}},
		{"principal", func(f Filter) Filter { f.Principal = str("User:bob"); return f }, []ACL{other}},
		{"operation", func(f Filter) Filter { f.Operation = OpWrite; return f }, nil},
		{"permission", func(f Filter) Filter { f.Permission = PermissionDeny; return f }, nil},
		{"host", func(f Filter) Filter { f.Host = str("*"); return f }, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := (&Set{}).Add(all...)
			got := s.Describe(tc.f(any))
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestAddDelete(t *testing.T) {
	a := allow(ResourceTopic, PatternLiteral, "t", "User:alice", OpRead)
	b := deny(ResourceTopic, PatternPrefixed, "t", "User:bob", OpWrite)
	s := (&Set{}).Add(a, b, a)
	if s.Len() != 2 {
		t.Fatalf("a duplicate binding was added: %v", s.ACLs())
	}
	any := Filter{ResourceType: ResourceTopic, Pattern: PatternAny, Operation: OpAny, Permission: PermissionAny}
	deny := any
	deny.Permission = PermissionDeny
	n, matched := s.Delete(deny, any)
	if n.Len() != 0 || len(matched[0]) != 1 || matched[0][0] != b || len(matched[1]) != 2 {
		t.Fatalf("after delete: %v, matched %v", n.ACLs(), matched)
	}
	if s.Len() != 2 {
		t.Fatal("Delete changed the original set")
	}
}

func TestValidate(t *testing.T) {
	ok := allow(ResourceTopic, PatternLiteral, "t", "User:alice", OpRead)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*ACL){
		"ANY resource":      func(a *ACL) { a.ResourceType = ResourceAny },
		"MATCH pattern":     func(a *ACL) { a.Pattern = PatternMatch },
		"ANY operation":     func(a *ACL) { a.Operation = OpAny },
		"ANY permission":    func(a *ACL) { a.Permission = PermissionAny },
		"empty name":        func(a *ACL) { a.Name = "" },
		"principal no type": func(a *ACL) { a.Principal = "alice" },
		"cluster name":      func(a *ACL) { a.ResourceType = ResourceCluster; a.Name = "c" },
	} {
		a := ok
		f(&a)
		if err := a.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
	if err := (Filter{ResourceType: ResourceTopic, Pattern: PatternUnknown, Operation: OpAny, Permission: PermissionAny}).Validate(); err == nil {
		t.Error("a filter with an UNKNOWN pattern type is valid")
	}
}

func TestAuthorizedOperations(t *testing.T) {
	s := (&Set{}).Add(allow(ResourceTopic, PatternLiteral, "t", "User:alice", OpWrite))
	got := s.AuthorizedOperations("User:alice", "h", ResourceTopic, "t")
	if want := int32(1<<OpWrite | 1<<OpDescribe); got != want {
		t.Fatalf("operations %b, want %b", got, want)
	}
	// Kafka 4.4 answers 3400 for a group without an authorizer (compat/reference's
	// DescribeGroups/authorized-operations): READ, DELETE, DESCRIBE and the
	// group configs' DESCRIBE_CONFIGS and ALTER_CONFIGS.
	if got, want := SupportedOperations(ResourceGroup), int32(3400); got != want {
		t.Errorf("group: %d, want %d", got, want)
	}
	if got, want := SupportedOperations(ResourceCluster), int32(1<<5|1<<7|1<<8|1<<9|1<<10|1<<11|1<<12); got != want {
		t.Fatalf("cluster operations %b, want %b", got, want)
	}
}

func TestNames(t *testing.T) {
	if op, ok := ParseOperation("describe-configs"); !ok || op != OpDescribeConfigs || op.String() != "DESCRIBE_CONFIGS" {
		t.Fatalf("ParseOperation: %v %v", op, ok)
	}
	if _, ok := ParseResourceType("UNKNOWN"); ok {
		t.Fatal("UNKNOWN parsed")
	}
	if rt, ok := ParseResourceType("transactional_id"); !ok || rt != ResourceTransactionalID {
		t.Fatal("transactional_id")
	}
}

// TestAuthorizeCIDRHosts: a host with "/" is a CIDR range (Kafka 4.4's
// CidrUtils): both ends count, the families do not mix, and a DENY by range
// beats an ALLOW for every host.
func TestAuthorizeCIDRHosts(t *testing.T) {
	const alice = "User:alice"
	from := func(host string, perm Permission) ACL {
		return ACL{ResourceTopic, "t", PatternLiteral, alice, host, OpRead, perm}
	}
	for _, tc := range []struct {
		acls   []ACL
		client string
		want   bool
	}{
		{[]ACL{from("127.0.0.0/8", PermissionAllow)}, "127.0.0.1", true},
		{[]ACL{from("127.0.0.0/8", PermissionAllow)}, "127.255.255.255", true},
		{[]ACL{from("127.0.0.0/8", PermissionAllow)}, "128.0.0.1", false},
		{[]ACL{from("10.1.0.0/16", PermissionAllow)}, "10.1.200.3", true},
		{[]ACL{from("10.1.0.0/16", PermissionAllow)}, "10.2.0.1", false},
		{[]ACL{from("10.0.0.0/8", PermissionAllow)}, "127.0.0.1", false},
		{[]ACL{from("127.0.0.1/32", PermissionAllow)}, "127.0.0.1", true},
		{[]ACL{from("127.0.0.9/8", PermissionAllow)}, "127.0.0.1", true}, // host bits are ignored
		{[]ACL{from("0.0.0.0/0", PermissionAllow)}, "192.168.1.1", true},
		{[]ACL{from("fd00::/8", PermissionAllow)}, "fd12::1", true},
		{[]ACL{from("fd00::/8", PermissionAllow)}, "fe80::1", false},
		{[]ACL{from("::1/128", PermissionAllow)}, "::1", true},
		{[]ACL{from("::/0", PermissionAllow)}, "127.0.0.1", false}, // an IPv4 client is not in an IPv6 range
		{[]ACL{from("0.0.0.0/0", PermissionAllow)}, "::1", false},
		{[]ACL{from("*", PermissionAllow), from("127.0.0.0/8", PermissionDeny)}, "127.0.0.1", false},
		{[]ACL{from("*", PermissionAllow), from("10.0.0.0/8", PermissionDeny)}, "127.0.0.1", true},
	} {
		s := (&Set{}).Add(tc.acls...)
		if got := s.Authorize(Action{alice, tc.client, OpRead, ResourceTopic, "t"}); got != tc.want {
			t.Errorf("%v from %s: %v, want %v", tc.acls, tc.client, got, tc.want)
		}
	}
}

// TestValidateCIDRHost: a host with "/" must be a CIDR range (Kafka:
// INVALID_REQUEST "Invalid CIDR notation"); other hosts are not checked.
func TestValidateCIDRHost(t *testing.T) {
	for host, ok := range map[string]bool{"10.0.0.0/8": true, "fd00::/8": true, "127.0.0.1": true, "not-an-ip": true,
		"10.0.0.0/33": false, "10.0.0/8": false, "/8": false, "fd00::/129": false, "": false} {
		a := allow(ResourceTopic, PatternLiteral, "t", "User:alice", OpRead)
		a.Host = host
		if err := a.Validate(); (err == nil) != ok {
			t.Errorf("host %q: %v, want ok=%v", host, err, ok)
		}
	}
}
