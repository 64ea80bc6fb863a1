package schemaregistry

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// schemaString is Confluent's SchemaString (GET /schemas/ids/{id}).
type schemaString struct {
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
		vs := st.VersionsByID(int(id), deleted)
		if subject != "" {
			vs = filterSubject(vs, subject)
		}
		if len(vs) == 0 {
			return nil, errSchemaNotFound()
		}
		if s[2] == "subjects" {
			out := []string{}
			for _, v := range vs {
				if len(out) == 0 || out[len(out)-1] != v.Subject {
					out = append(out, v.Subject)
				}
			}
			return out, nil
		}
		out := make([]subjectVersionEntry, 0, len(vs))
		for _, v := range vs {
			out = append(out, subjectVersionEntry{v.Subject, v.Version})
		}
		return out, nil
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
	return schemaString{SchemaType: string(typeOrAvro(v.SchemaType)), Schema: v.Schema, References: v.References}, nil
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
	return out
}
