package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
)

// srIDs names the schema ids one client saw in order of appearance (#1,
// #2, ...), so that two registries' answers compare whatever ids each
// hands out.
type srIDs struct{ raw []int }

func (s *srIDs) name(id int) string {
	i := slices.Index(s.raw, id)
	if i < 0 {
		s.raw = append(s.raw, id)
		i = len(s.raw) - 1
	}
	return fmt.Sprintf("#%d", i+1)
}

// id is the raw id named #n (0 when there is none: a step then asks for
// an id neither has).
func (s *srIDs) id(n int) int {
	if n < 1 || n > len(s.raw) {
		return 0
	}
	return s.raw[n-1]
}

// srStep is one call made to both clients. want is fakekafka's answer as
// srOutcome renders it, as Confluent's registry gives it; mock, when set,
// is the mock's where it differs, with why.
type srStep struct {
	name string
	call func(cl schemaregistry.Client, ids *srIDs) (any, error)
	want string
	// code is the error_code fakekafka must answer (0: success).
	code int
	mock string
	why  string
}

// srOutcome renders an answer: ids by srIDs' names, schemas as compact
// JSON, and a not-found error as "not found" (the real client returns a
// *rest.Error with a 404xx code, the mock a *url.Error saying "not found").
func srOutcome(v any, err error, ids *srIDs) string {
	if err != nil {
		var re *rest.Error
		if errors.As(err, &re) && re.Code/100 == 404 || strings.Contains(strings.ToLower(err.Error()), "not found") {
			return "not found"
		}
		return "error: " + err.Error()
	}
	switch v := v.(type) {
	case int:
		return ids.name(v)
	case []int:
		s := slices.Clone(v)
		slices.Sort(s)
		return fmt.Sprint(s)
	case []string:
		return fmt.Sprint(v)
	case schemaregistry.SchemaInfo:
		return srSchemaText(v)
	case schemaregistry.SchemaMetadata:
		return fmt.Sprintf("%s v%d %s %s", v.Subject, v.Version, ids.name(v.ID), srSchemaText(v.SchemaInfo))
	case []schemaregistry.SubjectAndVersion:
		var out []string
		for _, sv := range v {
			out = append(out, fmt.Sprintf("%s/%d", sv.Subject, sv.Version))
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	case schemaregistry.Compatibility:
		return v.String()
	case versionOf:
		return fmt.Sprintf("version %d", v)
	}
	return fmt.Sprintf("%T %v", v, v)
}

// versionOf marks a plain int answer that is a version, not an id.
type versionOf int

func srSchemaText(s schemaregistry.SchemaInfo) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s.Schema)); err != nil {
		return "unparsable: " + s.Schema
	}
	t := s.SchemaType
	if t == "" {
		t = "AVRO"
	}
	return t + " " + b.String()
}

const (
	srMockA1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	srMockA2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string","default":""}]}`
	srMockA3 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
)

