package server

// CreateAcls, versions 0-3.
//
// Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED on every result
// otherwise). Each creation is validated alone as Kafka's AclControlManager
// does: an UNKNOWN or ANY resource type, operation or permission, a pattern
// other than LITERAL or PREFIXED, an empty name, a CLUSTER name other than
// kafka-cluster or a principal without a type get INVALID_REQUEST with a
// message; the valid ones are created. v0 has no pattern type: LITERAL.
// Without Config.Authorizer every result is SECURITY_DISABLED.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleCreateACLs(req *kmsg.CreateACLsRequest) (kmsg.Response, error) {
	if err := checkCreateACLs(req); err != nil {
		return nil, err // see acl_unknown.go
	}
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	code, msg := aclRequestAllowed(cn, authorizer.OpAlter)
	var valid []authorizer.ACL
	for _, cr := range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = code, msg
		if code == 0 {
			a := authorizer.ACL{
				ResourceType: authorizer.ResourceType(cr.ResourceType),
				Name:         cr.ResourceName,
				Pattern:      authorizer.PatternType(cr.ResourcePatternType),
				Principal:    cr.Principal,
				Host:         cr.Host,
				Operation:    authorizer.Operation(cr.Operation),
				Permission:   authorizer.Permission(cr.PermissionType),
			}
			if err := a.Validate(); err != nil {
				r.ErrorCode = kerr.InvalidRequest.Code
				m := err.Error()
				r.ErrorMessage = &m
			} else {
				valid = append(valid, a)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	if len(valid) > 0 {
		if err := c.CreateACLs(valid...); err != nil {
			return nil, err // validated above; cannot happen
		}
	}
	return resp, nil
}

// aclRequestAllowed is the common check of the ACL APIs: SECURITY_DISABLED
// without the authorizer, CLUSTER_AUTHORIZATION_FAILED without op on the
// cluster.
func aclRequestAllowed(cn *conn, op authorizer.Operation) (int16, *string) {
	if !cn.b.c.cfg.Authorizer {
		m := "No Authorizer is configured."
		return kerr.SecurityDisabled.Code, &m
	}
	if !cn.allowedCluster(op) {
		return errClusterAuth, nil
	}
	return 0, nil
}
