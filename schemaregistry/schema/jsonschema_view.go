package schema

import "github.com/santhosh-tekuri/jsonschema/v6"

// jsView is how Confluent's schema loader sees a schema: one kind of
// schema (string, number, object, ...), or a combination of several. A
// schema with keywords of several kinds (say "type" and "enum") is the
// allOf of one view per kind.
type jsView struct {
	kind      string // empty, true, false, string, number, boolean, null, object, array, enum, const, not, combined
	s         *jsonschema.Schema
	integer   bool   // number: "type": "integer"
	criterion string // combined: allOf, anyOf, oneOf
	subs      []jsSub
	part      bool // one kind of a schema with several: its annotations belong to the whole
}

// jsSub is a subschema of a combination: a schema, seen only when compared
// (so a schema that contains itself is no endless loop), or one kind of a
// schema with several.
type jsSub struct {
	s    *jsonschema.Schema
	part *jsView
}

func (x jsSub) view() jsView {
	if x.part != nil {
		return *x.part
	}
	return viewOf(x.s)
}

// deref follows a $ref that has no other keywords (before draft 2019-09
// the other keywords of a $ref are ignored anyway).
func deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && s.Ref != nil && i < 64; i++ {
		if s.DraftVersion >= 2019 && hasOwnKeywords(s) {
			return s
		}
		s = s.Ref
	}
	return s
}

func hasOwnKeywords(s *jsonschema.Schema) bool {
	return s.Types != nil || s.Enum != nil || s.Const != nil || s.Not != nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 ||
		hasObjectKeywords(s) || hasArrayKeywords(s) || hasNumberKeywords(s) || hasStringKeywords(s)
}

func hasObjectKeywords(s *jsonschema.Schema) bool {
	return s.Properties != nil || s.Required != nil || s.AdditionalProperties != nil || s.MinProperties != nil ||
		s.MaxProperties != nil || s.Dependencies != nil || s.DependentRequired != nil || s.DependentSchemas != nil ||
		s.PatternProperties != nil || s.PropertyNames != nil || s.UnevaluatedProperties != nil
}

func hasArrayKeywords(s *jsonschema.Schema) bool {
	return s.Items != nil || s.Items2020 != nil || s.PrefixItems != nil || s.AdditionalItems != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.Contains != nil || s.UnevaluatedItems != nil
}

func hasNumberKeywords(s *jsonschema.Schema) bool {
	return s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil
}

func hasStringKeywords(s *jsonschema.Schema) bool {
	return s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil
}

func typedView(s *jsonschema.Schema, t string) jsView {
	switch t {
	case "integer":
		return jsView{kind: "number", s: s, integer: true}
	}
	return jsView{kind: t, s: s}
}

func viewOf(s *jsonschema.Schema) jsView {
	s = deref(s)
	if s.Ref != nil && !hasOwnKeywords(s) {
		return jsView{kind: "empty", s: s} // $refs that only lead to each other
	}
	if s.Bool != nil {
		if *s.Bool {
			return jsView{kind: "true", s: s}
		}
		return jsView{kind: "false", s: s}
	}
	var parts []jsSub
	add := func(v jsView) { parts = append(parts, jsSub{part: &v}) }
	if s.Ref != nil {
		parts = append(parts, jsSub{s: s.Ref})
	}
	if s.Enum != nil {
		add(jsView{kind: "enum", s: s})
	}
	if s.Const != nil {
		add(jsView{kind: "const", s: s})
	}
	if s.Not != nil {
		add(jsView{kind: "not", s: s})
	}
	for _, c := range []struct {
		name string
		list []*jsonschema.Schema
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		if len(c.list) > 0 {
			v := jsView{kind: "combined", s: s, criterion: c.name}
			for _, sub := range c.list {
				v.subs = append(v.subs, jsSub{s: sub})
			}
			add(v)
		}
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		types := s.Types.ToStrings()
		if len(types) == 1 {
			add(typedView(s, types[0]))
		} else {
			v := jsView{kind: "combined", s: s, criterion: "anyOf"}
			for _, t := range types {
				tv := typedView(s, t)
				tv.part = true
				v.subs = append(v.subs, jsSub{part: &tv})
			}
			add(v)
		}
	} else {
		// No "type": the keywords say which kinds the schema constrains.
		if hasObjectKeywords(s) {
			add(jsView{kind: "object", s: s})
		}
		if hasArrayKeywords(s) {
			add(jsView{kind: "array", s: s})
		}
		if hasNumberKeywords(s) {
			add(jsView{kind: "number", s: s})
		}
		if hasStringKeywords(s) {
			add(jsView{kind: "string", s: s})
		}
	}
	switch len(parts) {
	case 0:
		return jsView{kind: "empty", s: s}
	case 1:
		if parts[0].part != nil {
			return *parts[0].part
		}
	}
	v := jsView{kind: "combined", s: s, criterion: "allOf"}
	for _, p := range parts {
		if p.part != nil {
			pv := *p.part
			pv.part = true
			p.part = &pv
		}
		v.subs = append(v.subs, p)
	}
	return v
}

func isEmptyView(v jsView) bool { return v.kind == "empty" || v.kind == "true" }
