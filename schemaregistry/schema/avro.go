package schema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hamba/avro/v2"
)

// avroSchema is an Avro schema parsed by hamba/avro, with the texts
// Confluent's AvroSchema gives it: canonicalString() (Avro Java's
// Schema.toString with the referenced named types written by name) and,
// under normalize, the canonical text of AvroSchemaUtils' normalised form.
type avroSchema struct {
	parsed      avro.Schema
	canonical   string
	normalized  string
	equivalence string
	resolved    string
}

func parseAvro(text string, deps map[string]string) (Parsed, error) {
	cache := &avro.SchemaCache{}
	known := map[string]bool{}
	defs := map[string]avroDef{}
	// References are named types parsed before the schema, as Confluent
	// does; one may use another, so parse until no more succeed.
	pending := make([]string, 0, len(deps))
	for name := range deps {
		pending = append(pending, name)
	}
	sort.Strings(pending)
	for len(pending) > 0 {
		var failed []string
		var lastErr error
		for _, name := range pending {
			s, err := avro.ParseWithCache(avroForHamba(deps[name]), "", cache)
			if err != nil {
				failed, lastErr = append(failed, name), fmt.Errorf("reference %q: %w", name, err)
				continue
			}
			if n, ok := s.(avro.NamedSchema); ok {
				known[n.FullName()] = true
			}
			if tree, err := decodeOrdered(deps[name]); err == nil {
				collectAvroDefs(tree, "", defs)
			}
		}
		if len(failed) == len(pending) {
			return nil, lastErr
		}
		pending = failed
	}
	s, err := avro.ParseWithCache(avroForHamba(text), "", cache)
	if err != nil {
		return nil, fmt.Errorf("invalid Avro schema: %w", err)
	}
	tree, err := decodeOrdered(text)
	if err != nil {
		// hamba reads a bare name (not JSON) as a type name; Avro Java
		// wants JSON.
		tree = strings.TrimSpace(text)
	}
	if err := avroIntegralDefaults(tree); err != nil {
		return nil, fmt.Errorf("invalid Avro schema: %w", err)
	}
	return &avroSchema{
		parsed:     s,
		canonical:  printAvro(tree, known, defs, false),
		normalized: printAvro(tree, known, defs, true),
		// references written out: the same whether a type came from a
		// reference or was given inline
		equivalence: printAvro(tree, nil, defs, true),
		resolved:    printAvro(tree, nil, defs, false),
	}, nil
}

func printAvro(tree any, known map[string]bool, defs map[string]avroDef, normalize bool) string {
	p := &avroPrinter{names: map[string]bool{}, normalize: normalize, defs: defs}
	for n := range known {
		p.names[n] = true
	}
	p.schema(tree, "")
	return p.b.String()
}

func (a *avroSchema) Type() Type         { return Avro }
func (a *avroSchema) Canonical() string  { return a.canonical }
func (a *avroSchema) Normalized() string { return a.normalized }

// Equivalence is the text two schemas Confluent's AvroSchema.equivalent
// takes as the same share: every named type written out where first used
// (references included), properties and aliases sorted.
func (a *avroSchema) Equivalence() string { return a.equivalence }

// Formatted is the text of ?format=: "resolved" writes out the types
// taken from references (Avro Java's Schema.toString()), "default" is the
// canonical text.
func (a *avroSchema) Formatted(format string) (string, bool) {
	switch strings.ToLower(format) {
	case "resolved":
		return a.resolved, true
	case "default":
		return a.canonical, true
	}
	return "", false
}

// Backward reports why a (the reader) cannot read data written with
// older (the writer), in Confluent's Difference format: "%s" stands for
// the reader's role, the second "%s" for the writer's ("new"/"old").
func (a *avroSchema) Backward(older Parsed) []string {
	o, ok := older.(*avroSchema)
	if !ok {
		return []string{"Incompatible because of different schema type"}
	}
	c := avro.NewSchemaCompatibility()
	if c.Compatible(a.parsed, o.parsed) == nil {
		return nil
	}
	var out []string
	avroIncompatibilities(c, a.parsed, o.parsed, "/", map[string]bool{}, &out)
	if len(out) == 0 { // the walk found no location: say what hamba said
		err := c.Compatible(a.parsed, o.parsed)
		out = append(out, avroDifference("TYPE_MISMATCH", "The type (path '/') of a field in the %s schema does not match with the %s schema", err.Error()))
	}
	return out
}

func avroDifference(typ, description, info string) string {
	return "{errorType:'" + typ + "', description:'" + description + "', additionalInfo:'" + info + "'}"
}

func avroDeref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

func avroJoin(path, elem string) string {
	if strings.HasSuffix(path, "/") {
		return path + elem
	}
	return path + "/" + elem
}

// avroPairKey names a pair of named types being compared.
func avroPairKey(reader, writer avro.Schema) string {
	rn, ok1 := avroDeref(reader).(avro.NamedSchema)
	wn, ok2 := avroDeref(writer).(avro.NamedSchema)
	if !ok1 || !ok2 {
		return ""
	}
	return rn.FullName() + "|" + wn.FullName()
}

