package server

import (
	"net"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestACLRequestWithUnknownElementClosesConnection: as Kafka, which cannot
// parse an ACL request holding an UNKNOWN resource type, pattern type,
// operation or permission, the broker closes the connection, with or
// without an authorizer; the same request without the UNKNOWN value gets
// an answer.
func TestACLRequestWithUnknownElementClosesConnection(t *testing.T) {
	create := func(op kmsg.ACLOperation) kmsg.Request {
		req := kmsg.NewPtrCreateACLsRequest()
		req.SetVersion(1)
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:alice", "*", op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, cr)
		return req
	}
	describe := func(rt kmsg.ACLResourceType) kmsg.Request {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.SetVersion(1)
		req.ResourceType, req.ResourcePatternType = rt, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		return req
	}
	del := func(pt kmsg.ACLResourcePatternType) kmsg.Request {
		req := kmsg.NewPtrDeleteACLsRequest()
		req.SetVersion(1)
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, pt
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		req.Filters = append(req.Filters, f)
		return req
	}
	for _, authz := range []bool{false, true} {
		c := NewTestCluster(t, Config{Brokers: 1, Authorizer: authz, AllowEveryoneIfNoACLFound: true})
		send := func(req kmsg.Request) net.Conn {
			nc, err := net.Dial("tcp", c.Bootstrap()[0])
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			if _, err := nc.Write(frame(req.Key(), req.GetVersion(), 7, req.AppendTo(nil))); err != nil {
				t.Fatal(err)
			}
			return nc
		}
		for name, req := range map[string]kmsg.Request{
			"CreateAcls, UNKNOWN operation":       create(0),
			"DescribeAcls, UNKNOWN resource type": describe(0),
			"DeleteAcls, UNKNOWN pattern type":    del(0),
		} {
			t.Run(name, func(t *testing.T) { expectClosed(t, send(req)) })
		}
		for name, req := range map[string]kmsg.Request{
			"CreateAcls":   create(kmsg.ACLOperationRead),
			"DescribeAcls": describe(kmsg.ACLResourceTypeAny),
			"DeleteAcls":   del(kmsg.ACLResourcePatternTypeAny),
		} {
			nc := send(req)
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := protocol.ReadFrame(nc, 1<<20); err != nil {
				t.Fatalf("authorizer %v: %s without UNKNOWN values: %v", authz, name, err)
			}
		}
	}
}
