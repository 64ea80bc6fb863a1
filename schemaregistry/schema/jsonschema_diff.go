package schema

import (
	"math/big"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonCompatibleChanges are the JSON Schema differences Confluent's STRICT
// policy (the default) accepts; every other difference is incompatible.
var jsonCompatibleChanges = setOf(
	"ID_CHANGED", "DESCRIPTION_CHANGED", "TITLE_CHANGED", "DEFAULT_CHANGED", "SCHEMA_REMOVED",
	"TYPE_EXTENDED",
	"MAX_LENGTH_INCREASED", "MAX_LENGTH_REMOVED", "MIN_LENGTH_DECREASED", "MIN_LENGTH_REMOVED",
	"PATTERN_REMOVED",
	"MAXIMUM_INCREASED", "MAXIMUM_REMOVED", "MINIMUM_DECREASED", "MINIMUM_REMOVED",
	"EXCLUSIVE_MAXIMUM_INCREASED", "EXCLUSIVE_MAXIMUM_REMOVED", "EXCLUSIVE_MINIMUM_DECREASED",
	"EXCLUSIVE_MINIMUM_REMOVED", "MULTIPLE_OF_REDUCED", "MULTIPLE_OF_REMOVED",
	"REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED", "REQUIRED_ATTRIBUTE_REMOVED",
	"DEPENDENCY_ARRAY_NARROWED", "DEPENDENCY_ARRAY_REMOVED", "DEPENDENCY_SCHEMA_REMOVED",
	"MAX_PROPERTIES_INCREASED", "MAX_PROPERTIES_REMOVED", "MIN_PROPERTIES_DECREASED",
	"MIN_PROPERTIES_REMOVED", "ADDITIONAL_PROPERTIES_ADDED", "ADDITIONAL_PROPERTIES_EXTENDED",
	"UNEVALUATED_PROPERTIES_ADDED", "UNEVALUATED_PROPERTIES_EXTENDED",
	"PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
	"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
	"OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
	"PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
	"PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
	"PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"MAX_ITEMS_INCREASED", "MAX_ITEMS_REMOVED", "MIN_ITEMS_DECREASED", "MIN_ITEMS_REMOVED",
	"MAX_CONTAINS_INCREASED", "MAX_CONTAINS_REMOVED", "MIN_CONTAINS_DECREASED", "MIN_CONTAINS_REMOVED",
	"UNIQUE_ITEMS_REMOVED", "ADDITIONAL_ITEMS_ADDED", "ADDITIONAL_ITEMS_EXTENDED",
	"UNEVALUATED_ITEMS_ADDED", "UNEVALUATED_ITEMS_EXTENDED",
	"ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
	"ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
	"ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
	"ENUM_ARRAY_EXTENDED",
	"COMBINED_TYPE_EXTENDED", "PRODUCT_TYPE_NARROWED", "SUM_TYPE_EXTENDED", "NOT_TYPE_NARROWED",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// jsonDifference is one difference at a JSON pointer "#/properties/a".
type jsonDifference struct {
	kind string
	path string
}

var (
	jsonKeywordAddedOrRemoved = setOf("MAXIMUM_ADDED", "MINIMUM_ADDED", "EXCLUSIVE_MAXIMUM_ADDED",
		"EXCLUSIVE_MINIMUM_ADDED", "MULTIPLE_OF_ADDED", "MAX_LENGTH_ADDED", "MIN_LENGTH_ADDED",
		"PATTERN_ADDED", "REQUIRED_ATTRIBUTE_ADDED", "MAX_PROPERTIES_ADDED", "MIN_PROPERTIES_ADDED",
		"DEPENDENCY_ARRAY_ADDED", "DEPENDENCY_SCHEMA_ADDED", "MAX_ITEMS_ADDED", "MIN_ITEMS_ADDED",
		"MAX_CONTAINS_ADDED", "MIN_CONTAINS_ADDED", "UNIQUE_ITEMS_ADDED", "ADDITIONAL_ITEMS_REMOVED",
		"ADDITIONAL_PROPERTIES_REMOVED", "UNEVALUATED_PROPERTIES_REMOVED", "UNEVALUATED_ITEMS_REMOVED")
	jsonValueIncreased = setOf("MIN_LENGTH_INCREASED", "MINIMUM_INCREASED", "EXCLUSIVE_MINIMUM_INCREASED",
		"MIN_PROPERTIES_INCREASED", "MULTIPLE_OF_EXPANDED", "MIN_ITEMS_INCREASED", "MIN_CONTAINS_INCREASED")
	jsonValueDecreased = setOf("MAX_LENGTH_DECREASED", "MAXIMUM_DECREASED", "MAX_ITEMS_DECREASED",
		"MAX_CONTAINS_DECREASED", "EXCLUSIVE_MAXIMUM_DECREASED", "MAX_PROPERTIES_DECREASED")
	jsonTypeNarrowed = setOf("ADDITIONAL_ITEMS_NARROWED", "ENUM_ARRAY_NARROWED", "SUM_TYPE_NARROWED",
		"ADDITIONAL_PROPERTIES_NARROWED", "UNEVALUATED_PROPERTIES_NARROWED", "UNEVALUATED_ITEMS_NARROWED")
	jsonValueChanged = setOf("PATTERN_CHANGED", "MULTIPLE_OF_CHANGED", "DEPENDENCY_ARRAY_CHANGED")
	jsonTypeChanged  = setOf("TYPE_CHANGED", "TYPE_NARROWED", "COMBINED_TYPE_CHANGED", "COMBINED_TYPE_SUBSCHEMAS_CHANGED", "ENUM_ARRAY_CHANGED")
	jsonTypeExtended = setOf("DEPENDENCY_ARRAY_EXTENDED", "PRODUCT_TYPE_EXTENDED", "SUM_TYPE_EXTENDED", "NOT_TYPE_EXTENDED")
	jsonAddedToOpen  = setOf("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL", "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
)

// String is Confluent's message for the difference (with its two %s verbs,
// see FormatMessages, and its closing quote as Confluent writes it).
func (d jsonDifference) String() string {
	p := strings.ReplaceAll(d.path, "%", "%%")
	var desc string
	switch t := d.kind; {
	case jsonKeywordAddedOrRemoved[t]:
		desc = "The keyword at path '" + p + "' in the %s schema is not present in the %s schema"
	case jsonValueIncreased[t]:
		desc = "The value at path '" + p + "' in the %s schema is more than its value in the %s schema"
	case jsonValueDecreased[t]:
		desc = "The value at path '" + p + "' in the %s schema is less than its value in the %s schema"
	case jsonValueChanged[t]:
		desc = "The value at path '" + p + "' is different between the %s and %s schema"
	case jsonTypeNarrowed[t]:
		desc = "An array or combined type at path '" + p + "' has fewer elements in the %s schema than the %s schema"
	case jsonTypeExtended[t]:
		desc = "An array or combined type at path '" + p + "' has more elements in the %s schema than the %s schema"
	case jsonTypeChanged[t]:
		desc = "A type at path '" + p + "' is different between the %s schema and the %s schema"
	case jsonAddedToOpen[t]:
		desc = "The %s schema has an open content model and has a property or item at path '" + p + "' which is missing in the %s schema"
	case t == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
		desc = "The %s schema has an unopen content model and has a required property at path '" + p + "' which is missing in the %s schema"
	case t == "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", t == "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL":
		desc = "The %s has a closed content model and is missing a property or item present at path '" + p + "' in the %s schema"
	case t == "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", t == "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL":
		desc = "A property or item is missing in the %s schema but present at path '" + p + "' in the %s schema and is not covered by its partially open content model"
	case t == "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", t == "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL":
		desc = "The %s schema has a property or item at path '" + p + "' which is missing in the %s schema and is not covered by its partially open content model"
	}
	return `{errorType:"` + d.kind + `", description:"` + desc + `'}`
}

// jsView is how Confluent's schema loader sees a schema: one kind of
// schema (string, number, object, ...), or a combination of several. A
// schema with keywords of several kinds (say "type" and "enum") is the
// allOf of one view per kind.
type jsView struct {
	kind      string // empty, true, false, string, number, boolean, null, object, array, enum, const, not, combined
	s         *jsonschema.Schema
	integer   bool   // number: "type": "integer"
	criterion string // combined: allOf, anyOf, oneOf
	subs      []jsView
	part      bool // one kind of a schema with several: its annotations belong to the whole
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
	if s.Bool != nil {
		if *s.Bool {
			return jsView{kind: "true", s: s}
		}
		return jsView{kind: "false", s: s}
	}
	var parts []jsView
	if s.Ref != nil {
		parts = append(parts, viewOf(s.Ref))
	}
	if s.Enum != nil {
		parts = append(parts, jsView{kind: "enum", s: s})
	}
	if s.Const != nil {
		parts = append(parts, jsView{kind: "const", s: s})
	}
	if s.Not != nil {
		parts = append(parts, jsView{kind: "not", s: s})
	}
	for _, c := range []struct {
		name string
		list []*jsonschema.Schema
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		if len(c.list) > 0 {
			v := jsView{kind: "combined", s: s, criterion: c.name}
			for _, sub := range c.list {
				v.subs = append(v.subs, viewOf(sub))
			}
			parts = append(parts, v)
		}
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		types := s.Types.ToStrings()
		if len(types) == 1 {
			parts = append(parts, typedView(s, types[0]))
		} else {
			v := jsView{kind: "combined", s: s, criterion: "anyOf"}
			for _, t := range types {
				tv := typedView(s, t)
				tv.part = true
				v.subs = append(v.subs, tv)
			}
			parts = append(parts, v)
		}
	} else {
		// No "type": the keywords say which kinds the schema constrains.
		if hasObjectKeywords(s) {
			parts = append(parts, jsView{kind: "object", s: s})
		}
		if hasArrayKeywords(s) {
			parts = append(parts, jsView{kind: "array", s: s})
		}
		if hasNumberKeywords(s) {
			parts = append(parts, jsView{kind: "number", s: s})
		}
		if hasStringKeywords(s) {
			parts = append(parts, jsView{kind: "string", s: s})
		}
	}
	switch len(parts) {
	case 0:
		return jsView{kind: "empty", s: s}
	case 1:
		return parts[0]
	}
	v := jsView{kind: "combined", s: s, criterion: "allOf"}
	for _, p := range parts {
		p.part = true
		v.subs = append(v.subs, p)
	}
	return v
}

// jsonDiff walks an original (older) and an update (newer) schema.
type jsonDiff struct {
	raw        func(location string) (any, bool) // a schema's JSON by its location
	path       []string
	diffs      []jsonDifference
	inProgress map[[2]*jsonschema.Schema]bool
}

func (c *jsonDiff) add(kind string) {
	c.diffs = append(c.diffs, jsonDifference{kind, "#/" + strings.Join(c.path, "/")})
}

func (c *jsonDiff) addAt(attr, kind string) {
	c.enter(attr)
	c.add(kind)
	c.leave()
}

func (c *jsonDiff) enter(p string) { c.path = append(c.path, p) }
func (c *jsonDiff) leave()         { c.path = c.path[:len(c.path)-1] }

func (c *jsonDiff) sub() *jsonDiff {
	return &jsonDiff{raw: c.raw, path: append([]string(nil), c.path...), inProgress: c.inProgress}
}

func (c *jsonDiff) compatible() bool {
	for _, d := range c.diffs {
		if !jsonCompatibleChanges[d.kind] {
			return false
		}
	}
	return true
}

func jsonCompare(original, update *jsonSchema) []jsonDifference {
	raw := func(loc string) (any, bool) {
		if v, ok := original.rawAt(loc); ok {
			return v, true
		}
		return update.rawAt(loc)
	}
	c := &jsonDiff{raw: raw, inProgress: map[[2]*jsonschema.Schema]bool{}}
	c.compare(original.root, update.root)
	return c.diffs
}

// distinct drops subschemas whose JSON equals an earlier one's.
func (c *jsonDiff) distinct(views []jsView) []jsView {
	var out []jsView
	seen := map[string]bool{}
	for _, v := range views {
		if !v.part {
			if doc, ok := c.raw(v.s.Location); ok {
				key := canonicalValue(doc)
				if seen[key] {
					continue
				}
				seen[key] = true
			}
		}
		out = append(out, v)
	}
	return out
}

func (c *jsonDiff) compare(o, u *jsonschema.Schema) {
	switch {
	case o == nil && u == nil:
		return
	case o == nil:
		c.add("SCHEMA_ADDED")
		return
	case u == nil:
		c.add("SCHEMA_REMOVED")
		return
	}
	o, u = deref(o), deref(u)
	key := [2]*jsonschema.Schema{o, u}
	if c.inProgress[key] {
		return // a recursive schema: the pair is being compared further up
	}
	c.inProgress[key] = true
	defer delete(c.inProgress, key)
	c.compareViews(viewOf(o), viewOf(u))
}

func isEmptyView(v jsView) bool { return v.kind == "empty" || v.kind == "true" }

func (c *jsonDiff) compareViews(o, u jsView) {
	if o.kind != "combined" && u.kind == "combined" {
		if len(u.subs) == 1 {
			if sub := c.sub(); sub.compareViewsTo(o, u.subs[0]) {
				c.diffs = append(c.diffs, sub.diffs...)
				return
			}
		} else if u.criterion == "anyOf" || u.criterion == "oneOf" {
			for _, us := range u.subs {
				if sub := c.sub(); sub.compareViewsTo(o, us) {
					c.diffs = append(c.diffs, sub.diffs...)
					c.add("SUM_TYPE_EXTENDED")
					return
				}
			}
		}
	} else if o.kind == "combined" && u.kind != "combined" {
		if len(o.subs) == 1 {
			if sub := c.sub(); sub.compareViewsTo(o.subs[0], u) {
				c.diffs = append(c.diffs, sub.diffs...)
				return
			}
		} else if o.criterion == "allOf" {
			for _, os := range o.subs {
				if sub := c.sub(); sub.compareViewsTo(os, u) {
					c.diffs = append(c.diffs, sub.diffs...)
					c.add("PRODUCT_TYPE_NARROWED")
					return
				}
			}
		}
	}
	if o.kind != u.kind {
		// Anything reads what false allowed (nothing); the empty schema
		// reads anything.
		if o.kind == "false" || isEmptyView(u) {
			return
		}
		c.add("TYPE_CHANGED")
		return
	}
	if !o.part && !u.part {
		if o.s.ID != u.s.ID {
			c.add("ID_CHANGED")
		}
		if o.s.Title != u.s.Title {
			c.add("TITLE_CHANGED")
		}
		if o.s.Description != u.s.Description {
			c.add("DESCRIPTION_CHANGED")
		}
		if !jsonValueEqual(o.s.Default, u.s.Default) {
			c.add("DEFAULT_CHANGED")
		}
	}
	switch o.kind {
	case "string":
		c.compareString(o.s, u.s)
	case "number":
		c.compareNumber(o, u)
	case "const":
		if !jsonValueEqual(o.s.Const, u.s.Const) {
			c.addAt("const", "ENUM_ARRAY_CHANGED")
		}
	case "enum":
		c.compareEnum(o.s, u.s)
	case "combined":
		c.compareCombined(o, u)
	case "not":
		c.enter("not")
		sub := c.sub()
		sub.compare(u.s.Not, o.s.Not) // what the newer excludes must be excluded by the older
		if sub.compatible() {
			c.add("NOT_TYPE_NARROWED")
		} else {
			c.add("NOT_TYPE_EXTENDED")
		}
		c.leave()
	case "object":
		c.compareObject(o.s, u.s)
	case "array":
		c.compareArray(o.s, u.s)
	}
}

// compareViewsTo compares in c and reports whether c found only
// compatible differences.
func (c *jsonDiff) compareViewsTo(o, u jsView) bool {
	c.compareViews(o, u)
	return c.compatible()
}

func jsonValueEqual(a, b *any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return canonicalValue(*a) == canonicalValue(*b)
}

func canonicalValue(v any) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

// writeValue writes a decoded JSON value with sorted members and numbers
// compared by value, so equal values print equally.
func writeValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteKey(k) + ":")
			writeValue(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case string:
		b.WriteString(quoteKey(v))
	default:
		if r, ok := jsonRat(v); ok {
			b.WriteString(r.RatString())
			return
		}
		b.WriteString(strings.TrimSpace(canonicalScalar(v)))
	}
}

func quoteKey(s string) string {
	return "\"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + "\""
}

func canonicalScalar(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	}
	return "?"
}

func jsonRat(v any) (*big.Rat, bool) {
	type stringer interface{ String() string }
	if n, ok := v.(stringer); ok {
		if r, ok := new(big.Rat).SetString(n.String()); ok {
			return r, true
		}
	}
	switch n := v.(type) {
	case float64:
		return new(big.Rat).SetFloat64(n), true
	case int:
		return big.NewRat(int64(n), 1), true
	case int64:
		return big.NewRat(n, 1), true
	}
	return nil, false
}
