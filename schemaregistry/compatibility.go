package schemaregistry

import (
	"net/http"
	"strings"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// Compatibility levels (Confluent's CompatibilityLevel).
const (
	compatNone               = "NONE"
	compatBackward           = "BACKWARD"
	compatBackwardTransitive = "BACKWARD_TRANSITIVE"
	compatForward            = "FORWARD"
	compatForwardTransitive  = "FORWARD_TRANSITIVE"
	compatFull               = "FULL"
	compatFullTransitive     = "FULL_TRANSITIVE"
)

var compatLevels = []string{compatNone, compatBackward, compatBackwardTransitive, compatForward,
	compatForwardTransitive, compatFull, compatFullTransitive}

const differentSchemaType = "Incompatible because of different schema type"

// fillRoles puts the reader's and the writer's role ("new"/"old") into
// a message's first and second "%s", as Confluent's validator formats
// the messages of a schema type.
func fillRoles(msgs []string, reader, writer string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		m = strings.Replace(m, "%s", reader, 1)
		out[i] = strings.Replace(m, "%s", writer, 1)
	}
	return out
}

// checkOne gives why p is not compatible with one earlier version under
// level (without _TRANSITIVE), in Confluent's words.
func (r *Registry) checkOne(st *State, level string, p schema.Parsed, old SubjectVersion) []string {
	if typeOrAvro(old.SchemaType) != p.Type() {
		return []string{differentSchemaType}
	}
	prev, err := st.parseVersionSchema(old)
	if err != nil {
		return []string{sprintf("{errorType:'INVALID_OLD_SCHEMA', description:'Version %d of subject %s cannot be parsed: %s'}", old.Version, old.Subject, err.Error())}
	}
	oldInfo := []string{sprintf("{oldSchemaVersion: %d}", old.Version), "{oldSchema: '" + old.Schema + "'}"}
	with := func(msgs []string) []string {
		if len(msgs) == 0 {
			return nil
		}
		return append(msgs, oldInfo...)
	}
	switch strings.TrimSuffix(level, "_TRANSITIVE") {
	case compatBackward:
		return with(fillRoles(p.Backward(prev), "new", "old"))
	case compatForward:
		return with(fillRoles(prev.Backward(p), "old", "new"))
	case compatFull:
		out := fillRoles(prev.Backward(p), "old", "new")
		return append(out, with(fillRoles(p.Backward(prev), "new", "old"))...)
	}
	return nil
}

// incompatibilities gives why p cannot follow the versions prev
// (ascending, not deleted) under level: the latest only, or with
// _TRANSITIVE each from the newest back to the first that fails.
func (r *Registry) incompatibilities(st *State, level string, p schema.Parsed, prev []SubjectVersion) []string {
	if level == compatNone || len(prev) == 0 {
		return nil
	}
	var msgs []string
	if strings.HasSuffix(level, "_TRANSITIVE") {
		for i := len(prev) - 1; i >= 0 && len(msgs) == 0; i-- {
			msgs = r.checkOne(st, level, p, prev[i])
		}
	} else {
		msgs = r.checkOne(st, level, p, prev[len(prev)-1])
	}
	if len(msgs) > 0 {
		msgs = append(msgs, sprintf("{validateFields: 'false', compatibility: '%s'}", level))
	}
	return msgs
}

// compatibilityResponse is Confluent's CompatibilityCheckResponse.
type compatibilityResponse struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

// checkCompatibility answers POST /compatibility/subjects/{subject}/versions[/{version}]:
// against one version (or "latest"), or against all under the
// subject's level.
func (r *Registry) checkCompatibility(req *http.Request, subject, version string) (any, *restError) {
	var b registerRequest
	if rerr := decodeBody(req, &b); rerr != nil {
		return nil, rerr
	}
	st := r.state()
	var prev []SubjectVersion
	if version == "" {
		prev = st.Versions(subject, false)
	} else {
		v, rerr := parseVersion(version)
		if rerr != nil {
			return nil, rerr
		}
		sv, rerr := st.lookupVersion(subject, v, false)
		switch {
		case rerr == nil:
			prev = []SubjectVersion{sv}
		case v != versionLatest:
			return nil, errVersionNotFound(v)
		}
	}
	verbose := queryBool(req, "verbose")
	var msgs []string
	p, _, rerr := r.parseRequest(st, subject, &b)
	if rerr != nil {
		if !verbose {
			return nil, rerr
		}
		msgs = []string{rerr.Message}
	} else {
		msgs = r.incompatibilities(st, st.effectiveConfig(subject).CompatibilityLevel, p, prev)
	}
	resp := compatibilityResponse{IsCompatible: len(msgs) == 0}
	if verbose {
		resp.Messages = msgs
		if resp.Messages == nil {
			resp.Messages = []string{}
		}
	}
	return verboseResponse{resp, verbose}, nil
}

// verboseResponse writes "messages" even when empty under verbose, as
// Confluent does.
type verboseResponse struct {
	compatibilityResponse
	verbose bool
}

func (v verboseResponse) MarshalJSON() ([]byte, error) {
	if !v.verbose {
		return []byte(sprintf(`{"is_compatible":%t}`, v.IsCompatible)), nil
	}
	type full struct {
		IsCompatible bool     `json:"is_compatible"`
		Messages     []string `json:"messages"`
	}
	return jsonMarshal(full{v.IsCompatible, v.Messages})
}
