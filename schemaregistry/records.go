package schemaregistry

import (
	"encoding/json"
	"fmt"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// The keytypes of Confluent's _schemas records (SchemaRegistryKeyType).
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyNoop          = "NOOP"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
)

// recordKey is any key of _schemas, as Confluent's serializer writes it:
// keytype first, magic last; SCHEMA keys carry magic 1 and a version,
// the others magic 0. A global CONFIG or MODE key has "subject":null.
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject,omitempty"`
	Version *int    `json:"version,omitempty"`
	Magic   int     `json:"magic"`
}

// schemaKeyJSON etc. keep Confluent's field order and its explicit null.
type schemaKeyJSON struct {
	KeyType string `json:"keytype"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	Magic   int    `json:"magic"`
}

type subjectKeyJSON struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject"`
	Magic   int     `json:"magic"`
}

// SchemaValue is the value of a SCHEMA record (Confluent's SchemaValue:
// empty fields left out, "deleted" always written).
type SchemaValue struct {
	Subject    string             `json:"subject"`
	Version    int                `json:"version"`
	ID         int                `json:"id"`
	SchemaType string             `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema"`
	Deleted    bool               `json:"deleted"`
}

// ConfigValue is the value of a CONFIG record: the subject (absent for
// the global one) and the compatibility level; normalize is Confluent's
// per-config default for ?normalize.
type ConfigValue struct {
	Subject            string `json:"subject,omitempty"`
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
	Normalize          *bool  `json:"normalize,omitempty"`
}

// ModeValue is the value of a MODE record.
type ModeValue struct {
	Subject string `json:"subject,omitempty"`
	Mode    string `json:"mode"`
}

// deleteSubjectValue soft-deletes every version up to Version.
type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// clearSubjectValue drops a subject's soft-deleted versions.
type clearSubjectValue struct {
	Subject string `json:"subject,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("schemaregistry: encoding a record: %v", err)) // plain structs: cannot fail
	}
	return b
}

func optSubject(subject string) *string {
	if subject == "" {
		return nil
	}
	return &subject
}

// SchemaRecord is the record that registers (or, Deleted set, soft-deletes)
// one version of a subject.
func SchemaRecord(v SchemaValue) Record {
	return Record{
		Key:   mustJSON(schemaKeyJSON{KeyType: keySchema, Subject: v.Subject, Version: v.Version, Magic: 1}),
		Value: mustJSON(v),
	}
}

// SchemaTombstone hard-deletes one version of a subject.
func SchemaTombstone(subject string, version int) Record {
	return Record{Key: mustJSON(schemaKeyJSON{KeyType: keySchema, Subject: subject, Version: version, Magic: 1})}
}

// ConfigRecord sets the compatibility config of subject ("" = global);
// a nil v deletes it.
func ConfigRecord(subject string, v *ConfigValue) Record {
	r := Record{Key: mustJSON(subjectKeyJSON{KeyType: keyConfig, Subject: optSubject(subject)})}
	if v != nil {
		r.Value = mustJSON(v)
	}
	return r
}

// ModeRecord sets the mode of subject ("" = global); a nil v deletes it.
func ModeRecord(subject string, v *ModeValue) Record {
	r := Record{Key: mustJSON(subjectKeyJSON{KeyType: keyMode, Subject: optSubject(subject)})}
	if v != nil {
		r.Value = mustJSON(v)
	}
	return r
}

// DeleteSubjectRecord soft-deletes subject's versions up to version.
func DeleteSubjectRecord(subject string, version int) Record {
	return Record{
		Key:   mustJSON(subjectKeyJSON{KeyType: keyDeleteSubject, Subject: &subject}),
		Value: mustJSON(deleteSubjectValue{Subject: subject, Version: version}),
	}
}

// ClearSubjectRecord drops the soft-deleted versions of subject ("" =
// of every subject).
func ClearSubjectRecord(subject string) Record {
	return Record{
		Key:   mustJSON(subjectKeyJSON{KeyType: keyClearSubject, Subject: optSubject(subject)}),
		Value: mustJSON(clearSubjectValue{Subject: subject}),
	}
}

// NoopRecord is Confluent's NOOP record (written to find the end of the
// log); replay skips it.
func NoopRecord() Record {
	return Record{Key: []byte(`{"keytype":"NOOP","magic":0}`)}
}
