package schema

import (
	"fmt"
	"testing"
)

// avroJavaCanonical holds schemas with the text Avro Java 1.12.0 prints
// for them (Schema.toString(references, false), which is Confluent's
// AvroSchema.canonicalString()), computed with Avro's own jar: the
// registry's canonical Avro text must be the same.
var avroJavaCanonical = []struct {
	in   string
	deps []string
	java string
}{
	{`"string"`, nil,
		`"string"`},
	{`{"type":"long"}`, nil,
		`"long"`},
	{`{"type":"string","avro.java.string":"String"}`, nil,
		`{"type":"string","avro.java.string":"String"}`},
	{`{"fields": [ {"type": "int", "name": "id", "doc": "the id"}, {"name":"n","default":null,"type":["null","string"]} ], "name": "User", "type": "record", "namespace": "com.acme", "doc": "a user", "x-owner": "team" }`, nil,
		`{"type":"record","name":"User","namespace":"com.acme","doc":"a user","fields":[{"name":"id","type":"int","doc":"the id"},{"name":"n","type":["null","string"],"default":null}],"x-owner":"team"}`},
	{`{"type":"record","name":"com.acme.User","fields":[]}`, nil,
		`{"type":"record","name":"User","namespace":"com.acme","fields":[]}`},
	{`{"type":"record","name":"a.R","fields":[{"name":"x","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},{"name":"y","type":"E"},{"name":"z","type":{"type":"fixed","name":"b.F","size":4}}]}`, nil,
		`{"type":"record","name":"R","namespace":"a","fields":[{"name":"x","type":{"type":"enum","name":"E","symbols":["A","B"],"default":"A"}},{"name":"y","type":"E"},{"name":"z","type":{"type":"fixed","name":"F","namespace":"b","size":4}}]}`},
	{`{"type":"record","name":"R","aliases":["Old"],"fields":[{"name":"a","type":"int","order":"descending","aliases":["b"]}]}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"descending","aliases":["b"]}],"aliases":["Old"]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":{"items":"int","type":"array"}},{"name":"m","type":{"type":"map","values":"long"}},{"name":"d","type":{"type":"int","logicalType":"date"}}]}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":"int"}},{"name":"m","type":{"type":"map","values":"long"}},{"name":"d","type":{"type":"int","logicalType":"date"}}]}`},
	{`{"type":"record","name":"R","doc":"a <b> & c","fields":[]}`, nil,
		`{"type":"record","name":"R","doc":"a <b> & c","fields":[]}`},
	{`{"type":"record","name":"R","namespace":"n","doc":"","z":1,"a":2,"aliases":["Z","A"],"fields":[{"name":"d","type":{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"},"zz":true,"aa":false}]}`, nil,
		`{"type":"record","name":"R","namespace":"n","doc":"","fields":[{"name":"d","type":{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"},"zz":true,"aa":false}],"z":1,"a":2,"aliases":["Z","A"]}`},
	{`{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"Address"},{"name":"bill","type":"com.acme.Address"}]}`, []string{`{"type":"record","name":"City","namespace":"com.acme","fields":[{"name":"name","type":"string"}]}`, `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"com.acme.City"}]}`},
		`{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"Address"},{"name":"bill","type":"Address"}]}`},
	{`{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"ship","type":"com.acme.Address"}]}`, []string{`{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]}`},
		`{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"ship","type":"com.acme.Address"}]}`},
	{`{"type":"record","name":"R","namespace":"a","fields":[{"name":"in","type":{"type":"record","name":"S","namespace":"","fields":[{"name":"t","type":{"type":"record","name":"T","fields":[]}}]}},{"name":"again","type":"a.R"}]}`, nil,
		`{"type":"record","name":"R","namespace":"a","fields":[{"name":"in","type":{"type":"record","name":"S","namespace":"","fields":[{"name":"t","type":{"type":"record","name":"T","fields":[]}}]}},{"name":"again","type":"R"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"f","type":"float","default":1.5},{"name":"d","type":"double","default":1},{"name":"l","type":"long","default":10000000000},{"name":"m","type":{"type":"map","values":"int"},"default":{"b":1,"a":2}},{"name":"arr","type":{"type":"array","items":"string"},"default":["x"]},{"name":"b","type":"bytes","default":"\u00ff"}]}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"f","type":"float","default":1.5},{"name":"d","type":"double","default":1},{"name":"l","type":"long","default":10000000000},{"name":"m","type":{"type":"map","values":"int"},"default":{"b":1,"a":2}},{"name":"arr","type":{"type":"array","items":"string"},"default":["x"]},{"name":"b","type":"bytes","default":"ÿ"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"s","type":"string","doc":"é \u2028 \t tab","default":"<&>"}]}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"s","type":"string","doc":"é   \t tab","default":"<&>"}]}`},
	{`{"type":"error","name":"Err","fields":[{"name":"m","type":"string"}]}`, nil,
		`{"type":"error","name":"Err","fields":[{"name":"m","type":"string"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"int","x-prop":{"nested":[1,2,{"k":"v"}]},"order":"ignore"}],"x-rec":null}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"int","order":"ignore","x-prop":{"nested":[1,2,{"k":"v"}]}}],"x-rec":null}`},
	{`{"type":"enum","name":"E","namespace":"ns","doc":"d","symbols":["A"],"aliases":["ns.Old","Other"],"x":1}`, nil,
		`{"type":"enum","name":"E","namespace":"ns","doc":"d","symbols":["A"],"x":1,"aliases":["Old","Other"]}`},
	{`{"type":"fixed","name":"md5","size":16,"logicalType":"decimal","precision":10}`, nil,
		`{"type":"fixed","name":"md5","size":16,"logicalType":"decimal","precision":10}`},
	{`{"type":"record","name":"R","fields":[{"name":"u","type":{"type":"string","logicalType":"uuid"}},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis","connect.name":"x"}}]}`, nil,
		`{"type":"record","name":"R","fields":[{"name":"u","type":{"type":"string","logicalType":"uuid"}},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis","connect.name":"x"}}]}`},
	{`{"type":"enum","name":"E","symbols":["A"],"aliases":["a.Old","Old"]}`, nil,
		`{"type":"enum","name":"E","symbols":["A"],"aliases":["a.Old","Old"]}`},
	{`{"type":"record","name":"p.R","aliases":["q.Old","p.Same","Short"],"fields":[]}`, nil,
		`{"type":"record","name":"R","namespace":"p","fields":[],"aliases":["q.Old","Same","Short"]}`},
}

func TestAvroCanonicalIsAvroJavas(t *testing.T) {
	for i, tc := range avroJavaCanonical {
		deps := map[string]string{}
		for j, d := range tc.deps {
			deps[fmt.Sprint("ref", j)] = d
		}
		p, err := Parse(Avro, tc.in, deps)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if got := p.Canonical(); got != tc.java {
			t.Errorf("case %d\n got %s\nwant %s", i, got, tc.java)
		}
	}
}
