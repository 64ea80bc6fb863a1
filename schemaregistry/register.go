package schemaregistry

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

var sprintf = fmt.Sprintf

// registerRequest is Confluent's RegisterSchemaRequest (register, look
// up, check compatibility); version and id are for IMPORT mode.
type registerRequest struct {
	Schema     string             `json:"schema"`
	SchemaType string             `json:"schemaType"`
	References []schema.Reference `json:"references"`
	Version    *int               `json:"version"`
	ID         *int               `json:"id"`
}

// registerResponse is Confluent's RegisterSchemaResponse.
type registerResponse struct {
	ID         int                `json:"id"`
	Version    int                `json:"version,omitempty"`
	SchemaType string             `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema,omitempty"`
}

func (st *State) effectiveMode(subject string) string {
	if m, ok := st.Mode(subject); ok {
		return m
	}
	if m, ok := st.Mode(""); ok {
		return m
	}
	return modeReadWrite
}

func (st *State) readOnly(subject string) bool {
	m := st.effectiveMode(subject)
	return m == modeReadOnly || m == modeReadOnlyOverride
}

func errReadOnly(subject string) *restError {
	return errNotPermitted(sprintf("Subject %s in context . is in read-only mode", subject))
}

// effectiveConfig is subject's config, its unset fields taken from the
// global one, else Confluent's default (BACKWARD).
func (st *State) effectiveConfig(subject string) ConfigValue {
	out := ConfigValue{Subject: subject}
	scopes := []string{""}
	if subject != "" {
		scopes = []string{subject, ""}
	}
	for _, s := range scopes {
		if c, ok := st.Config(s); ok {
			if out.CompatibilityLevel == "" {
				out.CompatibilityLevel = c.CompatibilityLevel
			}
			if out.Normalize == nil {
				out.Normalize = c.Normalize
			}
		}
	}
	if out.CompatibilityLevel == "" {
		out.CompatibilityLevel = compatBackward
	}
	return out
}

func (st *State) normalizeByConfig(subject string) bool {
	n := st.effectiveConfig(subject).Normalize
	return n != nil && *n
}

// resolveReferences gives, by reference name, the text of every schema
// refs reach (referenced ones first, as Confluent resolves them); a
// reference to version -1 is the subject's latest. It returns refs with
// such versions made concrete.
func (st *State) resolveReferences(refs []schema.Reference) (map[string]string, []schema.Reference, error) {
	deps := map[string]string{}
	seen := map[svKey]bool{}
	var walk func(refs []schema.Reference) ([]schema.Reference, error)
	walk = func(refs []schema.Reference) ([]schema.Reference, error) {
		out := make([]schema.Reference, 0, len(refs))
		for _, ref := range refs {
			var sv SubjectVersion
			ok := false
			if ref.Version == versionLatest {
				sv, ok = st.latest(ref.Subject)
			} else {
				sv, ok = st.Version(ref.Subject, ref.Version)
			}
			if !ok {
				return nil, fmt.Errorf("No schema reference found for subject \"%s\" and version %d", ref.Subject, ref.Version)
			}
			ref.Version = sv.Version
			out = append(out, ref)
			k := svKey{sv.Subject, sv.Version}
			if seen[k] {
				continue
			}
			seen[k] = true
			if _, err := walk(sv.References); err != nil {
				return nil, err
			}
			deps[ref.Name] = sv.Schema
		}
		return out, nil
	}
	resolved, err := walk(refs)
	return deps, resolved, err
}

// parseVersionSchema parses a stored version with its references.
func (st *State) parseVersionSchema(v SubjectVersion) (schema.Parsed, error) {
	deps, _, err := st.resolveReferences(v.References)
	if err != nil {
		return nil, err
	}
	return schema.Parse(typeOrAvro(v.SchemaType), v.Schema, deps)
}

