package server

// DescribeAcls, versions 0-3.
//
// Needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED). The filter
// selects bindings as Kafka's AclBindingFilter (package authorizer): ANY
// values match everything, MATCH every pattern that applies to the name. A
// filter holding UNKNOWN (0) values does not parse: the connection closes
// (acl_unknown.go); other values out of range get INVALID_REQUEST. Matches
// are grouped by resource pattern in creation order. Without
// Config.Authorizer: SECURITY_DISABLED.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDescribeACLs(req *kmsg.DescribeACLsRequest) (kmsg.Response, error) {
	if err := checkDescribeACLs(req); err != nil {
		return nil, err // see acl_unknown.go
	}
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if resp.ErrorCode, resp.ErrorMessage = aclRequestAllowed(cn, authorizer.OpDescribe); resp.ErrorCode != 0 {
		return resp, nil
	}
	f := authorizer.Filter{
		ResourceType: authorizer.ResourceType(req.ResourceType),
		Name:         req.ResourceName,
		Pattern:      authorizer.PatternType(req.ResourcePatternType),
		Principal:    req.Principal,
		Host:         req.Host,
		Operation:    authorizer.Operation(req.Operation),
		Permission:   authorizer.Permission(req.PermissionType),
	}
	if err := f.Validate(); err != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		m := "the filter holds UNKNOWN values"
		resp.ErrorMessage = &m
		return resp, nil
	}
	type pattern struct {
		rt   authorizer.ResourceType
		name string
		pt   authorizer.PatternType
	}
	index := map[pattern]int{}
	for _, a := range cn.b.c.acls.Load().Describe(f) {
		p := pattern{a.ResourceType, a.Name, a.Pattern}
		i, ok := index[p]
		if !ok {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType = kmsg.ACLResourceType(a.ResourceType)
			r.ResourceName = a.Name
			r.ResourcePatternType = kmsg.ACLResourcePatternType(a.Pattern)
			i = len(resp.Resources)
			index[p] = i
			resp.Resources = append(resp.Resources, r)
		}
		e := kmsg.NewDescribeACLsResponseResourceACL()
		e.Principal, e.Host = a.Principal, a.Host
		e.Operation = kmsg.ACLOperation(a.Operation)
		e.PermissionType = kmsg.ACLPermissionType(a.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, e)
	}
	return resp, nil
}
