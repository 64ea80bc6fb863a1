package schema

import (
	"math/big"
	"sort"
	"strconv"
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
	p := d.path
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

// jsonDiff walks an original (older) and an update (newer) schema.
type jsonDiff struct {
	raw   func(location string) (any, bool) // a schema's JSON by its location
	path  []string
	diffs []jsonDifference
	walk  *jsonWalk
	// dropped: an incompatible difference beyond maxJSONDifferences
	dropped bool
}

func (c *jsonDiff) add(kind string) {
	c.push(jsonDifference{kind, "#/" + strings.Join(c.path, "/")})
}

// maxJSONDifferences bounds the differences listed: one definition reached
// along many paths differs at every one of them.
const maxJSONDifferences = 1000

// push records differences up to the bound; an incompatible one beyond it
// still makes the comparison incompatible.
func (c *jsonDiff) push(ds ...jsonDifference) {
	for _, d := range ds {
		if len(c.diffs) >= maxJSONDifferences {
			if !jsonCompatibleChanges[d.kind] {
				c.dropped = true
			}
			continue
		}
		c.diffs = append(c.diffs, d)
	}
}

// merge takes a sub-comparison's differences.
func (c *jsonDiff) merge(sub *jsonDiff) {
	c.push(sub.diffs...)
	c.dropped = c.dropped || sub.dropped
}

func (c *jsonDiff) addAt(attr, kind string) {
	c.enter(attr)
	c.add(kind)
	c.leave()
}

func (c *jsonDiff) enter(p string) { c.path = append(c.path, p) }
func (c *jsonDiff) leave()         { c.path = c.path[:len(c.path)-1] }

func (c *jsonDiff) sub() *jsonDiff {
	return &jsonDiff{raw: c.raw, path: append([]string(nil), c.path...), walk: c.walk}
}

func (c *jsonDiff) compatible() bool {
	if c.dropped {
		return false
	}
	for _, d := range c.diffs {
		if !jsonCompatibleChanges[d.kind] {
			return false
		}
	}
	return true
}

func jsonCompare(original, update *jsonSchema) []jsonDifference {
	diffs, _ := jsonCompareAll(original, update)
	return diffs
}

// jsonCompareAll also says whether incompatible differences beyond
// maxJSONDifferences were left out.
func jsonCompareAll(original, update *jsonSchema) ([]jsonDifference, bool) {
	raw := func(loc string) (any, bool) {
		if v, ok := original.rawAt(loc); ok {
			return v, true
		}
		return update.rawAt(loc)
	}
	c := &jsonDiff{raw: raw, walk: &jsonWalk{
		inProgress: map[[2]*jsonschema.Schema]bool{},
		memo:       map[[2]*jsonschema.Schema]jsonMemo{},
	}}
	c.compare(original.root, update.root)
	return c.diffs, c.dropped
}

// keyword is a string keyword of a schema as written, also one the
// compiler does not know; "" when absent.
func (c *jsonDiff) keyword(s *jsonschema.Schema, name string) string {
	if doc, ok := c.raw(s.Location); ok {
		if obj, ok := doc.(map[string]any); ok {
			if v, ok := obj[name].(string); ok {
				return v
			}
		}
	}
	return ""
}

// distinct drops subschemas whose JSON equals an earlier one's.
func (c *jsonDiff) distinct(subs []jsSub) []jsSub {
	var out []jsSub
	seen := map[string]bool{}
	for _, v := range subs {
		if v.part == nil {
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

// jsonWalk is what one comparison shares: the pairs being compared (a
// pair met again inside itself counts as compatible), and the differences
// of each pair already compared, relative to the pair, so that a schema
// referenced from many places is compared once.
type jsonWalk struct {
	inProgress map[[2]*jsonschema.Schema]bool
	memo       map[[2]*jsonschema.Schema]jsonMemo
	cut        int // recursions cut short: results that depend on one are not kept
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
	key := [2]*jsonschema.Schema{deref(o), deref(u)}
	m, ok := c.walk.memo[key]
	if !ok {
		sub := &jsonDiff{raw: c.raw, walk: c.walk}
		cut := c.walk.cut
		sub.compareViews(viewOf(o), viewOf(u))
		m = jsonMemo{sub.diffs, sub.dropped}
		if c.walk.cut == cut {
			c.walk.memo[key] = m
		}
	}
	c.dropped = c.dropped || m.dropped
	prefix := "#/" + strings.Join(c.path, "/")
	for _, d := range m.diffs {
		rest := strings.TrimPrefix(d.path, "#/")
		switch {
		case len(c.path) == 0:
		case rest == "":
			d.path = prefix
		default:
			d.path = prefix + "/" + rest
		}
		c.push(d)
	}
}

type jsonMemo struct {
	diffs   []jsonDifference
	dropped bool
}

func (c *jsonDiff) compareViews(o, u jsView) {
	if !o.part && !u.part {
		key := [2]*jsonschema.Schema{o.s, u.s}
		if c.walk.inProgress[key] {
			c.walk.cut++
			return // a recursive schema: the pair is being compared further up
		}
		c.walk.inProgress[key] = true
		defer delete(c.walk.inProgress, key)
	}
	if o.kind != "combined" && u.kind == "combined" {
		if len(u.subs) == 1 {
			if sub := c.sub(); sub.compareViewsTo(o, u.subs[0].view()) {
				c.merge(sub)
				return
			}
		} else if u.criterion == "anyOf" || u.criterion == "oneOf" {
			for _, us := range u.subs {
				if sub := c.sub(); sub.compareViewsTo(o, us.view()) {
					c.merge(sub)
					c.add("SUM_TYPE_EXTENDED")
					return
				}
			}
		}
	} else if o.kind == "combined" && u.kind != "combined" {
		if len(o.subs) == 1 {
			if sub := c.sub(); sub.compareViewsTo(o.subs[0].view(), u) {
				c.merge(sub)
				return
			}
		} else if o.criterion == "allOf" {
			for _, os := range o.subs {
				if sub := c.sub(); sub.compareViewsTo(os.view(), u) {
					c.merge(sub)
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
		// Kafka Connect's JSON converter marks its bytes (decimals) so; a
		// change of their JSON type is no change to Connect.
		if c.keyword(o.s, "connect.type") == "bytes" && c.keyword(u.s, "connect.type") == "bytes" {
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

// quoteKey quotes a string of a comparison key (injective, so equal
// keys mean equal strings).
func quoteKey(s string) string { return strconv.Quote(s) }

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
