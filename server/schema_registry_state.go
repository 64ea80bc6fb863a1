package server

import (
	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// The registry's defaults where nothing is set, as Confluent's.
const (
	defaultSchemaCompatibility = "BACKWARD"
	defaultSchemaMode          = "READWRITE"
)

// SchemaRegistryState is the registry's content as the controls show it
// (GET /v1/schema-registry, the dashboard, fakekafka ctl schemas): every
// subject, soft-deleted ones included, with its versions, ids, types and
// schema text, and the global and per-subject settings; every subject has
// a version. ok is false when the registry is off.
func (c *Cluster) SchemaRegistryState() (st api.SchemaRegistryState, ok bool) {
	if c.sr == nil {
		return api.SchemaRegistryState{}, false
	}
	s := c.sr.store.State()
	st = api.SchemaRegistryState{URL: c.sr.url, Compatibility: defaultSchemaCompatibility, Mode: defaultSchemaMode,
		Subjects: []api.SchemaSubjectState{}}
	if cv, ok := s.Config(""); ok && cv.CompatibilityLevel != "" {
		st.Compatibility = cv.CompatibilityLevel
	}
	if m, ok := s.Mode(""); ok && m != "" {
		st.Mode = m
	}
	for _, subject := range s.Subjects(true) {
		ss := api.SchemaSubjectState{Subject: subject, Deleted: true, Versions: []api.SchemaVersionState{}}
		if cv, ok := s.Config(subject); ok {
			ss.Compatibility = cv.CompatibilityLevel
		}
		if m, ok := s.Mode(subject); ok {
			ss.Mode = m
		}
		for _, v := range s.Versions(subject, true) {
			typ := v.SchemaType
			if typ == "" {
				typ = schema.Avro
			}
			vs := api.SchemaVersionState{Version: v.Version, ID: v.ID, SchemaType: string(typ), Schema: v.Schema, Deleted: v.Deleted}
			for _, r := range v.References {
				vs.References = append(vs.References, api.SchemaReference{Name: r.Name, Subject: r.Subject, Version: r.Version})
			}
			ss.Deleted = ss.Deleted && v.Deleted
			ss.Versions = append(ss.Versions, vs)
		}
		if len(ss.Versions) == 0 {
			continue // deleted for good between the two reads
		}
		st.Subjects = append(st.Subjects, ss)
	}
	return st, true
}
