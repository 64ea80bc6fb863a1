package server

// Kafka turns the ACL requests into bindings and filters while it parses
// them (CreateAclsRequest, DescribeAclsRequest and DeleteAclsRequest), and
// refuses any that holds an UNKNOWN (0) resource type, pattern type,
// operation or permission: such a request does not parse, so the broker
// closes the connection without an answer, with or without an authorizer.
// Other bad values parse, and get INVALID_REQUEST from the handlers.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var errUnknownACLElement = errors.New("ACL request contains UNKNOWN elements")

// unknownACLElement says whether a binding or filter holds an UNKNOWN
// value. v0 has no pattern type (LITERAL by default).
func unknownACLElement(v int16, resourceType kmsg.ACLResourceType, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) bool {
	return resourceType == 0 || (v >= 1 && pattern == 0) || op == 0 || perm == 0
}

func checkCreateACLs(req *kmsg.CreateACLsRequest) error {
	for _, c := range req.Creations {
		if unknownACLElement(req.Version, c.ResourceType, c.ResourcePatternType, c.Operation, c.PermissionType) {
			return errUnknownACLElement
		}
	}
	return nil
}

func checkDescribeACLs(req *kmsg.DescribeACLsRequest) error {
	if unknownACLElement(req.Version, req.ResourceType, req.ResourcePatternType, req.Operation, req.PermissionType) {
		return errUnknownACLElement
	}
	return nil
}

func checkDeleteACLs(req *kmsg.DeleteACLsRequest) error {
	for _, f := range req.Filters {
		if unknownACLElement(req.Version, f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType) {
			return errUnknownACLElement
		}
	}
	return nil
}
