package server

// DeleteAcls, versions 0-3.
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED on every result).
// Each filter deletes what it matches (as DescribeAcls selects) and lists
// the deleted bindings; a binding matched by several filters is listed by
// each. A filter holding UNKNOWN values gets INVALID_REQUEST and deletes
// nothing. Without Config.Authorizer: SECURITY_DISABLED.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDeleteACLs(req *kmsg.DeleteACLsRequest) (kmsg.Response, error) {
	if err := checkDeleteACLs(req); err != nil {
		return nil, err // see acl_unknown.go
	}
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	code, msg := aclRequestAllowed(cn, authorizer.OpAlter)
	var filters []authorizer.Filter
	var at []int // the result index of each valid filter
	for i, rf := range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = code, msg
		f := authorizer.Filter{
			ResourceType: authorizer.ResourceType(rf.ResourceType),
			Name:         rf.ResourceName,
			Pattern:      authorizer.PatternType(rf.ResourcePatternType),
			Principal:    rf.Principal,
			Host:         rf.Host,
			Operation:    authorizer.Operation(rf.Operation),
			Permission:   authorizer.Permission(rf.PermissionType),
		}
		if code == 0 {
			if err := f.Validate(); err != nil {
				r.ErrorCode = kerr.InvalidRequest.Code
				m := "the filter holds UNKNOWN values"
				r.ErrorMessage = &m
			} else {
				filters = append(filters, f)
				at = append(at, i)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	if len(filters) == 0 {
		return resp, nil
	}
	matched, err := cn.b.c.DeleteACLs(filters...)
	if err != nil {
		return nil, err // validated above; cannot happen
	}
	for j, acls := range matched {
		r := &resp.Results[at[j]]
		for _, a := range acls {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType = kmsg.ACLResourceType(a.ResourceType)
			m.ResourceName = a.Name
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.Pattern)
			m.Principal, m.Host = a.Principal, a.Host
			m.Operation = kmsg.ACLOperation(a.Operation)
			m.PermissionType = kmsg.ACLPermissionType(a.Permission)
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
	}
	return resp, nil
}
