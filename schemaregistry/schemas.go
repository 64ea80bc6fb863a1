package schemaregistry

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// schemaString is Confluent's SchemaString (GET /schemas/ids/{id}), with
// the subject and version it was found under, as Confluent answers since 8.0.
type schemaString struct {
	Subject    string             `json:"subject,omitempty"`
	Version    int                `json:"version,omitempty"`
	GUID       string             `json:"guid,omitempty"`
	SchemaType string             `json:"schemaType,omitempty"`
	Schema     string             `json:"schema"`
	References []schema.Reference `json:"references,omitempty"`
}

// subjectVersionEntry is Confluent's SubjectVersion.
type subjectVersionEntry struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func (r *Registry) routeSchemas(req *http.Request, s []string) (any, *restError) {
	if req.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	st := r.state()
	switch {
	case len(s) == 0:
		return r.listSchemas(req), nil
	case len(s) == 1 && s[0] == "types":
		return []string{"JSON", "PROTOBUF", "AVRO"}, nil
	case len(s) == 2 && s[0] == "guids":
		for _, id := range st.IDs() {
			for _, v := range st.VersionsByID(id, true) {
				if v.GUID() == s[1] {
					return schemaStringOf(v), nil
				}
			}
		}
		return nil, &restError{http.StatusNotFound, codeSchemaNotFound, "Schema " + s[1] + " not found"}
	case s[0] != "ids" || len(s) < 2 || len(s) > 3:
		return nil, notFound()
	}
	id, err := strconv.ParseInt(s[1], 10, 32)
	if err != nil {
		return nil, notFound() // JAX-RS answers 404 when an Integer path parameter does not parse
	}
	subject := req.URL.Query().Get("subject")
	deleted := queryBool(req, "deleted")
	if len(s) == 3 && (s[2] == "subjects" || s[2] == "versions") {
		// ?subject= names a context in Confluent, not a filter.
		if len(st.VersionsByID(int(id), true)) == 0 {
			return nil, errSchemaNotFound()
		}
		vs := st.VersionsByID(int(id), deleted)
		if s[2] == "subjects" {
			out := []string{}
			for _, v := range vs {
				if len(out) == 0 || out[len(out)-1] != v.Subject {
					out = append(out, v.Subject)
				}
			}
			return page(req, out), nil
		}
		out := make([]subjectVersionEntry, 0, len(vs))
		for _, v := range vs {
			out = append(out, subjectVersionEntry{v.Subject, v.Version})
		}
		return page(req, out), nil
	}
	v, ok := st.SchemaByID(int(id))
	if subject != "" {
		if vs := filterSubject(st.VersionsByID(int(id), true), subject); len(vs) > 0 {
			v, ok = vs[0], true
		}
	}
	if !ok {
		return nil, errSchemaIDNotFound(int(id))
	}
	if len(s) == 3 {
		if s[2] != "schema" {
			return nil, notFound()
		}
		return rawText(v.Schema), nil
	}
	return schemaStringOf(v), nil
}

func schemaStringOf(v SubjectVersion) schemaString {
	return schemaString{Subject: v.Subject, Version: v.Version, GUID: v.GUID(), SchemaType: string(typeOrAvro(v.SchemaType)), Schema: v.Schema, References: v.References}
}

func filterSubject(vs []SubjectVersion, subject string) []SubjectVersion {
	var out []SubjectVersion
	for _, v := range vs {
		if v.Subject == subject {
			out = append(out, v)
		}
	}
	return out
}

// listSchemas answers GET /schemas: every version (of subjects with
// subjectPrefix), ordered by subject then version.
func (r *Registry) listSchemas(req *http.Request) []schemaEntity {
	st := r.state()
	q := req.URL.Query()
	deleted := queryBool(req, "deleted")
	latestOnly := queryBool(req, "latestOnly")
	out := []schemaEntity{}
	for _, subj := range st.Subjects(deleted) {
		if !strings.HasPrefix(subj, q.Get("subjectPrefix")) {
			continue
		}
		vs := st.Versions(subj, deleted)
		if latestOnly && len(vs) > 0 {
			vs = vs[len(vs)-1:]
		}
		for _, v := range vs {
			out = append(out, entityOf(v))
		}
	}
	return pageMax(req, out, schemaSearchLimit)
}

// schemaSearchLimit is Confluent's default schema.search.default.limit and
// schema.search.max.limit.
const schemaSearchLimit = 1000
