package schema

import (
	"reflect"
	"testing"
)

func mustJSON(t *testing.T, text string, deps map[string]string) *jsonSchema {
	t.Helper()
	p, err := Parse(JSON, text, deps)
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return p.(*jsonSchema)
}

func jsonDiffNames(older, newer *jsonSchema) []string {
	var out []string
	for _, d := range jsonCompare(older, newer) {
		out = append(out, d.kind+" "+d.path)
	}
	return out
}

const (
	objA      = `{"type":"object","properties":{"a":{"type":"string"}}}`
	objClosed = `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`
)

// TestJSONSchemaCompatibilityRules pins each of Confluent's JSON Schema
// rules (STRICT policy): the differences found, and whether the newer
// schema is BACKWARD compatible with the older.
func TestJSONSchemaCompatibilityRules(t *testing.T) {
	cases := []struct {
		name         string
		older, newer string
		diffs        []string
		compatible   bool
	}{
		{"identical", objA, objA, nil, true},
		{"member order and spaces are no difference", objA, `{ "properties": {"a": {"type": "string"}}, "type": "object" }`, nil, true},
		// Open content model (additionalProperties absent or true).
		{"optional property added to open model", objA,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
			[]string{"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"}, false},
		{"required property added to open model", objA,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}`,
			[]string{"REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"}, false},
		{"property with empty schema added to open model", objA,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{}}}`,
			[]string{"PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"}, true},
		{"property removed from open model", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`, objA,
			[]string{"PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/b"}, true},
		// Closed content model (additionalProperties false).
		{"optional property added to closed model", objClosed,
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`,
			[]string{"OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"}, true},
		{"required property added to closed model", objClosed,
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"]}`,
			[]string{"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"}, false},
		{"required property with default added to closed model", objClosed,
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"integer","default":0}},"required":["b"]}`,
			[]string{"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"}, true},
		{"property removed from closed model",
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"integer"}}}`, objClosed,
			[]string{"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/b"}, false},
		{"false property removed from closed model",
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":false}}`, objClosed,
			[]string{"PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/b"}, true},
		// Partially open content model (additionalProperties a schema).
		{"property added, covered by additionalProperties",
			`{"type":"object","additionalProperties":{"type":"string"},"properties":{}}`,
			`{"type":"object","additionalProperties":{"type":"string"},"properties":{"b":{"type":"string"}}}`,
			[]string{"PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b", "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"}, true},
		{"property added, not covered by additionalProperties",
			`{"type":"object","additionalProperties":{"type":"string"},"properties":{}}`,
			`{"type":"object","additionalProperties":{"type":"string"},"properties":{"b":{"type":"integer"}}}`,
			[]string{"TYPE_CHANGED #/properties/b", "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b", "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"}, false},
		{"property removed, covered by patternProperties",
			`{"type":"object","patternProperties":{"^x_":{"type":"string"}},"properties":{"x_a":{"type":"string"}}}`,
			`{"type":"object","patternProperties":{"^x_":{"type":"string"}},"properties":{}}`,
			[]string{"PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x_a"}, true},
		{"property removed, not covered by patternProperties",
			`{"type":"object","patternProperties":{"^x_":{"type":"string"}},"properties":{"x_a":{"type":"integer"}}}`,
			`{"type":"object","patternProperties":{"^x_":{"type":"string"}},"properties":{}}`,
			[]string{"TYPE_CHANGED #/properties/x_a", "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x_a"}, false},
		// required
		{"required added", objA, `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			[]string{"REQUIRED_ATTRIBUTE_ADDED #/required/a"}, false},
		{"required with default added", `{"type":"object","properties":{"a":{"type":"string","default":"x"}}}`,
			`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"]}`,
			[]string{"REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a"}, true},
		{"required removed", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, objA,
			[]string{"REQUIRED_ATTRIBUTE_REMOVED #/required/a"}, true},
		// additionalProperties
		{"additionalProperties opened", objClosed, objA, []string{"ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"}, true},
		{"additionalProperties closed", objA, objClosed, []string{"ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"}, false},
		{"additionalProperties given a schema", objA, `{"type":"object","additionalProperties":{"type":"string"},"properties":{"a":{"type":"string"}}}`,
			[]string{"ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"}, false},
		{"additionalProperties schema dropped", `{"type":"object","additionalProperties":{"type":"string"},"properties":{"a":{"type":"string"}}}`, objA,
			[]string{"ADDITIONAL_PROPERTIES_EXTENDED #/additionalProperties"}, true},
		{"maxProperties added", objA, `{"type":"object","maxProperties":3,"properties":{"a":{"type":"string"}}}`,
			[]string{"MAX_PROPERTIES_ADDED #/maxProperties"}, false},
		{"minProperties decreased", `{"type":"object","minProperties":3}`, `{"type":"object","minProperties":1}`,
			[]string{"MIN_PROPERTIES_DECREASED #/minProperties"}, true},
		{"dependency array extended", `{"type":"object","dependencies":{"a":["b"]}}`, `{"type":"object","dependencies":{"a":["b","c"]}}`,
			[]string{"DEPENDENCY_ARRAY_EXTENDED #/dependencies/a"}, false},
		{"dependency array narrowed", `{"type":"object","dependencies":{"a":["b","c"]}}`, `{"type":"object","dependencies":{"a":["b"]}}`,
			[]string{"DEPENDENCY_ARRAY_NARROWED #/dependencies/a"}, true},
		// types
		{"type changed", `{"type":"string"}`, `{"type":"integer"}`, []string{"TYPE_CHANGED #/"}, false},
		{"integer widened to number", `{"type":"integer"}`, `{"type":"number"}`, []string{"TYPE_EXTENDED #/"}, true},
		{"number narrowed to integer", `{"type":"number"}`, `{"type":"integer"}`, []string{"TYPE_NARROWED #/"}, false},
		{"type made a union", `{"type":"string"}`, `{"type":["string","null"]}`, []string{"SUM_TYPE_EXTENDED #/"}, true},
		{"union narrowed to one type", `{"type":["string","null"]}`, `{"type":"string"}`, []string{"TYPE_CHANGED #/"}, false},
		{"anything to the empty schema", `{"type":"string"}`, `{}`, nil, true},
		{"empty schema to a type", `{}`, `{"type":"string"}`, []string{"TYPE_CHANGED #/"}, false},
		{"false to anything", `false`, `{"type":"string"}`, nil, true},
		// strings
		{"maxLength added", `{"type":"string"}`, `{"type":"string","maxLength":5}`, []string{"MAX_LENGTH_ADDED #/maxLength"}, false},
		{"maxLength increased", `{"type":"string","maxLength":5}`, `{"type":"string","maxLength":10}`, []string{"MAX_LENGTH_INCREASED #/maxLength"}, true},
		{"maxLength decreased", `{"type":"string","maxLength":10}`, `{"type":"string","maxLength":5}`, []string{"MAX_LENGTH_DECREASED #/maxLength"}, false},
		{"maxLength removed", `{"type":"string","maxLength":10}`, `{"type":"string"}`, []string{"MAX_LENGTH_REMOVED #/maxLength"}, true},
		{"minLength increased", `{"type":"string","minLength":1}`, `{"type":"string","minLength":2}`, []string{"MIN_LENGTH_INCREASED #/minLength"}, false},
		{"minLength decreased", `{"type":"string","minLength":2}`, `{"type":"string","minLength":1}`, []string{"MIN_LENGTH_DECREASED #/minLength"}, true},
		{"pattern added", `{"type":"string"}`, `{"type":"string","pattern":"^a"}`, []string{"PATTERN_ADDED #/pattern"}, false},
		{"pattern changed", `{"type":"string","pattern":"^a"}`, `{"type":"string","pattern":"^b"}`, []string{"PATTERN_CHANGED #/pattern"}, false},
		{"pattern removed", `{"type":"string","pattern":"^a"}`, `{"type":"string"}`, []string{"PATTERN_REMOVED #/pattern"}, true},
		// numbers
		{"maximum increased", `{"type":"number","maximum":10}`, `{"type":"number","maximum":20}`, []string{"MAXIMUM_INCREASED #/maximum"}, true},
		{"maximum decreased", `{"type":"number","maximum":20}`, `{"type":"number","maximum":10}`, []string{"MAXIMUM_DECREASED #/maximum"}, false},
		{"minimum added", `{"type":"number"}`, `{"type":"number","minimum":0}`, []string{"MINIMUM_ADDED #/minimum"}, false},
		{"minimum decreased", `{"type":"number","minimum":5}`, `{"type":"number","minimum":0}`, []string{"MINIMUM_DECREASED #/minimum"}, true},
		{"exclusiveMaximum increased", `{"type":"number","exclusiveMaximum":5}`, `{"type":"number","exclusiveMaximum":6}`, []string{"EXCLUSIVE_MAXIMUM_INCREASED #/exclusiveMaximum"}, true},
		{"exclusiveMinimum increased", `{"type":"number","exclusiveMinimum":5}`, `{"type":"number","exclusiveMinimum":6}`, []string{"EXCLUSIVE_MINIMUM_INCREASED #/exclusiveMinimum"}, false},
		{"multipleOf reduced", `{"type":"number","multipleOf":4}`, `{"type":"number","multipleOf":2}`, []string{"MULTIPLE_OF_REDUCED #/multipleOf"}, true},
		{"multipleOf expanded", `{"type":"number","multipleOf":2}`, `{"type":"number","multipleOf":4}`, []string{"MULTIPLE_OF_EXPANDED #/multipleOf"}, false},
		{"multipleOf changed", `{"type":"number","multipleOf":2}`, `{"type":"number","multipleOf":3}`, []string{"MULTIPLE_OF_CHANGED #/multipleOf"}, false},
		// enum and const
		{"enum extended", `{"enum":["a","b"]}`, `{"enum":["a","b","c"]}`, []string{"ENUM_ARRAY_EXTENDED #/enum"}, true},
		{"enum narrowed", `{"enum":["a","b"]}`, `{"enum":["a"]}`, []string{"ENUM_ARRAY_NARROWED #/enum"}, false},
		{"enum changed", `{"enum":["a","b"]}`, `{"enum":["a","c"]}`, []string{"ENUM_ARRAY_CHANGED #/enum"}, false},
		{"enum reordered", `{"enum":["a","b"]}`, `{"enum":["b","a"]}`, nil, true},
		// "type" with "enum" is, to Confluent's loader, the allOf of a
		// string schema and an enum schema: hence the path.
		{"typed enum extended", `{"type":"string","enum":["a"]}`, `{"type":"string","enum":["a","b"]}`, []string{"ENUM_ARRAY_EXTENDED #/allOf/0/enum"}, true},
		{"const changed", `{"const":1}`, `{"const":2}`, []string{"ENUM_ARRAY_CHANGED #/const"}, false},
		// arrays
		{"items type changed", `{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":{"type":"integer"}}`,
			[]string{"TYPE_CHANGED #/items"}, false},
		{"items added", `{"type":"array"}`, `{"type":"array","items":{"type":"string"}}`, []string{"SCHEMA_ADDED #/items"}, false},
		{"items removed", `{"type":"array","items":{"type":"string"}}`, `{"type":"array"}`, []string{"SCHEMA_REMOVED #/items"}, true},
		{"maxItems decreased", `{"type":"array","maxItems":5}`, `{"type":"array","maxItems":3}`, []string{"MAX_ITEMS_DECREASED #/maxItems"}, false},
		{"minItems removed", `{"type":"array","minItems":5}`, `{"type":"array"}`, []string{"MIN_ITEMS_REMOVED #/minItems"}, true},
		{"uniqueItems added", `{"type":"array"}`, `{"type":"array","uniqueItems":true}`, []string{"UNIQUE_ITEMS_ADDED #/uniqueItems"}, false},
		{"uniqueItems removed", `{"type":"array","uniqueItems":true}`, `{"type":"array"}`, []string{"UNIQUE_ITEMS_REMOVED #/uniqueItems"}, true},
		{"tuple item added to closed tuple", `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			`{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			[]string{"ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"}, true},
		{"tuple item added to open tuple", `{"type":"array","items":[{"type":"string"}]}`,
			`{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`,
			[]string{"ITEM_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"}, false},
		{"tuple item removed from closed tuple", `{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			`{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			[]string{"ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"}, false},
		{"additionalItems closed", `{"type":"array","items":[{"type":"string"}]}`, `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`,
			[]string{"ADDITIONAL_ITEMS_REMOVED #/additionalItems"}, false},
		// combined schemas
		{"oneOf extended", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`,
			[]string{"SUM_TYPE_EXTENDED #/"}, true},
		{"oneOf narrowed", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{"oneOf":[{"type":"string"}]}`,
			[]string{"SUM_TYPE_NARROWED #/"}, false},
		{"anyOf subschema changed", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"boolean"}]}`,
			[]string{"COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"}, false},
		{"oneOf to anyOf", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			[]string{"COMBINED_TYPE_EXTENDED #/"}, true},
		{"anyOf to allOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"allOf":[{"type":"string"},{"type":"integer"}]}`,
			[]string{"COMBINED_TYPE_CHANGED #/"}, false},
		{"allOf extended", `{"allOf":[{"type":"object"}]}`, `{"allOf":[{"type":"object"},{"required":["a"]}]}`,
			[]string{"PRODUCT_TYPE_EXTENDED #/"}, false},
		{"allOf narrowed", `{"allOf":[{"type":"string"},{"maxLength":3}]}`, `{"allOf":[{"type":"string"}]}`,
			[]string{"PRODUCT_TYPE_NARROWED #/"}, true},
		{"type into a oneOf", `{"type":"string"}`, `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, []string{"SUM_TYPE_EXTENDED #/"}, true},
		// The newer may exclude less than the older did, not more.
		{"not excludes less", `{"not":{"type":"string"}}`, `{"not":{"type":"string","maxLength":3}}`, []string{"NOT_TYPE_NARROWED #/not"}, true},
		{"not excludes more", `{"not":{"type":"string","maxLength":3}}`, `{"not":{"type":"string"}}`, []string{"NOT_TYPE_EXTENDED #/not"}, false},
		// annotations
		{"title, description and default changed", `{"type":"string","title":"a","description":"d","default":"x"}`,
			`{"type":"string","title":"b","description":"e","default":"y"}`,
			[]string{"TITLE_CHANGED #/", "DESCRIPTION_CHANGED #/", "DEFAULT_CHANGED #/"}, true},
		// references
		{"nested $ref followed", `{"type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"integer"}}}`,
			[]string{"TYPE_CHANGED #/properties/a"}, false},
		{"recursive schema", `{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"string"}}}`,
			`{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"string","maxLength":3}}}`,
			[]string{"MAX_LENGTH_ADDED #/properties/v/maxLength"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			older, newer := mustJSON(t, c.older, nil), mustJSON(t, c.newer, nil)
			if got := jsonDiffNames(older, newer); !reflect.DeepEqual(got, c.diffs) {
				t.Errorf("differences = %q, want %q", got, c.diffs)
			}
			msgs := newer.Backward(older)
			if (len(msgs) == 0) != c.compatible {
				t.Errorf("Backward = %q, want compatible=%v", msgs, c.compatible)
			}
		})
	}
}

