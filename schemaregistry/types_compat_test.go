package schemaregistry

import (
	"encoding/json"
	"testing"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// verboseMessages is the messages of a verbose compatibility answer.
func verboseMessages(t *testing.T, c *client, subject, body string) []string {
	t.Helper()
	status, got := c.do("POST", "/compatibility/subjects/"+subject+"/versions/latest?verbose=true", body)
	var ans struct {
		IsCompatible bool     `json:"is_compatible"`
		Messages     []string `json:"messages"`
	}
	if status != 200 || json.Unmarshal([]byte(got), &ans) != nil {
		t.Fatalf("compatibility: %d %s", status, got)
	}
	return ans.Messages
}

// TestProtobufAndJSONCompatibilityAnswers: Protobuf's and JSON Schema's
// differences reach the REST answer in Confluent's words, with "new" and
// "old" where the level puts them (BACKWARD: the new schema reads; FORWARD:
// the old one does).
func TestProtobufAndJSONCompatibilityAnswers(t *testing.T) {
	c := newClient(t)
	v1 := "syntax = \"proto3\";\nmessage A {\n  int32 a = 1;\n}\nmessage B {\n}\n"
	v2 := "syntax = \"proto3\";\nmessage A {\n  string a = 1;\n}\n"
	if status, body := c.register("p", typedBody(schema.Protobuf, v1)); status != 200 {
		t.Fatalf("register: %d %s", status, body)
	}
	got := verboseMessages(t, c, "p", typedBody(schema.Protobuf, v2))
	want := []string{
		`{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '#/A/1' in the new schema does not match its kind in the old schema"}`,
		`{errorType:"MESSAGE_REMOVED", description:"The new schema is missing a MESSAGE type at path '#/B' in the old schema"}`,
		`{oldSchemaVersion: 1}`,
		`{oldSchema: '` + canonical(t, schema.Protobuf, v1, nil) + `'}`,
		`{validateFields: 'false', compatibility: 'BACKWARD'}`,
	}
	if !equalStrings(got, want) {
		t.Fatalf("BACKWARD messages:\n%q\nwant\n%q", got, want)
	}
	c.expect("PUT", "/config/p", `{"compatibility":"FORWARD"}`, 200, `{"compatibility":"FORWARD"}`)
	// The old schema reads the new one's data: B's removal is fine then.
	got = verboseMessages(t, c, "p", typedBody(schema.Protobuf, v2))
	if len(got) != 4 || got[0] != `{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '#/A/1' in the old schema does not match its kind in the new schema"}` {
		t.Fatalf("FORWARD messages: %q", got)
	}

	js1 := `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`
	js2 := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}`
	if status, body := c.register("j", typedBody(schema.JSON, js1)); status != 200 {
		t.Fatalf("register: %d %s", status, body)
	}
	got = verboseMessages(t, c, "j", typedBody(schema.JSON, js2))
	if len(got) != 4 || got[0] != `{errorType:"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", description:"The new schema has an unopen content model and has a required property at path '#/properties/b' which is missing in the old schema'}` {
		t.Fatalf("JSON messages: %q", got)
	}
	// Optional instead: compatible with the closed model, registered.
	js3 := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"additionalProperties":false}`
	if status, body := c.register("j", typedBody(schema.JSON, js3)); status != 200 {
		t.Fatalf("optional property added to a closed model: %d %s", status, body)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProtobufSerializedFormatOverREST: GET /schemas/ids/{id}?format=serialized
// answers the base64 FileDescriptorProto Python's and .NET's Protobuf
// deserialisers ask for.
func TestProtobufSerializedFormatOverREST(t *testing.T) {
	c := newClient(t)
	text := "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  string id = 1;\n}\n"
	if status, body := c.register("o", typedBody(schema.Protobuf, text)); status != 200 {
		t.Fatalf("register: %d %s", status, body)
	}
	p, err := schema.Parse(schema.Protobuf, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	serialized, _ := p.(interface {
		Formatted(string) (string, bool)
	}).Formatted("serialized")
	status, body := c.do("GET", "/schemas/ids/1?format=serialized", "")
	var ans struct{ Schema, SchemaType string }
	if status != 200 || json.Unmarshal([]byte(body), &ans) != nil || ans.SchemaType != "PROTOBUF" || ans.Schema != serialized {
		t.Fatalf("got %d %s\nwant the schema %s", status, body, serialized)
	}
}
