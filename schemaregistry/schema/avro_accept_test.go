package schema

import "testing"

// avroJavaAccepts holds schemas with what Avro Java 1.12.0 makes of them:
// its canonical text, or "" when it refuses the schema. Avro 1.12 takes a
// union field's default from any branch and "NaN"/"Infinity" for a
// double, which hamba/avro alone would refuse; it refuses a fractional
// default for an int, which hamba/avro alone would take.
var avroJavaAccepts = []struct{ in, java string }{
	{`{"type":"bytes","logicalType":"decimal"}`,
		`{"type":"bytes","logicalType":"decimal"}`},
	{`{"type":"bytes","logicalType":"decimal","precision":4,"scale":6}`,
		`{"type":"bytes","logicalType":"decimal","precision":4,"scale":6}`},
	{`{"type":"long","logicalType":"foo"}`,
		`{"type":"long","logicalType":"foo"}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":["null","string"],"default":"x"}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":["null","string"],"default":"x"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"float","default":1}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"float","default":1}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":"NaN"}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"double","default":"NaN"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":1.5}]}`, ""},
	{`{"type":"fixed","name":"D","size":12,"logicalType":"duration"}`,
		`{"type":"fixed","name":"D","size":12,"logicalType":"duration"}`},
	{`{"type":"long","logicalType":"local-timestamp-micros"}`,
		`{"type":"long","logicalType":"local-timestamp-micros"}`},
	{`{"type":"record","name":"R","fields":[{"name":"r","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]},"default":{"x":1}}]}`,
		`{"type":"record","name":"R","fields":[{"name":"r","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]},"default":{"x":1}}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"string","default":null}]}`, ""},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":["string","null"],"default":null}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":["string","null"],"default":null}]}`},
	{`{"type":"enum","name":"E","symbols":["A","B"],"default":"C"}`, ""},
	{`{"type":"record","name":"R","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]},"default":"A"}]}`,
		`{"type":"record","name":"R","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]},"default":"A"}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":"int"},"default":[]}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":"int"},"default":[]}]}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"long","default":9007199254740993}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"long","default":9007199254740993}]}`},
	{`{"type":"record","name":"_R","namespace":"a_b.c1","fields":[{"name":"_a","type":"int"}]}`,
		`{"type":"record","name":"_R","namespace":"a_b.c1","fields":[{"name":"_a","type":"int"}]}`},
	{`{"type":"record","name":"R","fields":[]," doc":"x"}`,
		`{"type":"record","name":"R","fields":[]," doc":"x"}`},
	{`{"type":"int","logicalType":"date","extra":"x"}`,
		`{"type":"int","logicalType":"date","extra":"x"}`},
	{`{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"long"}]}`, ""},
	{`{"type":"string","logicalType":"uuid"}`,
		`{"type":"string","logicalType":"uuid"}`},
	{`{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}`,
		`{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}`},
	{`{"type":"bytes","logicalType":"big-decimal"}`,
		`{"type":"bytes","logicalType":"big-decimal"}`},
	{`{"type":"record","name":"R","fields":[{"name":"t","type":{"type":"long","logicalType":"timestamp-nanos"}}]}`,
		`{"type":"record","name":"R","fields":[{"name":"t","type":{"type":"long","logicalType":"timestamp-nanos"}}]}`},
}

func TestAvroAcceptsWhatAvroJavaAccepts(t *testing.T) {
	for i, tc := range avroJavaAccepts {
		p, err := Parse(Avro, tc.in, nil)
		switch {
		case tc.java == "" && err == nil:
			t.Errorf("case %d: accepted %s, which Avro Java refuses", i, tc.in)
		case tc.java != "" && err != nil:
			t.Errorf("case %d: %v; Avro Java accepts it", i, err)
		case tc.java != "" && p.Canonical() != tc.java:
			t.Errorf("case %d\n got %s\nwant %s", i, p.Canonical(), tc.java)
		}
	}
}

// A field whose default is a later branch of its union has a default for
// the compatibility rules too (Avro Java 1.12.0: compatible).
func TestAvroUnionDefaultOfLaterBranch(t *testing.T) {
	old := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`, nil)
	added := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":["string","null"],"default":null}]}`, nil)
	if got := added.Backward(old); got != nil {
		t.Fatal(got)
	}
	if want := `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":["string","null"],"default":null}]}`; added.Canonical() != want {
		t.Fatalf("the stored text keeps the branches' order: %s", added.Canonical())
	}
}
