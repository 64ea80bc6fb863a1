package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Avro Java 1.12 (Confluent's) accepts a union field's default that
// matches any branch, and "NaN", "Infinity" or "-Infinity" for a float or
// double; hamba/avro wants the first branch and a number. avroForHamba
// rewrites such a schema for hamba alone: the matching branch moved
// first, the special number made 0 (only whether a default exists
// matters to the compatibility rules). The stored text is printed from
// the schema as it was sent.
func avroForHamba(text string) string {
	tree, err := decodeOrdered(text)
	if err != nil {
		return text
	}
	if !avroLenientDefaults(tree) {
		return text
	}
	var b bytes.Buffer
	avroWriteJSON(&b, tree)
	return b.String()
}

// avroEachField calls f for every record field in tree, nested types
// first, and stops at the first error f returns.
func avroEachField(tree any, f func(field *orderedObject, typ any) error) error {
	switch v := tree.(type) {
	case []any:
		for _, e := range v {
			if err := avroEachField(e, f); err != nil {
				return err
			}
		}
	case *orderedObject:
		for _, k := range []string{"type", "items", "values"} {
			if e, ok := v.get(k); ok {
				if err := avroEachField(e, f); err != nil {
					return err
				}
			}
		}
		fields, _ := v.get("fields")
		fs, _ := fields.([]any)
		for _, e := range fs {
			fo, ok := e.(*orderedObject)
			if !ok {
				continue
			}
			t, _ := fo.get("type")
			if err := avroEachField(t, f); err != nil {
				return err
			}
			if err := f(fo, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// avroLenientDefaults rewrites tree in place; it tells whether it
// changed anything.
func avroLenientDefaults(tree any) bool {
	changed := false
	avroEachField(tree, func(fo *orderedObject, t any) error {
		def, ok := fo.get("default")
		if !ok {
			return nil
		}
		if u, ok := avroUnionOf(t); ok && len(u) > 1 && !avroDefaultFits(u[0], def) {
			if i := slices.IndexFunc(u, func(b any) bool { return avroDefaultFits(b, def) }); i > 0 {
				moved := append([]any{u[i]}, slices.Delete(slices.Clone(u), i, i+1)...)
				avroSetUnion(fo, moved)
				changed = true
			}
		}
		if s, ok := def.(string); ok && (s == "NaN" || s == "Infinity" || s == "-Infinity") {
			if n := avroTypeName(t); n == "float" || n == "double" {
				fo.values["default"] = json.Number("0")
				changed = true
			}
		}
		return nil
	})
	return changed
}

// avroUnionOf is a field type's branches when it is a union.
func avroUnionOf(t any) ([]any, bool) {
	if o, ok := t.(*orderedObject); ok {
		t, _ = o.get("type")
	}
	u, ok := t.([]any)
	return u, ok
}

func avroSetUnion(field *orderedObject, u []any) {
	if o, ok := field.values["type"].(*orderedObject); ok {
		o.values["type"] = u
		return
	}
	field.values["type"] = u
}

// avroTypeName is the type a schema names: a primitive's or complex
// type's name, or a named type's reference.
func avroTypeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case *orderedObject:
		inner, _ := v.get("type")
		if s, ok := inner.(string); ok {
			return s
		}
	}
	return ""
}

// avroDefaultFits tells, by its JSON kind, whether def can be a default
// of the branch b.
func avroDefaultFits(b, def any) bool {
	switch avroTypeName(b) {
	case "null":
		return def == nil
	case "boolean":
		_, ok := def.(bool)
		return ok
	case "int", "long", "float", "double":
		_, ok := def.(json.Number)
		if s, isStr := def.(string); isStr {
			n := avroTypeName(b)
			return (n == "float" || n == "double") && (s == "NaN" || s == "Infinity" || s == "-Infinity")
		}
		return ok
	case "string", "bytes", "enum", "fixed":
		_, ok := def.(string)
		return ok
	case "array":
		_, ok := def.([]any)
		return ok
	case "record", "error", "map":
		_, ok := def.(*orderedObject)
		return ok
	case "":
		return false
	}
	// a named type defined elsewhere: a record (object), an enum or a
	// fixed (string)
	switch def.(type) {
	case *orderedObject, string:
		return true
	}
	return false
}

// avroIntegralDefaults refuses what Avro Java refuses and hamba/avro lets
// through: an int or long field whose default is not an integral number.
func avroIntegralDefaults(tree any) error {
	return avroEachField(tree, func(fo *orderedObject, t any) error {
		def, _ := fo.get("default")
		n, isNum := def.(json.Number)
		if typ := avroTypeName(t); isNum && (typ == "int" || typ == "long") && strings.ContainsAny(n.String(), ".eE") {
			name, _ := fo.str("name")
			return fmt.Errorf("Invalid default for field %s: %s not a %q", name, n, typ)
		}
		return nil
	})
}
