package schema

import (
	"reflect"
	"strings"
	"testing"
)

func mustProto(t *testing.T, text string, deps map[string]string) *protobufSchema {
	t.Helper()
	p, err := Parse(Protobuf, text, deps)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return p.(*protobufSchema)
}

// diffNames lists every difference as "KIND #/path", in Confluent's order
// (messages by name, fields by number).
func protoDiffNames(older, newer *protobufSchema) []string {
	var out []string
	for _, d := range protoCompare(older.file, newer.file) {
		out = append(out, d.kind+" "+d.path)
	}
	return out
}

const p3 = `syntax = "proto3";` + "\n"

// TestProtobufCompatibilityRules pins each of Confluent's Protobuf rules:
// the differences found, and whether the newer schema is BACKWARD
// compatible with the older.
func TestProtobufCompatibilityRules(t *testing.T) {
	cases := []struct {
		name         string
		older, newer string
		deps         map[string]string
		diffs        []string
		compatible   bool
	}{
		{"identical", p3 + `message A { int32 a = 1; }`, p3 + `message A { int32 a = 1; }`, nil, nil, true},
		{"comments and layout are no difference", p3 + `message A { int32 a = 1; }`,
			p3 + "// doc\nmessage A {\n  int32 a = 1; // the a\n}", nil, nil, true},
		{"field added", p3 + `message A { int32 a = 1; }`, p3 + `message A { int32 a = 1; string b = 2; }`, nil,
			[]string{"FIELD_ADDED #/A/2"}, true},
		{"field removed", p3 + `message A { int32 a = 1; string b = 2; }`, p3 + `message A { int32 a = 1; }`, nil,
			[]string{"FIELD_REMOVED #/A/2"}, true},
		{"field renamed", p3 + `message A { int32 a = 1; }`, p3 + `message A { int32 b = 1; }`, nil,
			[]string{"FIELD_NAME_CHANGED #/A/1"}, true},
		{"message added", p3 + `message A { int32 a = 1; }`, p3 + `message A { int32 a = 1; } message B { int32 b = 1; }`, nil,
			[]string{"MESSAGE_ADDED #/B"}, true},
		{"message removed", p3 + `message A { int32 a = 1; } message B { int32 b = 1; }`, p3 + `message A { int32 a = 1; }`, nil,
			[]string{"MESSAGE_REMOVED #/B"}, false},
		{"nested message removed", p3 + `message A { message N { int32 x = 1; } }`, p3 + `message A { }`, nil,
			[]string{"MESSAGE_REMOVED #/A/N"}, false},
		{"message moved", p3 + `message A { int32 a = 1; } message B { int32 b = 1; }`,
			p3 + `message B { int32 b = 1; } message A { int32 a = 1; }`, nil,
			[]string{"MESSAGE_MOVED #/A", "MESSAGE_MOVED #/B"}, true},
		{"package changed", p3 + `package a; message A { int32 a = 1; }`, p3 + `package b; message A { int32 a = 1; }`, nil,
			[]string{"PACKAGE_CHANGED #/"}, false},
		{"syntax changed is no difference", `syntax = "proto2"; message A { optional int32 a = 1; }`,
			p3 + `message A { int32 a = 1; }`, nil, nil, true},
		{"int32 to int64 (same wire group)", p3 + `message A { int32 a = 1; }`, p3 + `message A { int64 a = 1; }`, nil, nil, true},
		{"uint64 to bool (same wire group)", p3 + `message A { uint64 a = 1; }`, p3 + `message A { bool a = 1; }`, nil, nil, true},
		{"sint32 to sint64", p3 + `message A { sint32 a = 1; }`, p3 + `message A { sint64 a = 1; }`, nil, nil, true},
		{"fixed32 to sfixed32", p3 + `message A { fixed32 a = 1; }`, p3 + `message A { sfixed32 a = 1; }`, nil, nil, true},
		{"fixed64 to sfixed64", p3 + `message A { fixed64 a = 1; }`, p3 + `message A { sfixed64 a = 1; }`, nil, nil, true},
		{"string to bytes", p3 + `message A { string a = 1; }`, p3 + `message A { bytes a = 1; }`, nil, nil, true},
		{"enum to int32", p3 + `message A { E a = 1; } enum E { Z = 0; }`, p3 + `message A { int32 a = 1; } enum E { Z = 0; }`, nil, nil, true},
		{"int32 to sint32", p3 + `message A { int32 a = 1; }`, p3 + `message A { sint32 a = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/1"}, false},
		{"int32 to string", p3 + `message A { int32 a = 1; }`, p3 + `message A { string a = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/1"}, false},
		{"float to double", p3 + `message A { float a = 1; }`, p3 + `message A { double a = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/1"}, false},
		{"fixed32 to fixed64", p3 + `message A { fixed32 a = 1; }`, p3 + `message A { fixed64 a = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/1"}, false},
		{"scalar to message", p3 + `message A { int32 a = 1; } message B { }`, p3 + `message A { B a = 1; } message B { }`, nil,
			[]string{"FIELD_KIND_CHANGED #/A/1"}, false},
		{"scalar to map", p3 + `message A { string a = 1; }`, p3 + `message A { map<string, string> a = 1; }`, nil,
			[]string{"FIELD_KIND_CHANGED #/A/1"}, false},
		{"map value kind changed", p3 + `message A { map<string, int32> a = 1; }`, p3 + `message A { map<string, string> a = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/1"}, false},
		{"map value in same group", p3 + `message A { map<string, int32> a = 1; }`, p3 + `message A { map<string, int64> a = 1; }`, nil, nil, true},
		{"message type renamed", p3 + `message A { B a = 1; } message B { } message C { }`,
			p3 + `message A { C a = 1; } message B { } message C { }`, nil,
			[]string{"FIELD_NAMED_TYPE_CHANGED #/A/1"}, false},
		{"message type changed inside", p3 + `message A { B b = 1; } message B { int32 x = 1; }`,
			p3 + `message A { B b = 1; } message B { string x = 1; }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/B/1", "FIELD_NAMED_TYPE_CHANGED #/A/1", "FIELD_SCALAR_KIND_CHANGED #/B/1"}, false},
		{"referenced message compatible change", p3 + `message A { B b = 1; } message B { int32 x = 1; }`,
			p3 + `message A { B b = 1; } message B { int32 x = 1; int32 y = 2; }`, nil,
			[]string{"FIELD_ADDED #/B/2", "FIELD_ADDED #/B/2"}, true},
		{"repeated numeric label changed", `syntax = "proto2"; message A { optional int32 a = 1; }`,
			`syntax = "proto2"; message A { repeated int32 a = 1; }`, nil,
			[]string{"FIELD_NUMERIC_LABEL_CHANGED #/A/1"}, false},
		{"repeated string label changed", `syntax = "proto2"; message A { optional string a = 1; }`,
			`syntax = "proto2"; message A { repeated string a = 1; }`, nil,
			[]string{"FIELD_STRING_OR_BYTES_LABEL_CHANGED #/A/1"}, true},
		{"proto3 unlabelled to repeated is not a label change", p3 + `message A { int32 a = 1; }`,
			p3 + `message A { repeated int32 a = 1; }`, nil, nil, true},
		{"required field added", `syntax = "proto2"; message A { optional int32 a = 1; }`,
			`syntax = "proto2"; message A { optional int32 a = 1; required int32 b = 2; }`, nil,
			[]string{"REQUIRED_FIELD_ADDED #/A/2"}, false},
		{"required field removed", `syntax = "proto2"; message A { optional int32 a = 1; required int32 b = 2; }`,
			`syntax = "proto2"; message A { optional int32 a = 1; }`, nil,
			[]string{"REQUIRED_FIELD_REMOVED #/A/2"}, false},
		{"oneof added", p3 + `message A { int32 a = 1; }`, p3 + `message A { int32 a = 1; oneof o { string x = 2; int32 y = 3; } }`, nil,
			[]string{"ONEOF_ADDED #/A/o", "ONEOF_FIELD_ADDED #/A/o/2", "ONEOF_FIELD_ADDED #/A/o/3"}, true},
		{"oneof removed entirely", p3 + `message A { int32 a = 1; oneof o { string x = 2; int32 y = 3; } }`, p3 + `message A { int32 a = 1; }`, nil,
			[]string{"ONEOF_REMOVED #/A/o"}, true},
		{"oneof field removed", p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`, p3 + `message A { oneof o { string x = 2; } }`, nil,
			[]string{"ONEOF_FIELD_REMOVED #/A/o/3"}, false},
		{"oneof field added", p3 + `message A { oneof o { string x = 2; } }`, p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`, nil,
			[]string{"ONEOF_FIELD_ADDED #/A/o/3"}, true},
		{"oneof field moved to top level", p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`,
			p3 + `message A { string x = 2; oneof o { int32 y = 3; } }`, nil,
			[]string{"ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/A/2"}, true},
		{"one field moved into a new oneof", p3 + `message A { string x = 2; }`, p3 + `message A { oneof o { string x = 2; } }`, nil,
			[]string{"ONEOF_ADDED #/A/o"}, true},
		{"multiple fields moved to oneof", p3 + `message A { string x = 2; int32 y = 3; }`,
			p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`, nil,
			[]string{"MULTIPLE_FIELDS_MOVED_TO_ONEOF #/A/o", "ONEOF_ADDED #/A/o"}, false},
		{"field moved to existing oneof", p3 + `message A { string x = 2; oneof o { int32 y = 3; } }`,
			p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`, nil,
			[]string{"FIELD_MOVED_TO_EXISTING_ONEOF #/A/o"}, false},
		{"oneof renamed", p3 + `message A { oneof o { string x = 2; int32 y = 3; } }`,
			p3 + `message A { oneof p { string x = 2; int32 y = 3; } }`, nil,
			[]string{"ONEOF_REMOVED #/A/o", "ONEOF_ADDED #/A/p"}, true},
		{"oneof member type changed", p3 + `message A { oneof o { string x = 2; } }`, p3 + `message A { oneof o { int32 x = 2; } }`, nil,
			[]string{"FIELD_SCALAR_KIND_CHANGED #/A/o/2"}, false},
		{"enum constant added", p3 + `enum E { A = 0; }`, p3 + `enum E { A = 0; B = 1; }`, nil,
			[]string{"ENUM_CONST_ADDED #/E/1"}, true},
		{"enum constant removed", p3 + `enum E { A = 0; B = 1; }`, p3 + `enum E { A = 0; }`, nil,
			[]string{"ENUM_CONST_REMOVED #/E/1"}, true},
		{"enum constant renamed", p3 + `enum E { A = 0; B = 1; }`, p3 + `enum E { A = 0; C = 1; }`, nil,
			[]string{"ENUM_CONST_CHANGED #/E/1"}, true},
		{"enum added", p3 + `message M { }`, p3 + `message M { } enum E { A = 0; }`, nil, []string{"ENUM_ADDED #/E"}, true},
		{"enum removed", p3 + `message M { } enum E { A = 0; }`, p3 + `message M { }`, nil, []string{"ENUM_REMOVED #/E"}, true},
		{"referenced type changes in a dependency",
			p3 + `import "dep.proto"; message A { dep.D d = 1; }`, p3 + `import "dep.proto"; message A { dep.D d = 1; }`,
			map[string]string{"dep.proto": p3 + `package dep; message D { int32 x = 1; }`},
			nil, true},
		{"recursive message", p3 + `message T { T child = 1; int32 v = 2; }`, p3 + `message T { T child = 1; int64 v = 2; string s = 3; }`, nil,
			[]string{"FIELD_ADDED #/T/3"}, true},
		{"well-known type kept", p3 + `import "google/protobuf/timestamp.proto"; message A { google.protobuf.Timestamp t = 1; }`,
			p3 + `import "google/protobuf/timestamp.proto"; message A { google.protobuf.Timestamp t = 1; }`, nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			older, newer := mustProto(t, c.older, c.deps), mustProto(t, c.newer, c.deps)
			if got := protoDiffNames(older, newer); !reflect.DeepEqual(got, c.diffs) {
				t.Errorf("differences = %q, want %q", got, c.diffs)
			}
			msgs := newer.Backward(older)
			if (len(msgs) == 0) != c.compatible {
				t.Errorf("Backward = %q, want compatible=%v", msgs, c.compatible)
			}
		})
	}
}

// TestProtobufDependencyChange: a referenced message whose newer version
// (another reference) changes a field's kind makes the field's type change.
func TestProtobufDependencyChange(t *testing.T) {
	older := mustProto(t, p3+`import "dep.proto"; message A { dep.D d = 1; }`,
		map[string]string{"dep.proto": p3 + `package dep; message D { int32 x = 1; }`})
	newer := mustProto(t, p3+`import "dep.proto"; message A { dep.D d = 1; }`,
		map[string]string{"dep.proto": p3 + `package dep; message D { string x = 1; }`})
	want := []string{"FIELD_SCALAR_KIND_CHANGED #/D/1", "FIELD_NAMED_TYPE_CHANGED #/A/1"}
	if got := protoDiffNames(older, newer); !reflect.DeepEqual(got, want) {
		t.Fatalf("differences = %q, want %q", got, want)
	}
}

// TestProtobufMessages pins the text of Confluent's messages and how the
// registry fills in which schema is which.
func TestProtobufMessages(t *testing.T) {
	older := mustProto(t, p3+`message A { int32 a = 1; } message B { }`, nil)
	newer := mustProto(t, p3+`message A { string a = 1; }`, nil)
	got := FormatMessages(newer.Backward(older), "new", "old")
	want := []string{
		`{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '#/A/1' in the new schema does not match its kind in the old schema"}`,
		`{errorType:"MESSAGE_REMOVED", description:"The new schema is missing a MESSAGE type at path '#/B' in the old schema"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// FORWARD asks the older schema to read the newer one's data.
	fwd := FormatMessages(older.Backward(newer), "old", "new")
	wantFwd := []string{`{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '#/A/1' in the old schema does not match its kind in the new schema"}`}
	if !reflect.DeepEqual(fwd, wantFwd) {
		t.Fatalf("forward messages = %q, want %q", fwd, wantFwd)
	}
	other, err := Parse(JSON, `{"type":"string"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := newer.Backward(other); !reflect.DeepEqual(got, []string{"Incompatible because of different schema type"}) {
		t.Fatalf("different type: %q", got)
	}
}
