package schemaregistry

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// State is the registry's content as replayed from _schemas (subjects,
// versions, ids, configs, modes): pure, no I/O; its methods take its own
// lock, so replay and reads may run concurrently.
//
// It keeps what Confluent's store keeps: a map from each key to its
// latest value, with DELETE_SUBJECT marking versions deleted and
// CLEAR_SUBJECT dropping the deleted ones.
type State struct {
	mu       sync.RWMutex
	versions map[string]map[int]*SchemaValue // subject → version → value
	byID     map[int]map[svKey]struct{}      // id → the versions carrying it
	configs  map[string]ConfigValue          // "" = global
	modes    map[string]string               // "" = global
	maxID    int                             // the highest id any SCHEMA record carried
}

type svKey struct {
	subject string
	version int
}

// NewState is an empty registry.
func NewState() *State {
	return &State{
		versions: map[string]map[int]*SchemaValue{},
		byID:     map[int]map[svKey]struct{}{},
		configs:  map[string]ConfigValue{},
		modes:    map[string]string{},
	}
}

// Replay applies one record of _schemas, in log order. Keys it does not
// know (a NOOP, a future keytype) are skipped, as Confluent's store does.
// A record it cannot decode is an error and changes nothing.
func (s *State) Replay(rec Record) error {
	var k recordKey
	if err := json.Unmarshal(rec.Key, &k); err != nil {
		return fmt.Errorf("schemaregistry: undecodable _schemas key %q: %w", rec.Key, err)
	}
	subject := ""
	if k.Subject != nil {
		subject = *k.Subject
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch k.KeyType {
	case keySchema:
		if k.Version == nil {
			return fmt.Errorf("schemaregistry: SCHEMA key without a version: %s", rec.Key)
		}
		key := svKey{subject, *k.Version}
		if rec.Value == nil {
			s.removeVersion(key)
			return nil
		}
		var v SchemaValue
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return fmt.Errorf("schemaregistry: undecodable SCHEMA value for %s v%d: %w", subject, *k.Version, err)
		}
		if v.SchemaType == "" {
			v.SchemaType = string(schema.Avro)
		}
		v.Subject, v.Version = subject, *k.Version
		// Confluent's store refuses a record that gives an id already in
		// use to a different schema.
		for other := range s.byID[v.ID] {
			if o := s.versions[other.subject][other.version]; o != nil && o.Schema != v.Schema {
				return fmt.Errorf("schemaregistry: id %d of %s v%d is already another schema's; record skipped", v.ID, subject, v.Version)
			}
		}
		s.removeVersion(key)
		if s.versions[subject] == nil {
			s.versions[subject] = map[int]*SchemaValue{}
		}
		s.versions[subject][key.version] = &v
		if s.byID[v.ID] == nil {
			s.byID[v.ID] = map[svKey]struct{}{}
		}
		s.byID[v.ID][key] = struct{}{}
		s.maxID = max(s.maxID, v.ID)
	case keyConfig:
		if rec.Value == nil {
			delete(s.configs, subject)
			return nil
		}
		var v ConfigValue
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return fmt.Errorf("schemaregistry: undecodable CONFIG value: %w", err)
		}
		v.Subject = subject
		s.configs[subject] = v
	case keyMode:
		if rec.Value == nil {
			delete(s.modes, subject)
			return nil
		}
		var v ModeValue
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return fmt.Errorf("schemaregistry: undecodable MODE value: %w", err)
		}
		s.modes[subject] = v.Mode
	case keyDeleteSubject:
		if rec.Value == nil {
			return nil
		}
		var v deleteSubjectValue
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return fmt.Errorf("schemaregistry: undecodable DELETE_SUBJECT value: %w", err)
		}
		for ver, sv := range s.versions[v.Subject] {
			if ver <= v.Version && !sv.Deleted {
				c := *sv
				c.Deleted = true
				s.versions[v.Subject][ver] = &c
			}
		}
	case keyClearSubject:
		if rec.Value == nil {
			return nil
		}
		var v clearSubjectValue
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return fmt.Errorf("schemaregistry: undecodable CLEAR_SUBJECT value: %w", err)
		}
		if v.Subject == "" {
			v.Subject = subject
		}
		for subj, vs := range s.versions {
			if v.Subject != "" && subj != v.Subject {
				continue
			}
			for ver, sv := range vs {
				if sv.Deleted {
					s.removeVersion(svKey{subj, ver})
				}
			}
		}
	}
	return nil
}