// TestSchemaRegistryAgainstMockGo makes the same calls with
// confluent-kafka-go's registry client against fakekafka and against the
// client's own mock (mock://), and compares the answers where the mock
// models the registry: ids, versions, latest, subjects, lookups, deletes
// and not-found errors, for which fakekafka must also answer Confluent's
// error_code. Where the mock departs from Confluent's registry the step
// names the mock's answer and why.
func TestSchemaRegistryAgainstMockGo(t *testing.T) {
	c, _, _ := srCluster(t, "orders")
	real, err := schemaregistry.NewClient(schemaregistry.NewConfig(c.SchemaRegistryURL()))
	scMust(t, err)
	mock, err := schemaregistry.NewClient(schemaregistry.NewConfig("mock://compare"))
	scMust(t, err)

	avro := func(s string) schemaregistry.SchemaInfo { return schemaregistry.SchemaInfo{Schema: s} }
	register := func(subject, s string) func(schemaregistry.Client, *srIDs) (any, error) {
		return func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.Register(subject, avro(s), false) }
	}
	latest := func(subject string) func(schemaregistry.Client, *srIDs) (any, error) {
		return func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetLatestSchemaMetadata(subject) }
	}
	versions := func(subject string) func(schemaregistry.Client, *srIDs) (any, error) {
		return func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetAllVersions(subject) }
	}
	subjects := func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetAllSubjects() }
	a1, a2 := "AVRO "+srMockA1, "AVRO "+srMockA2
	steps := []srStep{
		{name: "register version 1", call: register("orders-value", srMockA1), want: "#1"},
		{name: "register version 1 again", call: register("orders-value", srMockA1), want: "#1"},
		{name: "register version 2", call: register("orders-value", srMockA2), want: "#2"},
		{name: "versions", call: versions("orders-value"), want: "[1 2]"},
		{name: "latest", call: latest("orders-value"), want: "orders-value v2 #2 " + a2},
		{name: "version 1", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetSchemaMetadata("orders-value", 1) },
			want: "orders-value v1 #1 " + a1},
		{name: "look up version 1's schema", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			return cl.GetID("orders-value", avro(srMockA1), false)
		}, want: "#1"},
		{name: "version of version 2's schema", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			v, err := cl.GetVersion("orders-value", avro(srMockA2), false)
			return versionOf(v), err
		}, want: "version 2"},
		{name: "schema by id #2", call: func(cl schemaregistry.Client, ids *srIDs) (any, error) {
			return cl.GetBySubjectAndID("orders-value", ids.id(2))
		}, want: a2},
		{name: "subjects", call: subjects, want: "[orders-value]", mock: "[orders-value orders-value]",
			why: "the mock lists a subject once per version"},
		{name: "the same schema under another subject", call: register("audit-value", srMockA1), want: "#1", mock: "#3",
			why: "the mock hands out a new id; Confluent's ids are global, the same schema keeps its id"},
		{name: "subjects and versions of id #1", call: func(cl schemaregistry.Client, ids *srIDs) (any, error) {
			return cl.GetSubjectsAndVersionsByID(ids.id(1))
		}, want: "[audit-value/1 orders-value/1]", mock: "[orders-value/1]", why: "the mock gave audit-value's schema another id"},
		{name: "the same schema with other whitespace", call: register("audit-value", strings.ReplaceAll(srMockA1, ",", ", ")), want: "#1", mock: "#4",
			why: "the mock compares schema text; Confluent compares parsed schemas, so this is audit-value's version 1"},
		{name: "versions of audit-value", call: versions("audit-value"), want: "[1]", mock: "[1 2]",
			why: "the mock made the reformatted schema a version of its own"},
		{name: "contexts", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetAllContexts() }, want: "[.]"},
		{name: "default compatibility", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetDefaultCompatibility() },
			want: "BACKWARD", mock: "not found", why: "the mock has no global config until one is set"},
		{name: "latest of an unknown subject", call: latest("nosuch-value"), want: "not found", code: 40401},
		{name: "versions of an unknown subject", call: versions("nosuch-value"), want: "not found", code: 40401},
		{name: "version 9", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetSchemaMetadata("orders-value", 9) },
			want: "not found", code: 40402},
		{name: "schema id 999999", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetBySubjectAndID("", 999999) },
			want: "not found", code: 40403},
		{name: "look up a schema never registered", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			return cl.GetID("orders-value", avro(srMockA3), false)
		}, want: "not found", code: 40403},
		{name: "subject compatibility not set", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetCompatibility("orders-value") },
			want: "not found", code: 40408},
		{name: "set subject compatibility", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			return cl.UpdateCompatibility("orders-value", schemaregistry.Forward)
		}, want: "FORWARD"},
		{name: "subject compatibility", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.GetCompatibility("orders-value") },
			want: "FORWARD"},
		{name: "soft-delete version 2", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			v, err := cl.DeleteSubjectVersion("orders-value", 2, false)
			return versionOf(v), err
		}, want: "version 2"},
		{name: "versions after the delete", call: versions("orders-value"), want: "[1]"},
		{name: "latest after the delete", call: latest("orders-value"), want: "orders-value v1 #1 " + a1},
		{name: "version 2 with deleted ones", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			return cl.GetSchemaMetadataIncludeDeleted("orders-value", 2, true)
		}, want: "orders-value v2 #2 " + a2},
		{name: "soft-delete the subject", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) { return cl.DeleteSubject("orders-value", false) },
			want: "[1]"},
		{name: "subjects after the delete", call: subjects, want: "[audit-value]", mock: "[audit-value audit-value]",
			why: "once per version again: the mock's audit-value has two"},
		{name: "latest of a deleted subject", call: latest("orders-value"), want: "not found", code: 40401},
		{name: "permanent delete of the subject", call: func(cl schemaregistry.Client, _ *srIDs) (any, error) {
			return cl.DeleteSubject("orders-value", true)
		}, want: "[1 2]"},
	}

	realIDs, mockIDs := &srIDs{}, &srIDs{}
	for _, st := range steps {
		scMust(t, real.ClearCaches()) // every call goes to fakekafka
		rv, rerr := st.call(real, realIDs)
		mv, merr := st.call(mock, mockIDs)
		got, fromMock := srOutcome(rv, rerr, realIDs), srOutcome(mv, merr, mockIDs)
		if got != st.want {
			t.Errorf("%s: fakekafka %q, want %q", st.name, got, st.want)
		}
		var re *rest.Error
		if st.code != 0 && (!errors.As(rerr, &re) || re.Code != st.code) {
			t.Errorf("%s: fakekafka: %v, want error code %d", st.name, rerr, st.code)
		}
		wantMock := st.want
		if st.mock != "" {
			wantMock = st.mock
		}
		if fromMock != wantMock {
			t.Errorf("%s: the mock %q, want %q", st.name, fromMock, wantMock)
		} else if st.mock != "" {
			t.Logf("%s: fakekafka %q, the mock %q (%s)", st.name, got, fromMock, st.why)
		}
	}
}