// avroInProgress tells whether reader (or a branch of it) and writer are
// a pair of records already being compared further up: as Avro Java,
// the walk takes a recursive pair as compatible there.
func avroInProgress(reader, writer avro.Schema, seen map[string]bool) bool {
	if u, ok := avroDeref(reader).(*avro.UnionSchema); ok {
		for _, b := range u.Types() {
			if k := avroPairKey(b, writer); k != "" && seen[k] {
				return true
			}
		}
		return false
	}
	k := avroPairKey(reader, writer)
	return k != "" && seen[k]
}

// avroIncompatibilities finds where reader cannot read writer, walking
// both as Avro Java's SchemaCompatibility does, with hamba's checker
// deciding each step; it reports Avro Java's incompatibility types and
// locations.
func avroIncompatibilities(c *avro.SchemaCompatibility, reader, writer avro.Schema, path string, seen map[string]bool, out *[]string) {
	reader, writer = avroDeref(reader), avroDeref(writer)
	if c.Compatible(reader, writer) == nil || avroInProgress(reader, writer, seen) {
		return
	}
	rt, wt := reader.Type(), writer.Type()
	switch {
	case wt == avro.Union:
		for i, b := range writer.(*avro.UnionSchema).Types() {
			if c.Compatible(reader, b) != nil && !avroInProgress(reader, b, seen) {
				if rt == avro.Union {
					*out = append(*out, avroDifference("MISSING_UNION_BRANCH",
						"The %s schema is missing a type inside a union field at path '"+avroJoin(path, fmt.Sprint(i))+"' in the %s schema",
						"reader union lacking writer type: "+strings.ToUpper(string(avroDeref(b).Type()))))
				} else {
					avroIncompatibilities(c, reader, b, avroJoin(path, fmt.Sprint(i)), seen, out)
				}
			}
		}
		return
	case rt == avro.Union:
		*out = append(*out, avroDifference("MISSING_UNION_BRANCH",
			"The %s schema is missing a type inside a union field at path '"+path+"' in the %s schema",
			"reader union lacking writer type: "+strings.ToUpper(string(wt))))
		return
	case rt != wt:
		*out = append(*out, avroDifference("TYPE_MISMATCH",
			"The type (path '"+path+"') of a field in the %s schema does not match with the %s schema",
			"reader type: "+strings.ToUpper(string(rt))+" not compatible with writer type: "+strings.ToUpper(string(wt))))
		return
	}
	if rn, ok := reader.(avro.NamedSchema); ok {
		wn := writer.(avro.NamedSchema)
		if rn.Name() != wn.Name() && !avroContains(rn.Aliases(), wn.FullName()) {
			*out = append(*out, avroDifference("NAME_MISMATCH",
				"The name of the schema has changed (path '"+avroJoin(path, "name")+"')",
				"expected: "+wn.FullName()))
			return
		}
	}
	switch rt {
	case avro.Record:
		r, w := reader.(*avro.RecordSchema), writer.(*avro.RecordSchema)
		seen[avroPairKey(r, w)] = true
		for i, rf := range r.Fields() {
			wf := avroWriterField(w, rf)
			fpath := avroJoin(path, fmt.Sprintf("fields/%d", i))
			if wf == nil {
				if !rf.HasDefault() {
					*out = append(*out, avroDifference("READER_FIELD_MISSING_DEFAULT_VALUE",
						"The field '"+rf.Name()+"' at path '"+fpath+"' in the %s schema has no default value and is missing in the %s schema",
						rf.Name()))
				}
				continue
			}
			avroIncompatibilities(c, rf.Type(), wf.Type(), fpath+"/type", seen, out)
		}
	case avro.Enum:
		r, w := reader.(*avro.EnumSchema), writer.(*avro.EnumSchema)
		var missing []string
		for _, s := range w.Symbols() {
			if !avroContains(r.Symbols(), s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 && !r.HasDefault() {
			info := "[" + strings.Join(missing, ", ") + "]"
			*out = append(*out, avroDifference("MISSING_ENUM_SYMBOLS",
				"The %s schema is missing enum symbols '"+info+"' at path '"+avroJoin(path, "symbols")+"' in the %s schema", info))
		}
	case avro.Fixed:
		r, w := reader.(*avro.FixedSchema), writer.(*avro.FixedSchema)
		if r.Size() != w.Size() {
			*out = append(*out, avroDifference("FIXED_SIZE_MISMATCH",
				"The size of FIXED type field at path '"+avroJoin(path, "size")+"' in the %s schema does not match with the %s schema",
				fmt.Sprintf("expected: %d, found: %d", w.Size(), r.Size())))
		}
	case avro.Array:
		avroIncompatibilities(c, reader.(*avro.ArraySchema).Items(), writer.(*avro.ArraySchema).Items(), avroJoin(path, "items"), seen, out)
	case avro.Map:
		avroIncompatibilities(c, reader.(*avro.MapSchema).Values(), writer.(*avro.MapSchema).Values(), avroJoin(path, "values"), seen, out)
	}
}

// avroWriterField is the writer's field a reader field reads: same name,
// or one of the reader field's aliases.
func avroWriterField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, f := range w.Fields() {
		if f.Name() == rf.Name() || avroContains(rf.Aliases(), f.Name()) {
			return f
		}
	}
	return nil
}

func avroContains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