// removeVersion forgets one version; the caller holds the lock.
func (s *State) removeVersion(key svKey) {
	old := s.versions[key.subject][key.version]
	if old == nil {
		return
	}
	delete(s.versions[key.subject], key.version)
	if len(s.versions[key.subject]) == 0 {
		delete(s.versions, key.subject)
	}
	delete(s.byID[old.ID], key)
	if len(s.byID[old.ID]) == 0 {
		delete(s.byID, old.ID)
	}
}

// SubjectVersion is one version of a subject as the registry keeps it.
type SubjectVersion struct {
	Subject    string
	Version    int
	ID         int
	SchemaType schema.Type
	Schema     string
	References []schema.Reference
	Deleted    bool
}

func (v *SchemaValue) subjectVersion() SubjectVersion {
	return SubjectVersion{
		Subject: v.Subject, Version: v.Version, ID: v.ID, SchemaType: schema.Type(v.SchemaType),
		Schema: v.Schema, References: slices.Clone(v.References), Deleted: v.Deleted,
	}
}

// Subjects lists the subjects (sorted) that have a version not deleted,
// or, with deleted, any version at all.
func (s *State) Subjects(deleted bool) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for subj, vs := range s.versions {
		for _, v := range vs {
			if deleted || !v.Deleted {
				out = append(out, subj)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// Versions lists a subject's versions in ascending order; soft-deleted
// ones only with deleted.
func (s *State) Versions(subject string, deleted bool) []SubjectVersion {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []SubjectVersion
	for _, v := range s.versions[subject] {
		if deleted || !v.Deleted {
			out = append(out, v.subjectVersion())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// Version is one version of a subject (deleted or not).
func (s *State) Version(subject string, version int) (SubjectVersion, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.versions[subject][version]
	if v == nil {
		return SubjectVersion{}, false
	}
	return v.subjectVersion(), true
}

// SchemaByID is the schema registered with id: the version (of any
// subject) carrying it, preferring one not deleted, then the lowest
// subject and version.
func (s *State) SchemaByID(id int) (SubjectVersion, bool) {
	vs := s.VersionsByID(id, true)
	for _, v := range vs {
		if !v.Deleted {
			return v, true
		}
	}
	if len(vs) > 0 {
		return vs[0], true
	}
	return SubjectVersion{}, false
}

// VersionsByID lists the subject versions carrying id, sorted by subject
// then version; soft-deleted ones only with deleted.
func (s *State) VersionsByID(id int, deleted bool) []SubjectVersion {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []SubjectVersion
	for k := range s.byID[id] {
		v := s.versions[k.subject][k.version]
		if v != nil && (deleted || !v.Deleted) {
			out = append(out, v.subjectVersion())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// IDs lists every id in use, ascending.
func (s *State) IDs() []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]int, 0, len(s.byID))
	for id := range s.byID {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// MaxID is the highest id any replayed SCHEMA record carried (the next
// new schema gets MaxID()+1, as Confluent's incremental id generator).
func (s *State) MaxID() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.maxID
}

// Config is the compatibility config set for subject ("" = global).
func (s *State) Config(subject string) (ConfigValue, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.configs[subject]
	return c, ok
}

// Mode is the mode set for subject ("" = global).
func (s *State) Mode(subject string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.modes[subject]
	return m, ok
}

// ReferencedBy lists the ids of the versions (any subject; soft-deleted
// ones only with deleted) whose references name subject/version.
func (s *State) ReferencedBy(subject string, version int, deleted bool) []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []int
	for _, vs := range s.versions {
		for _, v := range vs {
			if !deleted && v.Deleted {
				continue
			}
			for _, r := range v.References {
				if r.Subject == subject && r.Version == version {
					out = append(out, v.ID)
					break
				}
			}
		}
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// referencingSubjects lists the subjects whose versions reference
// subject/version; the caller holds no lock.
func (s *State) referencingSubjects(subject string, version int, deleted bool) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for subj, vs := range s.versions {
		for _, v := range vs {
			if !deleted && v.Deleted {
				continue
			}
			if slices.ContainsFunc(v.References, func(r schema.Reference) bool {
				return r.Subject == subject && r.Version == version
			}) {
				out = append(out, subj)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// subjectsWithPrefix filters a sorted subject list.
func subjectsWithPrefix(subjects []string, prefix string) []string {
	if prefix == "" {
		return subjects
	}
	var out []string
	for _, s := range subjects {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