func schemaDescription(subject string, b *registerRequest, t schema.Type) string {
	refs := make([]string, len(b.References))
	for i, r := range b.References {
		refs[i] = sprintf("{name='%s', subject='%s', version=%d}", r.Name, r.Subject, r.Version)
	}
	return sprintf("{subject=%s,version=0,id=-1,schemaType=%s,references=[%s],metadata=null,ruleSet=null,schema=%s}",
		subject, t, strings.Join(refs, ", "), b.Schema)
}

// parseRequest parses the schema of a request with its references.
func (r *Registry) parseRequest(st *State, subject string, b *registerRequest) (schema.Parsed, []schema.Reference, *restError) {
	t := schema.Type(b.SchemaType)
	if t == "" {
		t = schema.Avro
	}
	switch t {
	case schema.Avro, schema.Protobuf, schema.JSON:
	default:
		return nil, nil, errInvalidSchema("Invalid schema type " + string(t))
	}
	if strings.TrimSpace(b.Schema) == "" {
		return nil, nil, errInvalidSchema("Empty schema")
	}
	deps, refs, err := st.resolveReferences(b.References)
	if err == nil {
		var p schema.Parsed
		if p, err = schema.Parse(t, b.Schema, deps); err == nil {
			return p, refs, nil
		}
	}
	return nil, nil, errInvalidSchema("Invalid schema " + schemaDescription(subject, b, t) + ", details: " + err.Error())
}

// storedText is the text a parsed schema is kept as.
func storedText(p schema.Parsed, normalize bool) string {
	if normalize {
		return p.Normalized()
	}
	return p.Canonical()
}