// TestJSONSchemaReferences: a $ref to a reference by its name resolves to
// the referenced text, and a change there is a change of the schema.
func TestJSONSchemaReferences(t *testing.T) {
	main := `{"type":"object","properties":{"c":{"$ref":"customer.json"}}}`
	older := mustJSON(t, main, map[string]string{"customer.json": `{"type":"object","properties":{"id":{"type":"string"}}}`})
	newer := mustJSON(t, main, map[string]string{"customer.json": `{"type":"object","properties":{"id":{"type":"integer"}}}`})
	want := []string{"TYPE_CHANGED #/properties/c/properties/id"}
	if got := jsonDiffNames(older, newer); !reflect.DeepEqual(got, want) {
		t.Fatalf("differences = %q, want %q", got, want)
	}
	// Against the schema's $id, as a serialiser's schemas name each other.
	withID := `{"$id":"https://example.com/schemas/order.json","type":"object","properties":{"c":{"$ref":"customer.json"}}}`
	mustJSON(t, withID, map[string]string{"customer.json": `{"type":"string"}`})
	mustJSON(t, withID, map[string]string{"https://example.com/schemas/customer.json": `{"type":"string"}`})
}

func TestJSONSchemaMessages(t *testing.T) {
	older := mustJSON(t, objA, nil)
	newer := mustJSON(t, `{"type":"object","properties":{"a":{"type":"integer"},"b%":{"type":"string"}},"required":["b%"]}`, nil)
	got := FormatMessages(newer.Backward(older), "new", "old")
	want := []string{
		`{errorType:"TYPE_CHANGED", description:"A type at path '#/properties/a' is different between the new schema and the old schema'}`,
		`{errorType:"REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", description:"The new schema has an open content model and has a property or item at path '#/properties/b%' which is missing in the old schema'}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages = %q\nwant %q", got, want)
	}
}
