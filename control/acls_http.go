package control

// The ACLs over HTTP:
//
//	GET  /v1/acls                         ACLState: the authorizer's settings and every binding
//	POST /v1/acls {"acls":[ACLBinding]}   CreateACLs; answers the new ACLState
//
// Enum values are Kafka's names (TOPIC, PREFIXED, READ, ALLOW), case and -
// or _ as you like; pattern_type defaults to LITERAL and host to "*".

import (
	"net/http"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/authorizer"
)

// parseACLBinding parses the JSON form.
func parseACLBinding(b api.ACLBinding) (authorizer.ACL, error) {
	a := authorizer.ACL{Name: b.ResourceName, Principal: b.Principal, Host: b.Host, Pattern: authorizer.PatternLiteral}
	var ok bool
	if a.ResourceType, ok = authorizer.ParseResourceType(b.ResourceType); !ok {
		return a, httpErrorf(http.StatusBadRequest, "resource_type %q: want TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN or USER", b.ResourceType)
	}
	if b.PatternType != "" {
		if a.Pattern, ok = authorizer.ParsePatternType(b.PatternType); !ok {
			return a, httpErrorf(http.StatusBadRequest, "pattern_type %q: want LITERAL or PREFIXED", b.PatternType)
		}
	}
	if a.Operation, ok = authorizer.ParseOperation(b.Operation); !ok {
		return a, httpErrorf(http.StatusBadRequest, "operation %q is not a Kafka ACL operation", b.Operation)
	}
	if a.Permission, ok = authorizer.ParsePermission(b.Permission); !ok {
		return a, httpErrorf(http.StatusBadRequest, "permission_type %q: want ALLOW or DENY", b.Permission)
	}
	if a.Host == "" {
		a.Host = authorizer.Wildcard
	}
	if err := a.Validate(); err != nil {
		return a, httpErrorf(http.StatusBadRequest, "%v", err)
	}
	return a, nil
}

func (c cluster) registerACLRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/acls", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.ACLState())
	})
	mux.HandleFunc("POST /v1/acls", func(w http.ResponseWriter, r *http.Request) {
		var body api.ACLRequest
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		var acls []authorizer.ACL
		for _, b := range body.ACLs {
			a, err := parseACLBinding(b)
			if err != nil {
				httpFail(w, err)
				return
			}
			acls = append(acls, a)
		}
		if err := c.CreateACLs(acls...); err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, c.ACLState())
	})
}