func sortedReferences(refs []schema.Reference) []schema.Reference {
	out := slices.Clone(refs)
	slices.SortFunc(out, func(a, b schema.Reference) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return slices.Compact(out)
}

// sameSchema tells whether a stored version holds the parsed schema:
// the same type, references and text (under normalize, the same
// normalised text).
func (r *Registry) sameSchema(st *State, p schema.Parsed, refs []schema.Reference, normalize bool, v SubjectVersion) bool {
	if typeOrAvro(v.SchemaType) != p.Type() {
		return false
	}
	if !normalize {
		return v.Schema == p.Canonical() && slices.Equal(v.References, refs)
	}
	if !slices.Equal(sortedReferences(v.References), sortedReferences(refs)) {
		return false
	}
	if v.Schema == p.Normalized() || v.Schema == p.Canonical() {
		return true
	}
	old, err := st.parseVersionSchema(v)
	return err == nil && old.Normalized() == p.Normalized()
}

// register answers POST /subjects/{subject}/versions.
func (r *Registry) register(req *http.Request, subject string) (any, *restError) {
	var b registerRequest
	if rerr := decodeBody(req, &b); rerr != nil {
		return nil, rerr
	}
	if subject == "" || strings.ContainsFunc(subject, func(c rune) bool { return c < 0x20 }) {
		return nil, &restError{http.StatusUnprocessableEntity, codeInvalidSubject, sprintf("The specified subject '%s' is not a valid.", subject)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state()
	mode := st.effectiveMode(subject)
	reqID, reqVersion := -1, 0
	if b.ID != nil {
		reqID = *b.ID
	}
	if b.Version != nil {
		reqVersion = *b.Version
	}
	switch {
	case mode == modeReadOnly || mode == modeReadOnlyOverride:
		return nil, errReadOnly(subject)
	case reqID >= 0 && mode != modeImport:
		return nil, errNotPermitted(sprintf("Subject %s in context . is not in import mode", subject))
	case reqID < 0 && mode != modeReadWrite:
		return nil, errNotPermitted(sprintf("Subject %s in context . is not in read-write mode", subject))
	}
	p, refs, rerr := r.parseRequest(st, subject, &b)
	if rerr != nil {
		return nil, rerr
	}
	normalize := mode != modeImport && (queryBool(req, "normalize") || st.normalizeByConfig(subject))
	if normalize {
		refs = sortedReferences(refs)
	}
	text := storedText(p, normalize)
	all := st.Versions(subject, true)
	live := st.Versions(subject, false)

	// The same schema (type, text, references) anywhere keeps its id.
	schemaID := -1
	if id, ok := r.idOf(st, p.Type(), text, refs); ok && (reqID < 0 || reqID == id) {
		if reqVersion == 0 {
			for _, v := range live {
				if v.ID == id {
					return responseOf(v), nil
				}
			}
		}
		schemaID = id
	}
	if reqVersion == 0 {
		for i := len(live) - 1; i >= 0; i-- {
			if (schemaID < 0 || schemaID == live[i].ID) && r.sameSchema(st, p, refs, normalize, live[i]) {
				return responseOf(live[i]), nil
			}
		}
	}
	if mode != modeImport {
		level := st.effectiveConfig(subject).CompatibilityLevel
		if msgs := r.incompatibilities(st, level, p, live); len(msgs) > 0 {
			r.observe(Change{Kind: SchemaIncompatible, Subject: subject, SchemaType: string(p.Type()), Messages: msgs})
			return nil, &restError{http.StatusConflict, codeIncompatibleSchema,
				sprintf(incompatibleSchemaMessagePrefixForm, subject) + "[" + strings.Join(msgs, ", ") + "]"}
		}
	}
	newVersion := 1
	if len(all) > 0 {
		newVersion = all[len(all)-1].Version + 1
	}
	version := newVersion
	if reqVersion > 0 {
		if reqVersion != newVersion && mode != modeImport {
			return nil, errInvalidSchema("Version is not one more than previous version")
		}
		version = reqVersion
	}
	if reqID >= 0 {
		if owner, ok := st.SchemaByID(reqID); ok && (owner.Schema != text || typeOrAvro(owner.SchemaType) != p.Type() || !slices.Equal(owner.References, refs)) {
			return nil, errNotPermitted(sprintf("Overwrite new schema with id %d in context . is not permitted.", reqID))
		}
		schemaID = reqID
	}
	if schemaID < 0 {
		schemaID = st.MaxID() + 1
		for len(st.VersionsByID(schemaID, true)) > 0 {
			schemaID++
		}
	}
	var recs []Record
	// An earlier soft-deleted version with this id goes for good, as
	// Confluent does, unless a schema still references it.
	for _, v := range all {
		if v.Deleted && v.ID == schemaID && v.Version < version && len(st.referencingSubjects(subject, v.Version, true)) == 0 {
			recs = append(recs, SchemaTombstone(subject, v.Version))
		}
	}
	val := SchemaValue{Subject: subject, Version: version, ID: schemaID, SchemaType: string(p.Type()), References: refs, Schema: text}
	recs = append(recs, SchemaRecord(val))
	if err := r.store.Write(req.Context(), recs); err != nil {
		return nil, errStore("Register schema", err)
	}
	r.observe(Change{Kind: SchemaRegistered, Subject: subject, Version: version, ID: schemaID, SchemaType: string(p.Type())})
	return responseOf(val.subjectVersion()), nil
}

func responseOf(v SubjectVersion) registerResponse {
	return registerResponse{ID: v.ID, Version: v.Version, SchemaType: string(typeOrAvro(v.SchemaType)), References: v.References, Schema: v.Schema}
}

// idOf is the id the registry gave this exact schema (in any subject,
// soft-deleted versions included), as Confluent's lookup by hash.
func (r *Registry) idOf(st *State, t schema.Type, text string, refs []schema.Reference) (int, bool) {
	for _, id := range st.IDs() {
		for _, v := range st.VersionsByID(id, true) {
			if v.Schema == text && typeOrAvro(v.SchemaType) == t && slices.Equal(v.References, refs) {
				return id, true
			}
		}
	}
	return 0, false
}
