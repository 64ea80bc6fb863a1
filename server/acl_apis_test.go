package server

import (
	"errors"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestACLAPIsThroughKadm(t *testing.T) {
	c := aclCluster(t, Config{})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))

	// No ALTER on the cluster yet.
	res, err := adm.CreateACLs(ctx, kadm.NewACLs().Topics("t").Allow("User:alice").Operations(kadm.OpRead))
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("CreateAcls without ALTER on the cluster: %+v %v", res, err)
	}
	if d, err := describeAllACLs(t, c); err != nil || d.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("DescribeAcls without DESCRIBE on the cluster: %+v %v", d, err)
	}

	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpAlter))
	var since uint64
	if evs := c.Events(0); len(evs) > 0 {
		since = evs[len(evs)-1].Seq
	}
	res, err = adm.CreateACLs(ctx, kadm.NewACLs().Topics("t").Groups("g").Allow("User:alice").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternPrefixed))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("CreateAcls: %+v", r)
		}
	}
	if n := len(c.ACLs()); n != 3 {
		t.Fatalf("%d bindings, want the granted one and two created: %v", n, c.ACLs())
	}
	if evs := eventsOfType(c.Events(since), EventACLCreated); len(evs) != 2 {
		t.Fatalf("acl_created events: %+v", evs)
	}

	// ALTER implies DESCRIBE, so DescribeAcls works now. MATCH finds the
	// prefixed binding that applies to topic "tx".
	desc, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("tx").ResourcePatternType(kadm.ACLPatternMatch).Allow().AllowHosts().Operations(kadm.OpAny))
	if err != nil {
		t.Fatal(err)
	}
	if len(desc) != 1 || len(desc[0].Described) != 1 || desc[0].Described[0].Name != "t" || desc[0].Described[0].Principal != "User:alice" ||
		desc[0].Described[0].Pattern != kadm.ACLPatternPrefixed {
		t.Fatalf("DescribeAcls MATCH tx: %+v", desc)
	}

	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().AnyResource().Allow("User:alice").AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if len(del) != 1 || del[0].Err != nil || len(del[0].Deleted) != 2 {
		t.Fatalf("DeleteAcls: %+v", del)
	}
	if n := len(c.ACLs()); n != 1 {
		t.Fatalf("%d bindings left, want the cluster grant: %v", n, c.ACLs())
	}

	// Kafka's validation: INVALID_REQUEST with a message per creation.
	bad := kmsg.NewPtrCreateACLsRequest()
	for _, name := range []string{"not-kafka-cluster", ""} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeCluster, name, kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = anon, "*", kmsg.ACLOperationAlter, kmsg.ACLPermissionTypeAllow
		bad.Creations = append(bad.Creations, cr)
	}
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeMatch
	cr.Principal, cr.Host, cr.Operation, cr.PermissionType = anon, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	bad.Creations = append(bad.Creations, cr)
	resp, err := bad.RequestWith(ctx, newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil {
			t.Fatalf("creation %d: %+v, want INVALID_REQUEST with a message", i, r)
		}
	}
}

func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	adm := kadm.NewClient(newClient(t, c))
	d, err := describeAllACLs(t, c)
	if err != nil || d.ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("DescribeAcls without the authorizer: %+v %v, want SECURITY_DISABLED", d, err)
	}
	res, err := adm.CreateACLs(testContext(t), kadm.NewACLs().Topics("t").Allow("User:alice").Operations(kadm.OpRead))
	if err != nil || !errors.Is(res[0].Err, kerr.SecurityDisabled) {
		t.Fatalf("CreateAcls without the authorizer: %+v %v", res, err)
	}
}

func eventsOfType(evs []Event, typ EventType) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// describeAllACLs sends DescribeAcls with a filter of ANY everything.
func describeAllACLs(t *testing.T, c *Cluster) (*kmsg.DescribeACLsResponse, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return req.RequestWith(testContext(t), newClient(t, c))
}
