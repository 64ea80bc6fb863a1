package server

// The ACLs over HTTP:
//
//	GET  /v1/acls                         ACLState: the authorizer's settings and every binding
//	POST /v1/acls {"acls":[ACLBinding]}   CreateACLs; answers the new ACLState
//
// Enum values are Kafka's names (TOPIC, PREFIXED, READ, ALLOW), case and -
// or _ as you like; pattern_type defaults to LITERAL and host to "*".

import (
	"net/http"

	"github.com/fakekafka/fakekafka/authorizer"
)

// ACLBinding is one binding in JSON form.
type ACLBinding struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission_type"`
}

// ACLState is what GET /v1/acls answers.
type ACLState struct {
	// Authorizer says whether requests are checked (Config.Authorizer).
	Authorizer                bool         `json:"authorizer"`
	SuperUsers                []string     `json:"super_users"`
	AllowEveryoneIfNoACLFound bool         `json:"allow_everyone_if_no_acl_found"`
	ACLs                      []ACLBinding `json:"acls"`
}

// ACLState returns the authorizer's settings and bindings.
func (c *Cluster) ACLState() ACLState {
	st := ACLState{Authorizer: c.cfg.Authorizer, SuperUsers: append([]string{}, c.cfg.SuperUsers...),
		AllowEveryoneIfNoACLFound: c.cfg.AllowEveryoneIfNoACLFound, ACLs: []ACLBinding{}}
	for _, a := range c.ACLs() {
		st.ACLs = append(st.ACLs, ACLBinding{a.ResourceType.String(), a.Name, a.Pattern.String(), a.Principal, a.Host, a.Operation.String(), a.Permission.String()})
	}
	return st
}

// acl parses the JSON form.
func (b ACLBinding) acl() (authorizer.ACL, error) {
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

func (c *Cluster) registerACLRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/acls", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.ACLState())
	})
	mux.HandleFunc("POST /v1/acls", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ACLs []ACLBinding `json:"acls"`
		}
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		var acls []authorizer.ACL
		for _, b := range body.ACLs {
			a, err := b.acl()
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
