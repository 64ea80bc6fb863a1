package schema

import (
	"strings"
	"testing"
)

func TestJSONSchemaCanonicalAndNormalized(t *testing.T) {
	text := `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order",
  "type": "object",
  "properties": {
    "id": { "type": "string", "description": "tab\there, \"quoted\", é, <b>&" },
    "amount": { "type": "number", "maximum": 1.50, "minimum": 1e2, "multipleOf": 0.0000001, "default": -0 }
  },
  "required": [ "id" ],
  "additionalProperties": false
}`
	p, err := Parse(JSON, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Member order kept, no whitespace, numbers as Jackson writes them
	// (integers by value, others as Java's BigDecimal: scale kept,
	// exponents normalised), only quotes, backslashes and control
	// characters escaped.
	wantCanonical := `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Order","type":"object","properties":{"id":{"type":"string","description":"tab\there, \"quoted\", é, <b>&"},"amount":{"type":"number","maximum":1.50,"minimum":1E+2,"multipleOf":1E-7,"default":0}},"required":["id"],"additionalProperties":false}`
	if got := p.Canonical(); got != wantCanonical {
		t.Errorf("canonical:\n%s\nwant:\n%s", got, wantCanonical)
	}
	// Members sorted by name at every level; arrays keep their order.
	wantNormalized := `{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"properties":{"amount":{"default":0,"maximum":1.50,"minimum":1E+2,"multipleOf":1E-7,"type":"number"},"id":{"description":"tab\there, \"quoted\", é, <b>&","type":"string"}},"required":["id"],"title":"Order","type":"object"}`
	if got := p.Normalized(); got != wantNormalized {
		t.Errorf("normalized:\n%s\nwant:\n%s", got, wantNormalized)
	}
	if b, err := Parse(JSON, "true", nil); err != nil || b.Canonical() != "true" {
		t.Errorf("boolean schema: %v %q", err, b.Canonical())
	}
}

func TestJSONSchemaDrafts(t *testing.T) {
	for _, text := range []string{
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"integer","minimum":0,"exclusiveMinimum":true}}}`,
		`{"$schema":"http://json-schema.org/draft-06/schema#","type":"number","exclusiveMinimum":0}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","if":{"type":"string"},"then":{"minLength":1}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","dependentRequired":{"a":["b"]},"unevaluatedProperties":false}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"type":"string"}],"items":false,"$defs":{"x":{"type":"string"}}}`,
		// A pattern Go's regexp engine cannot compile (lookahead) is kept.
		`{"type":"string","pattern":"^(?!x)"}`,
	} {
		if _, err := Parse(JSON, text, nil); err != nil {
			t.Errorf("Parse(%s): %v", text, err)
		}
	}
}

// TestJSONSchemaParseErrors: what the registry answers 42201 with.
func TestJSONSchemaParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"type":`, "invalid JSON schema: unexpected EOF"},
		{`{"type":"string"} x`, "invalid JSON schema: unexpected data after the schema"},
		{`[1]`, "invalid JSON schema: a schema is a JSON object or a boolean"},
		{`{"$ref":"customer.json"}`, `no schema reference named "customer.json"`},
		{`{"properties":{"a":{"$ref":"#/definitions/x"}}}`, `#/definitions/x" not found`},
		{`{"type":"strin"}`, "value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'"},
		{`{"minLength":-1}`, "minimum: got -1, want 0"},
	}
	for _, c := range cases {
		_, err := Parse(JSON, c.text, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "invalid JSON schema: ") {
			t.Errorf("Parse(%s) = %v, want it to say %q", c.text, err, c.want)
		}
	}
}
