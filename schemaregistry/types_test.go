package schemaregistry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

func typedBody(t schema.Type, text string, refs ...schema.Reference) string {
	b, _ := json.Marshal(registerRequest{Schema: text, SchemaType: string(t), References: refs})
	return string(b)
}

func canonical(t *testing.T, typ schema.Type, text string, deps map[string]string) string {
	t.Helper()
	p, err := schema.Parse(typ, text, deps)
	if err != nil {
		t.Fatal(err)
	}
	return p.Canonical()
}

// PROTOBUF and JSON go through the same REST paths as AVRO: stored as
// their canonical text, references resolved by name, ids shared,
// compatibility by their own rules.
func TestProtobufAndJSONSchemas(t *testing.T) {
	c := newClient(t)
	common := "syntax = \"proto3\";\npackage acme;\n\nmessage Money {\n  int64 units = 1;\n}\n"
	order := "syntax = \"proto3\";\npackage acme;\nimport \"money.proto\";\n\nmessage Order {\n  string id = 1;\n  acme.Money total = 2;\n}\n"
	ref := schema.Reference{Name: "money.proto", Subject: "money", Version: 1}
	commonC := canonical(t, schema.Protobuf, common, nil)
	orderC := canonical(t, schema.Protobuf, order, map[string]string{"money.proto": common})

	c.expect("POST", "/subjects/money/versions", typedBody(schema.Protobuf, common), 200,
		`{"id":1,"version":1,"schemaType":"PROTOBUF","schema":`+jsonString(commonC)+`}`)
	c.expect("POST", "/subjects/orders-value/versions", typedBody(schema.Protobuf, order, ref), 200,
		`{"id":2,"version":1,"schemaType":"PROTOBUF","references":[{"name":"money.proto","subject":"money","version":1}],"schema":`+jsonString(orderC)+`}`)
	c.expect("GET", "/schemas/ids/2", "", 200,
		`{"schemaType":"PROTOBUF","schema":`+jsonString(orderC)+`,"references":[{"name":"money.proto","subject":"money","version":1}]}`)
	c.expect("POST", "/subjects/orders-value", typedBody(schema.Protobuf, order, ref), 200,
		`{"subject":"orders-value","version":1,"id":2,"schemaType":"PROTOBUF","references":[{"name":"money.proto","subject":"money","version":1}],"schema":`+jsonString(orderC)+`}`)
	// The same text without its reference does not parse.
	if status, body := c.register("other", typedBody(schema.Protobuf, order)); status != 422 || !strings.Contains(body, `"error_code":42201`) {
		t.Fatalf("protobuf without its reference: %d %s", status, body)
	}
	// Changing a field's type is not BACKWARD compatible for Protobuf.
	changed := strings.Replace(order, "string id = 1;", "int32 id = 1;", 1)
	if status, body := c.register("orders-value", typedBody(schema.Protobuf, changed, ref)); status != 409 ||
		!strings.Contains(body, `Schema being registered is incompatible with an earlier schema for subject \"orders-value\"`) {
		t.Fatalf("protobuf type change: %d %s", status, body)
	}
	c.expect("GET", "/subjects/money/versions/1/referencedby", "", 200, `[2]`)

	js := `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}`
	jsC := canonical(t, schema.JSON, js, nil)
	c.expect("POST", "/subjects/js/versions", typedBody(schema.JSON, js), 200,
		`{"id":3,"version":1,"schemaType":"JSON","schema":`+jsonString(jsC)+`}`)
	// An AVRO version cannot follow a JSON one.
	c.expect("POST", "/compatibility/subjects/js/versions/latest?verbose=true", avroBody(`"string"`), 200,
		`{"is_compatible":false,"messages":["Incompatible because of different schema type","{validateFields: 'false', compatibility: 'BACKWARD'}"]}`)
	c.expect("GET", "/schemas/ids/3", "", 200, `{"schemaType":"JSON","schema":`+jsonString(jsC)+`}`)
	c.expect("GET", "/subjects/js/versions/1/schema", "", 200, jsC)
}
