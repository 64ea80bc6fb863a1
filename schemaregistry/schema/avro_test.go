package schema

import (
	"slices"
	"strings"
	"testing"
)

func mustAvro(t *testing.T, text string, deps map[string]string) Parsed {
	t.Helper()
	p, err := Parse(Avro, text, deps)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return p
}

// The canonical text is Avro Java's Schema.toString(refs, false): type,
// name, namespace (where it differs from the enclosing one), doc,
// fields/symbols/size, then properties as read, then aliases.
func TestAvroCanonical(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"primitive", ` "string" `, `"string"`},
		{"primitive object", `{"type":"long"}`, `"long"`},
		{"primitive with property", `{"type":"string","avro.java.string":"String"}`, `{"type":"string","avro.java.string":"String"}`},
		{"record reordered and compacted", `{
			"fields": [ {"type": "int", "name": "id", "doc": "the id"}, {"name":"n","default":null,"type":["null","string"]} ],
			"name": "User", "type": "record", "namespace": "com.acme", "doc": "a user", "x-owner": "team" }`,
			`{"type":"record","name":"User","namespace":"com.acme","doc":"a user","fields":[{"name":"id","type":"int","doc":"the id"},{"name":"n","type":["null","string"],"default":null}],"x-owner":"team"}`},
		{"dotted name splits", `{"type":"record","name":"com.acme.User","fields":[]}`,
			`{"type":"record","name":"User","namespace":"com.acme","fields":[]}`},
		{"nested named type in the same namespace, used twice", `{"type":"record","name":"a.R","fields":[
			{"name":"x","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},
			{"name":"y","type":"E"},{"name":"z","type":{"type":"fixed","name":"b.F","size":4}}]}`,
			`{"type":"record","name":"R","namespace":"a","fields":[{"name":"x","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},{"name":"y","type":"E"},{"name":"z","type":{"type":"fixed","name":"F","namespace":"b","size":4}}]}`},
		{"field order and aliases", `{"type":"record","name":"R","aliases":["Old"],"fields":[{"name":"a","type":"int","order":"descending","aliases":["b"]}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"descending","aliases":["b"]}],"aliases":["Old"]}`},
		{"array, map, logical type", `{"type":"record","name":"R","fields":[{"name":"a","type":{"items":"int","type":"array"}},{"name":"m","type":{"type":"map","values":"long"}},{"name":"d","type":{"type":"int","logicalType":"date"}}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":"int"}},{"name":"m","type":{"type":"map","values":"long"}},{"name":"d","type":{"type":"int","logicalType":"date"}}]}`},
		{"no HTML escaping", `{"type":"record","name":"R","doc":"a <b> & c","fields":[]}`, `{"type":"record","name":"R","doc":"a <b> & c","fields":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustAvro(t, tc.in, nil).Canonical(); got != tc.want {
				t.Fatalf("canonical\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Normalised text sorts properties (logicalType first) and aliases and
// drops an empty doc of a named type.
func TestAvroNormalized(t *testing.T) {
	in := `{"type":"record","name":"R","namespace":"n","doc":"","z":1,"a":2,"aliases":["Z","A"],"fields":[
		{"name":"d","type":{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"},"zz":true,"aa":false}]}`
	p := mustAvro(t, in, nil)
	wantC := `{"type":"record","name":"R","namespace":"n","doc":"","fields":[{"name":"d","type":{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"},"zz":true,"aa":false}],"z":1,"a":2,"aliases":["Z","A"]}`
	wantN := `{"type":"record","name":"R","namespace":"n","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2},"aa":false,"zz":true}],"a":2,"z":1,"aliases":["A","Z"]}`
	if p.Canonical() != wantC {
		t.Fatalf("canonical\n got %s\nwant %s", p.Canonical(), wantC)
	}
	if p.Normalized() != wantN {
		t.Fatalf("normalized\n got %s\nwant %s", p.Normalized(), wantN)
	}
	// Two spellings of one schema normalise to the same text.
	q := mustAvro(t, `{"fields":[{"aa":false,"zz":true,"type":{"logicalType":"decimal","precision":4,"scale":2,"type":"bytes"},"name":"d"}],"a":2,"z":1,"aliases":["A","Z"],"name":"n.R","type":"record"}`, nil)
	if q.Normalized() != wantN {
		t.Fatalf("normalized spelling 2\n got %s\nwant %s", q.Normalized(), wantN)
	}
}

// References are named types parsed before the schema; the schema's
// text names them and does not inline them.
func TestAvroReferences(t *testing.T) {
	deps := map[string]string{
		"com.acme.Address": `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"com.acme.City"}]}`,
		"com.acme.City":    `{"type":"record","name":"City","namespace":"com.acme","fields":[{"name":"name","type":"string"}]}`,
	}
	p := mustAvro(t, `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"Address"},{"name":"bill","type":"com.acme.Address"}]}`, deps)
	want := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"Address"},{"name":"bill","type":"Address"}]}`
	if p.Canonical() != want {
		t.Fatalf("canonical\n got %s\nwant %s", p.Canonical(), want)
	}
	if _, err := Parse(Avro, `{"type":"record","name":"O","fields":[{"name":"a","type":"com.acme.Missing"}]}`, deps); err == nil {
		t.Fatal("an unknown named type parsed")
	}
	if _, err := Parse(Avro, `{"type":"record","name":"O","fields":[{"name":"a","type":"com.acme.Address"}]}`, nil); err == nil {
		t.Fatal("a reference parsed without its dependency")
	}
}

func TestAvroInvalid(t *testing.T) {
	for _, in := range []string{`{"type":"record","name":"R"}`, `{"type":"recordx","name":"R","fields":[]}`, `not json`, `{"type":"enum","name":"E","symbols":["A","A"]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}`} {
		if _, err := Parse(Avro, in, nil); err == nil {
			t.Errorf("%s parsed", in)
		}
	}
}

const rec = `{"type":"record","name":"R","namespace":"n","fields":[%s]}`

func avroRecord(fields string) string { return strings.Replace(rec, "%s", fields, 1) }

// Each of Avro's resolution rules as Confluent's BACKWARD applies them
// (reader = the new schema, writer = the old one). Every case's verdict,
// and each incompatibility's type, path and detail, is what Avro Java
// 1.12.0's SchemaCompatibility gives for the same pair.
func TestAvroBackwardRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     []string // nil: compatible
	}{
		{"add field with default", avroRecord(`{"name":"a","type":"int"}`), avroRecord(`{"name":"a","type":"int"},{"name":"b","type":"string","default":"x"}`), nil},
		{"add field without default", avroRecord(`{"name":"a","type":"int"}`), avroRecord(`{"name":"a","type":"int"},{"name":"b","type":"string"}`),
			[]string{"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the %s schema has no default value and is missing in the %s schema', additionalInfo:'b'}"}},
		{"remove field", avroRecord(`{"name":"a","type":"int"},{"name":"b","type":"string"}`), avroRecord(`{"name":"a","type":"int"}`), nil},
		{"promote int to long", avroRecord(`{"name":"a","type":"int"}`), avroRecord(`{"name":"a","type":"long"}`), nil},
		{"narrow long to int", avroRecord(`{"name":"a","type":"long"}`), avroRecord(`{"name":"a","type":"int"}`),
			[]string{"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}"}},
		{"string to bytes", avroRecord(`{"name":"a","type":"string"}`), avroRecord(`{"name":"a","type":"bytes"}`), nil},
		{"add enum symbol", `{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, nil},
		{"remove enum symbol", `{"type":"enum","name":"E","symbols":["A","B"]}`, `{"type":"enum","name":"E","symbols":["A"]}`,
			[]string{"{errorType:'MISSING_ENUM_SYMBOLS', description:'The %s schema is missing enum symbols '[B]' at path '/symbols' in the %s schema', additionalInfo:'[B]'}"}},
		{"remove enum symbol, reader has a default", `{"type":"enum","name":"E","symbols":["A","B"]}`, `{"type":"enum","name":"E","symbols":["A"],"default":"A"}`, nil},
		{"add union branch", avroRecord(`{"name":"a","type":["null","string"]}`), avroRecord(`{"name":"a","type":["null","string","int"]}`), nil},
		{"remove union branch", avroRecord(`{"name":"a","type":["null","string","int"]}`), avroRecord(`{"name":"a","type":["null","string"]}`),
			[]string{"{errorType:'MISSING_UNION_BRANCH', description:'The %s schema is missing a type inside a union field at path '/fields/0/type/2' in the %s schema', additionalInfo:'reader union lacking writer type: INT'}"}},
		{"union to its branch", avroRecord(`{"name":"a","type":["null","string"]}`), avroRecord(`{"name":"a","type":"string"}`),
			[]string{"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type/0') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: STRING not compatible with writer type: NULL'}"}},
		{"type into a union", avroRecord(`{"name":"a","type":"string"}`), avroRecord(`{"name":"a","type":["null","string"],"default":null}`), nil},
		{"rename field with alias", avroRecord(`{"name":"a","type":"int"}`), avroRecord(`{"name":"b","type":"int","aliases":["a"]}`), nil},
		{"rename field without alias", avroRecord(`{"name":"a","type":"int"}`), avroRecord(`{"name":"b","type":"int"}`),
			[]string{"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/0' in the %s schema has no default value and is missing in the %s schema', additionalInfo:'b'}"}},
		{"rename record with alias", `{"type":"record","name":"n.Old","fields":[]}`, `{"type":"record","name":"n.New","aliases":["n.Old"],"fields":[]}`, nil},
		{"rename record", `{"type":"record","name":"n.Old","fields":[]}`, `{"type":"record","name":"n.New","fields":[]}`,
			[]string{"{errorType:'NAME_MISMATCH', description:'The name of the schema has changed (path '/name')', additionalInfo:'expected: n.Old'}"}},
		{"change namespace", `{"type":"record","name":"a.R","fields":[{"name":"x","type":"int"}]}`, `{"type":"record","name":"b.R","fields":[{"name":"x","type":"int"}]}`, nil},
		{"fixed size", `{"type":"fixed","name":"F","size":4}`, `{"type":"fixed","name":"F","size":8}`,
			[]string{"{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at path '/size' in the %s schema does not match with the %s schema', additionalInfo:'expected: 4, found: 8'}"}},
		{"array items", `{"type":"array","items":"long"}`, `{"type":"array","items":"int"}`,
			[]string{"{errorType:'TYPE_MISMATCH', description:'The type (path '/items') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}"}},
		// several at once, nested, recursive
		{"two problems", `{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"]}}]}`, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"c","type":"string"}]}`,
			[]string{
				"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}",
				"{errorType:'MISSING_ENUM_SYMBOLS', description:'The %s schema is missing enum symbols '[Y]' at path '/fields/1/type/symbols' in the %s schema', additionalInfo:'[Y]'}",
				"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'c' at path '/fields/2' in the %s schema has no default value and is missing in the %s schema', additionalInfo:'c'}"}},
		{"nested in union", `{"type":"record","name":"R","fields":[{"name":"o","type":["null",{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}]}]}`, `{"type":"record","name":"R","fields":[{"name":"o","type":["null",{"type":"record","name":"S","fields":[{"name":"x","type":"int"},{"name":"y","type":"int"}]}]}]}`,
			[]string{
				"{errorType:'MISSING_UNION_BRANCH', description:'The %s schema is missing a type inside a union field at path '/fields/0/type/1' in the %s schema', additionalInfo:'reader union lacking writer type: RECORD'}"}},
		{"map values record", `{"type":"map","values":{"type":"record","name":"S","fields":[]}}`, `{"type":"map","values":{"type":"record","name":"S","fields":[{"name":"y","type":"int"}]}}`,
			[]string{
				"{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'y' at path '/values/fields/0' in the %s schema has no default value and is missing in the %s schema', additionalInfo:'y'}"}},
		{"writer union to reader non-union with two bad", `{"type":"record","name":"R","fields":[{"name":"a","type":["int","string","null"]}]}`, `{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`,
			[]string{
				"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type/1') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: LONG not compatible with writer type: STRING'}",
				"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type/2') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: LONG not compatible with writer type: NULL'}"}},
		{"top-level type change", `"int"`, `"string"`,
			[]string{
				"{errorType:'TYPE_MISMATCH', description:'The type (path '/') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: STRING not compatible with writer type: INT'}"}},
		{"reader union lacks writer record", `{"type":"record","name":"A","fields":[]}`, `["null","string"]`,
			[]string{
				"{errorType:'MISSING_UNION_BRANCH', description:'The %s schema is missing a type inside a union field at path '/' in the %s schema', additionalInfo:'reader union lacking writer type: RECORD'}"}},
		{"recursive", `{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`, `{"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"]}]}`,
			nil},
		{"recursive bad", `{"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"]}]}`, `{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`,
			[]string{
				"{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the %s schema does not match with the %s schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustAvro(t, tc.new, nil).Backward(mustAvro(t, tc.old, nil))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Backward\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
