package schema

import (
	"sort"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/ast"
)

// The declarations inside a .proto file as Confluent prints them:
// messages, enums, fields, reserved and extension ranges, extends.

func (p *protoPrinter) enum(e *ast.EnumNode) string {
	var b strings.Builder
	b.WriteString("enum " + e.Name.Val + " {")
	var reserved []*ast.ReservedNode
	var options []*ast.OptionNode
	var values []*ast.EnumValueNode
	for _, d := range e.Decls {
		switch d := d.(type) {
		case *ast.ReservedNode:
			reserved = append(reserved, d)
		case *ast.OptionNode:
			options = append(options, d)
		case *ast.EnumValueNode:
			values = append(values, d)
		}
	}
	p.writeReserved(&b, reserved)
	if len(reserved) == 0 && (len(options) > 0 || len(values) > 0) {
		b.WriteByte('\n')
	}
	for _, o := range p.options(options) {
		appendIndented(&b, p.optionStatement(o))
	}
	type constant struct {
		name string
		num  int64
		node *ast.EnumValueNode
	}
	consts := make([]constant, 0, len(values))
	for _, v := range values {
		num, _ := v.Number.Value().(int64)
		if u, ok := v.Number.Value().(uint64); ok {
			num = int64(u)
		}
		consts = append(consts, constant{v.Name.Val, num, v})
	}
	if p.norm {
		sort.SliceStable(consts, func(i, j int) bool {
			if consts[i].num != consts[j].num {
				return consts[i].num < consts[j].num
			}
			return consts[i].name < consts[j].name
		})
	}
	for _, c := range consts {
		s := c.name + " = " + strconv.FormatInt(c.num, 10)
		if opts := p.options(compactOptions(c.node.Options)); len(opts) > 0 {
			s += " " + p.appendOptionList(opts)
		}
		appendIndented(&b, s+";\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func compactOptions(c *ast.CompactOptionsNode) []*ast.OptionNode {
	if c == nil {
		return nil
	}
	return c.Options
}

// reservedValue is one item of a reserved or extensions statement.
type reservedValue struct {
	name       string // a reserved name; "" for a number or range
	start, end int64
	max        bool // "to max"
	isRange    bool
}

func (p *protoPrinter) reservedValues(r *ast.ReservedNode) []reservedValue {
	var out []reservedValue
	for _, rg := range r.Ranges {
		out = append(out, rangeValue(rg))
	}
	for _, n := range r.Names {
		out = append(out, reservedValue{name: n.AsString()})
	}
	for _, n := range r.Identifiers {
		out = append(out, reservedValue{name: n.Val})
	}
	return out
}

func rangeValue(rg *ast.RangeNode) reservedValue {
	v := reservedValue{start: intValue(rg.StartVal)}
	switch {
	case rg.Max != nil:
		v.isRange, v.max, v.end = true, true, 1<<29-1
	case rg.EndVal != nil:
		v.isRange, v.end = true, intValue(rg.EndVal)
	default:
		v.end = v.start
	}
	return v
}

func intValue(n ast.IntValueNode) int64 {
	switch v := n.Value().(type) {
	case int64:
		return v
	case uint64:
		return int64(v)
	}
	return 0
}

// writeReserved writes the reserved statements of a message or enum: as
// written, or one value a statement, sorted, when normalising.
func (p *protoPrinter) writeReserved(b *strings.Builder, rs []*ast.ReservedNode) {
	if len(rs) == 0 {
		return
	}
	b.WriteByte('\n')
	if p.norm {
		var values []reservedValue
		for _, r := range rs {
			values = append(values, p.reservedValues(r)...)
		}
		sortRanges(values)
		for _, v := range values {
			appendIndented(b, "reserved "+p.rangeText(v)+";\n")
		}
		return
	}
	for _, r := range rs {
		vals := p.reservedValues(r)
		texts := make([]string, len(vals))
		for i, v := range vals {
			texts[i] = p.rangeText(v)
		}
		appendIndented(b, "reserved "+strings.Join(texts, ", ")+";\n")
	}
}

func sortRanges(values []reservedValue) {
	key := func(v reservedValue) int64 {
		if v.name != "" {
			return 1<<31 - 1
		}
		return v.start
	}
	sort.SliceStable(values, func(i, j int) bool {
		ki, kj := key(values[i]), key(values[j])
		if ki != kj {
			return ki < kj
		}
		return values[i].name < values[j].name
	})
}

func (p *protoPrinter) rangeText(v reservedValue) string {
	if v.name != "" {
		return "\"" + v.name + "\""
	}
	if !v.isRange || (p.norm && v.start == v.end) {
		return strconv.FormatInt(v.start, 10)
	}
	end := strconv.FormatInt(v.end, 10)
	if v.max || v.end >= 1<<29-1 {
		end = "max"
	}
	return strconv.FormatInt(v.start, 10) + " to " + end
}

// protoField is a field, map field or group of a message, oneof or extend.
type protoField struct {
	label   string
	typ     string
	name    string
	tag     uint64
	options []*ast.OptionNode
	mapKey  string // map fields: key type and value type as written
	mapVal  string
	node    ast.Node
}

func fieldOf(d ast.Node) (protoField, bool) {
	switch d := d.(type) {
	case *ast.FieldNode:
		f := protoField{typ: string(d.FldType.AsIdentifier()), name: d.Name.Val, tag: d.Tag.Val,
			options: compactOptions(d.Options), node: d}
		if d.Label.KeywordNode != nil {
			f.label = d.Label.Val
		}
		return f, true
	case *ast.MapFieldNode:
		k, v := d.MapType.KeyType.Val, string(d.MapType.ValueType.AsIdentifier())
		return protoField{typ: "map<" + k + ", " + v + ">", name: d.Name.Val, tag: d.Tag.Val,
			options: compactOptions(d.Options), mapKey: k, mapVal: v, node: d}, true
	}
	return protoField{}, false
}

func (p *protoPrinter) message(m *ast.MessageNode) string {
	p.scope = append(p.scope, m.Name.Val)
	defer func() { p.scope = p.scope[:len(p.scope)-1] }()
	var b strings.Builder
	b.WriteString("message " + m.Name.Val + " {")
	var reserved []*ast.ReservedNode
	var options []*ast.OptionNode
	var fields []protoField
	var oneofs []*ast.OneofNode
	var groups []*ast.GroupNode
	var extRanges []*ast.ExtensionRangeNode
	var extends []*ast.ExtendNode
	var msgs []*ast.MessageNode
	var enums []*ast.EnumNode
	for _, d := range m.Decls {
		switch d := d.(type) {
		case *ast.ReservedNode:
			reserved = append(reserved, d)
		case *ast.OptionNode:
			options = append(options, d)
		case *ast.FieldNode, *ast.MapFieldNode:
			f, _ := fieldOf(d)
			fields = append(fields, f)
		case *ast.OneofNode:
			oneofs = append(oneofs, d)
		case *ast.GroupNode:
			groups = append(groups, d)
		case *ast.ExtensionRangeNode:
			extRanges = append(extRanges, d)
		case *ast.ExtendNode:
			extends = append(extends, d)
		case *ast.MessageNode:
			msgs = append(msgs, d)
		case *ast.EnumNode:
			enums = append(enums, d)
		}
	}
	p.writeReserved(&b, reserved)
	if opts := p.options(options); len(opts) > 0 {
		b.WriteByte('\n')
		for _, o := range opts {
			appendIndented(&b, p.optionStatement(o))
		}
	}
	if len(fields) > 0 {
		b.WriteByte('\n')
		if p.norm {
			sort.SliceStable(fields, func(i, j int) bool { return fields[i].tag < fields[j].tag })
		}
		for _, f := range fields {
			appendIndented(&b, p.field(f))
		}
	}
	if len(oneofs) > 0 {
		type oneof struct {
			node   *ast.OneofNode
			fields []protoField
		}
		var list []oneof
		for _, o := range oneofs {
			var fs []protoField
			for _, d := range o.Decls {
				if f, ok := fieldOf(d); ok {
					fs = append(fs, f)
				}
			}
			if p.norm {
				if len(fs) == 0 {
					continue
				}
				sort.SliceStable(fs, func(i, j int) bool { return fs[i].tag < fs[j].tag })
			}
			list = append(list, oneof{o, fs})
		}
		if p.norm {
			sort.SliceStable(list, func(i, j int) bool { return list[i].fields[0].tag < list[j].fields[0].tag })
		}
		b.WriteByte('\n')
		for _, o := range list {
			var ob strings.Builder
			ob.WriteString("oneof " + o.node.Name.Val + " {")
			var oopts []*ast.OptionNode
			for _, d := range o.node.Decls {
				if op, ok := d.(*ast.OptionNode); ok {
					oopts = append(oopts, op)
				}
			}
			if opts := p.options(oopts); len(opts) > 0 {
				ob.WriteByte('\n')
				for _, op := range opts {
					appendIndented(&ob, p.optionStatement(op))
				}
			}
			if len(o.fields) > 0 {
				ob.WriteByte('\n')
				for _, f := range o.fields {
					appendIndented(&ob, p.field(f))
				}
			}
			ob.WriteString("}\n")
			appendIndented(&b, ob.String())
		}
	}
	if len(groups) > 0 {
		b.WriteByte('\n')
		if p.norm {
			sort.SliceStable(groups, func(i, j int) bool { return groups[i].Tag.Val < groups[j].Tag.Val })
		}
		for _, g := range groups {
			appendIndented(&b, p.group(g))
		}
	}
	if len(extRanges) > 0 && !p.noExt {
		b.WriteByte('\n')
		for _, s := range p.extensionRanges(extRanges) {
			appendIndented(&b, s)
		}
	}
	if len(extends) > 0 && !p.noExt {
		b.WriteByte('\n')
		for _, e := range p.extends(extends) {
			appendIndented(&b, e)
		}
	}
	if len(msgs) > 0 || len(enums) > 0 {
		b.WriteByte('\n')
		for _, n := range msgs {
			appendIndented(&b, p.message(n))
		}
		for _, e := range enums {
			p.scope = append(p.scope, e.Name.Val)
			appendIndented(&b, p.enum(e))
			p.scope = p.scope[:len(p.scope)-1]
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func (p *protoPrinter) group(g *ast.GroupNode) string {
	var b strings.Builder
	if g.Label.KeywordNode != nil {
		b.WriteString(g.Label.Val + " ")
	}
	b.WriteString("group " + g.Name.Val + " = " + strconv.FormatUint(g.Tag.Val, 10) + " {")
	var fields []protoField
	for _, d := range g.Decls {
		if f, ok := fieldOf(d); ok {
			fields = append(fields, f)
		}
	}
	if len(fields) > 0 {
		b.WriteByte('\n')
		if p.norm {
			sort.SliceStable(fields, func(i, j int) bool { return fields[i].tag < fields[j].tag })
		}
		p.scope = append(p.scope, g.Name.Val)
		for _, f := range fields {
			appendIndented(&b, p.field(f))
		}
		p.scope = p.scope[:len(p.scope)-1]
	}
	b.WriteString("}\n")
	return b.String()
}

func (p *protoPrinter) extensionRanges(rs []*ast.ExtensionRangeNode) []string {
	var out []string
	if !p.norm {
		for _, r := range rs {
			texts := make([]string, len(r.Ranges))
			for i, rg := range r.Ranges {
				texts[i] = p.rangeText(rangeValue(rg))
			}
			s := "extensions " + strings.Join(texts, ", ")
			if opts := p.options(compactOptions(r.Options)); len(opts) > 0 {
				s += " " + p.appendOptionList(opts)
			}
			out = append(out, s+";\n")
		}
		return out
	}
	type one struct {
		v    reservedValue
		opts []*ast.OptionNode
	}
	var all []one
	for _, r := range rs {
		for _, rg := range r.Ranges {
			all = append(all, one{rangeValue(rg), compactOptions(r.Options)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v.start < all[j].v.start })
	for _, e := range all {
		s := "extensions " + p.rangeText(e.v)
		if opts := p.options(e.opts); len(opts) > 0 {
			s += " " + p.appendOptionList(opts)
		}
		out = append(out, s+";\n")
	}
	return out
}

// extends prints extend blocks; normalising groups their fields by the
// extendee's full name.
func (p *protoPrinter) extends(es []*ast.ExtendNode) []string {
	type block struct {
		name   string
		fields []protoField
	}
	var blocks []*block
	byName := map[string]*block{}
	for _, e := range es {
		name := string(e.Extendee.AsIdentifier())
		if p.norm {
			name = p.resolveType(name)
		}
		bl := byName[name]
		if bl == nil || !p.norm {
			bl = &block{name: name}
			blocks = append(blocks, bl)
			byName[name] = bl
		}
		for _, d := range e.Decls {
			if f, ok := fieldOf(d); ok {
				bl.fields = append(bl.fields, f)
			}
		}
	}
	var out []string
	for _, bl := range blocks {
		var b strings.Builder
		b.WriteString("extend " + bl.name + " {")
		if len(bl.fields) > 0 {
			b.WriteByte('\n')
			if p.norm {
				sort.SliceStable(bl.fields, func(i, j int) bool { return bl.fields[i].tag < bl.fields[j].tag })
			}
			for _, f := range bl.fields {
				appendIndented(&b, p.field(f))
			}
		}
		b.WriteString("}\n")
		out = append(out, b.String())
	}
	return out
}

var protoScalars = map[string]bool{
	"double": true, "float": true, "int32": true, "int64": true, "uint32": true, "uint64": true,
	"sint32": true, "sint64": true, "fixed32": true, "fixed64": true, "sfixed32": true,
	"sfixed64": true, "bool": true, "string": true, "bytes": true,
}

func (p *protoPrinter) field(f protoField) string {
	var b strings.Builder
	label, typ := f.label, f.typ
	valueType := f.typ
	if f.mapKey != "" {
		valueType = f.mapVal
	}
	if p.norm {
		if f.mapKey != "" {
			v := f.mapVal
			if !protoScalars[v] {
				v = p.resolveType(v)
			}
			typ = "map<" + f.mapKey + ", " + v + ">"
			label = ""
		} else if !protoScalars[typ] {
			typ = p.resolveType(typ)
		}
	}
	if label != "" {
		b.WriteString(label + " ")
	}
	b.WriteString(typ + " " + f.name + " = " + strconv.FormatUint(f.tag, 10))
	// Confluent's parser keeps default and json_name apart from the other
	// options and prints them last.
	var opts []*ast.OptionNode
	var def, jsonName []protoOption
	for _, o := range f.options {
		switch optionName(o) {
		case "default":
			v := p.optionValue(o.Val)
			v.kind = defaultKind(valueType)
			def = append(def, protoOption{name: "default", val: v})
		case "json_name":
			jsonName = append(jsonName, protoOption{name: "json_name", val: p.optionValue(o.Val)})
		default:
			opts = append(opts, o)
		}
	}
	all := append(append(p.convertOptions(opts), def...), jsonName...)
	if all = p.filterOptions(all); len(all) > 0 {
		b.WriteString(" " + p.appendOptionList(all))
	}
	b.WriteString(";\n")
	return b.String()
}

// defaultKind is how Confluent prints a default value: by the field's type
// (bytes defaults print unquoted, as Confluent does).
func defaultKind(typ string) optKind {
	switch typ {
	case "bool":
		return optBool
	case "string":
		return optString
	case "bytes", "double", "float", "fixed32", "fixed64", "int32", "int64", "sfixed32",
		"sfixed64", "sint32", "sint64", "uint32", "uint64":
		return optNumber
	}
	return optEnum
}

func optionName(o *ast.OptionNode) string {
	if len(o.Name.Parts) == 1 && !o.Name.Parts[0].IsExtension() {
		return string(o.Name.Parts[0].Name.AsIdentifier())
	}
	return ""
}
