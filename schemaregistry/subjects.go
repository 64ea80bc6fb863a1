package schemaregistry

import (
	"net/http"
	"slices"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// schemaEntity is Confluent's Schema entity (empty fields left out).
type schemaEntity struct {
	Subject    string             `json:"subject,omitempty"`
	Version    int                `json:"version,omitempty"`
	ID         int                `json:"id,omitempty"`
	SchemaType string             `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema,omitempty"`
}

func entityOf(v SubjectVersion) schemaEntity {
	return schemaEntity{
		Subject: v.Subject, Version: v.Version, ID: v.ID, SchemaType: string(typeOrAvro(v.SchemaType)),
		References: v.References, Schema: v.Schema,
	}
}

func typeOrAvro(t schema.Type) schema.Type {
	if t == "" {
		return schema.Avro
	}
	return t
}

func (r *Registry) state() *State { return r.store.State() }

// hasSubject tells whether subject has a version (soft-deleted ones
// counting only with deleted).
func (st *State) hasSubject(subject string, deleted bool) bool {
	return len(st.Versions(subject, deleted)) > 0
}

// latest is the subject's newest version not deleted.
func (st *State) latest(subject string) (SubjectVersion, bool) {
	vs := st.Versions(subject, false)
	if len(vs) == 0 {
		return SubjectVersion{}, false
	}
	return vs[len(vs)-1], true
}

// lookupVersion finds subject's version (versionLatest: the newest not
// deleted), answering Confluent's 40401/40402 when there is none.
func (st *State) lookupVersion(subject string, version int, deleted bool) (SubjectVersion, *restError) {
	var v SubjectVersion
	ok := false
	if version == versionLatest {
		v, ok = st.latest(subject)
	} else {
		v, ok = st.Version(subject, version)
		ok = ok && (deleted || !v.Deleted)
	}
	if ok {
		return v, nil
	}
	if !st.hasSubject(subject, deleted) {
		return v, errSubjectNotFound(subject)
	}
	return v, errVersionNotFound(version)
}

func (r *Registry) listSubjects(req *http.Request) []string {
	st := r.state()
	var subjects []string
	switch {
	case queryBool(req, "deletedOnly"):
		live := st.Subjects(false)
		for _, s := range st.Subjects(true) {
			if !slices.Contains(live, s) {
				subjects = append(subjects, s)
			}
		}
	default:
		subjects = st.Subjects(queryBool(req, "deleted"))
	}
	out := subjectsWithPrefix(subjects, req.URL.Query().Get("subjectPrefix"))
	if out == nil {
		out = []string{}
	}
	return out
}

func (r *Registry) listVersions(req *http.Request, subject string) (any, *restError) {
	st := r.state()
	deleted := queryBool(req, "deleted")
	deletedOnly := queryBool(req, "deletedOnly")
	vs := st.Versions(subject, deleted || deletedOnly)
	if len(vs) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	out := []int{}
	for _, v := range vs {
		if deletedOnly && !v.Deleted {
			continue
		}
		out = append(out, v.Version)
	}
	return out, nil
}

func (r *Registry) getVersion(req *http.Request, subject, version string) (schemaEntity, *restError) {
	v, rerr := parseVersion(version)
	if rerr != nil {
		return schemaEntity{}, rerr
	}
	sv, rerr := r.state().lookupVersion(subject, v, queryBool(req, "deleted"))
	if rerr != nil {
		return schemaEntity{}, rerr
	}
	return entityOf(sv), nil
}

func (r *Registry) referencedBy(req *http.Request, subject, version string) (any, *restError) {
	v, rerr := parseVersion(version)
	if rerr != nil {
		return nil, rerr
	}
	st := r.state()
	deleted := queryBool(req, "deleted")
	sv, rerr := st.lookupVersion(subject, v, deleted)
	if rerr != nil {
		return nil, rerr
	}
	ids := st.ReferencedBy(subject, sv.Version, deleted)
	if ids == nil {
		ids = []int{}
	}
	return ids, nil
}

// lookup answers POST /subjects/{subject}: the version of subject that
// holds the posted schema.
func (r *Registry) lookup(req *http.Request, subject string) (any, *restError) {
	var body registerRequest
	if rerr := decodeBody(req, &body); rerr != nil {
		return nil, rerr
	}
	st := r.state()
	deleted := queryBool(req, "deleted")
	normalize := queryBool(req, "normalize") || st.normalizeByConfig(subject)
	p, refs, rerr := r.parseRequest(st, subject, &body)
	if rerr != nil {
		return nil, rerr
	}
	vs := st.Versions(subject, deleted)
	for i := len(vs) - 1; i >= 0; i-- {
		if r.sameSchema(st, p, refs, normalize, vs[i]) {
			return entityOf(vs[i]), nil
		}
	}
	if len(vs) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	return nil, errSchemaNotFound()
}

// deleteVersion answers DELETE /subjects/{subject}/versions/{version}.
func (r *Registry) deleteVersion(req *http.Request, subject, version string) (any, *restError) {
	v, rerr := parseVersion(version)
	if rerr != nil {
		return nil, rerr
	}
	permanent := queryBool(req, "permanent")
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state()
	if v != versionLatest {
		if sv, ok := st.Version(subject, v); ok && sv.Deleted && !permanent {
			return nil, &restError{http.StatusNotFound, codeVersionSoftDeleted, sprintf(versionSoftDeletedMessageFormat, subject, v)}
		}
	}
	sv, rerr := st.lookupVersion(subject, v, true)
	if rerr != nil {
		return nil, rerr
	}
	if st.readOnly(subject) {
		return nil, errReadOnly(subject)
	}
	if len(st.referencingSubjects(subject, sv.Version, permanent)) > 0 {
		return nil, errReferenceExists(subject, sv.Version)
	}
	var recs []Record
	if permanent {
		if !sv.Deleted {
			return nil, &restError{http.StatusNotFound, codeVersionNotSoftDeleted, sprintf(versionNotSoftDeletedMessageFormat, subject, sv.Version)}
		}
		recs = append(recs, SchemaTombstone(subject, sv.Version))
		if len(st.Versions(subject, true)) == 1 {
			recs = append(recs, r.subjectSettingsCleared(st, subject)...)
		}
	} else {
		recs = append(recs, SchemaRecord(valueOf(sv, true)))
	}
	if err := r.store.Write(req.Context(), recs); err != nil {
		return nil, errStore("Delete Schema Version", err)
	}
	r.observe(Change{Kind: SchemaDeleted, Subject: subject, Version: sv.Version, ID: sv.ID, SchemaType: string(sv.SchemaType), Permanent: permanent})
	return sv.Version, nil
}

// deleteSubject answers DELETE /subjects/{subject}.
func (r *Registry) deleteSubject(req *http.Request, subject string) (any, *restError) {
	permanent := queryBool(req, "permanent")
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state()
	if !st.hasSubject(subject, true) {
		return nil, errSubjectNotFound(subject)
	}
	if !permanent && !st.hasSubject(subject, false) {
		return nil, &restError{http.StatusNotFound, codeSubjectSoftDeleted, sprintf(subjectSoftDeletedMessageFormat, subject)}
	}
	if st.readOnly(subject) {
		return nil, errReadOnly(subject)
	}
	vs := st.Versions(subject, permanent)
	for _, v := range vs {
		if slices.ContainsFunc(st.referencingSubjects(subject, v.Version, permanent), func(s string) bool { return s != subject }) {
			return nil, errReferenceExists(subject, v.Version)
		}
		if permanent && !v.Deleted {
			return nil, &restError{http.StatusNotFound, codeSubjectNotSoftDeleted, sprintf(subjectNotSoftDeletedMessageFormat, subject)}
		}
	}
	var recs []Record
	if permanent {
		// newest first: a version may reference an older one of its subject
		for i := len(vs) - 1; i >= 0; i-- {
			recs = append(recs, SchemaTombstone(subject, vs[i].Version))
		}
		recs = append(recs, r.subjectSettingsCleared(st, subject)...)
	} else {
		recs = append(recs, DeleteSubjectRecord(subject, vs[len(vs)-1].Version))
	}
	if err := r.store.Write(req.Context(), recs); err != nil {
		return nil, errStore("Delete subject", err)
	}
	out := make([]int, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Version)
		r.observe(Change{Kind: SchemaDeleted, Subject: subject, Version: v.Version, ID: v.ID, SchemaType: string(v.SchemaType), Permanent: permanent})
	}
	return out, nil
}

// subjectSettingsCleared drops a subject's own config and mode, as
// Confluent does once its last version is gone for good.
func (r *Registry) subjectSettingsCleared(st *State, subject string) []Record {
	var recs []Record
	if _, ok := st.Mode(subject); ok {
		recs = append(recs, ModeRecord(subject, nil))
	}
	if _, ok := st.Config(subject); ok {
		recs = append(recs, ConfigRecord(subject, nil))
	}
	return recs
}

func valueOf(v SubjectVersion, deleted bool) SchemaValue {
	return SchemaValue{
		Subject: v.Subject, Version: v.Version, ID: v.ID, SchemaType: string(typeOrAvro(v.SchemaType)),
		References: v.References, Schema: v.Schema, Deleted: deleted,
	}
}
