// Package schema parses the three schema types Confluent Schema Registry
// knows (AVRO, PROTOBUF, JSON), gives each its canonical and normalised
// text, and checks compatibility with Confluent's documented rules per
// type, using libraries made for each format (hamba/avro,
// bufbuild/protocompile, santhosh-tekuri/jsonschema). Pure: no I/O.
package schema

import "fmt"

// Type is a schema type as the REST API names it ("schemaType").
type Type string

// The schema types.
const (
	Avro     Type = "AVRO"
	Protobuf Type = "PROTOBUF"
	JSON     Type = "JSON"
)

// Reference is a schema reference as the REST API carries it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Parsed is a schema parsed with its references resolved.
type Parsed interface {
	Type() Type
	// Canonical is the text the registry stores and compares when a
	// request does not ask to normalise.
	Canonical() string
	// Normalized is the text under normalize=true.
	Normalized() string
	// Backward reports why this schema cannot read data written with
	// older (of the same type) under Confluent's rules for the type; nil
	// when it can. FORWARD is older.Backward(this); FULL both.
	Backward(older Parsed) []string
}

// Parse parses text as a schema of type t; deps holds, by reference name,
// the text of every schema it references (transitively resolved by the
// caller). An empty t is AVRO, as in the REST API.
func Parse(t Type, text string, deps map[string]string) (Parsed, error) {
	switch t {
	case "", Avro:
		return parseAvro(text, deps)
	case Protobuf:
		return parseProtobuf(text, deps)
	case JSON:
		return parseJSON(text, deps)
	}
	return nil, fmt.Errorf("unknown schema type %q", t)
}
