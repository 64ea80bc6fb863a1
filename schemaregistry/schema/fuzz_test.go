package schema

import "testing"

// Fuzz properties for any text a client may send: parsing never panics;
// a schema's canonical and normalised texts parse again to themselves;
// a schema is compatible with itself.
func fuzzSchema(f *testing.F, t Type, seeds []string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(tt *testing.T, text string) {
		p, err := Parse(t, text, nil)
		if err != nil {
			return
		}
		for _, form := range []string{p.Canonical(), p.Normalized()} {
			q, err := Parse(t, form, nil)
			if err != nil {
				tt.Fatalf("%q parses, its form %q does not: %v", text, form, err)
			}
			if q.Canonical() != form {
				tt.Fatalf("form of %q is no fixed point:\n%s\nthen\n%s", text, form, q.Canonical())
			}
		}
		if msgs := p.Backward(p); len(msgs) != 0 {
			tt.Fatalf("%q incompatible with itself: %q", text, msgs)
		}
	})
}

func FuzzProtobuf(f *testing.F) {
	fuzzSchema(f, Protobuf, []string{
		orderProto,
		`syntax = "proto2"; package a.b; message M { optional int32 x = 1 [default = -5]; repeated M m = 2; extensions 10 to max; }`,
		`syntax = "proto3"; enum E { A = 0; } message M { map<string, E> e = 1; oneof o { string s = 2; bytes b = 3; } reserved 5 to 9, "z"; }`,
	})
}

func FuzzJSONSchema(f *testing.F) {
	fuzzSchema(f, JSON, []string{
		`{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}`,
		`{"oneOf":[{"type":"string"},{"$ref":"#/definitions/n"}],"definitions":{"n":{"type":"number","minimum":0}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"enum":[1,"a"]}],"items":false}`,
		`true`,
	})
}
