package schema

import (
	"sort"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/ast"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// printProto prints a .proto file in the fixed layout Confluent's registry
// stores (ProtobufSchemaUtils.toString): comments dropped, one declaration
// a line, two-space indents, messages before enums at each level. With
// normalize it also does what Confluent's normalize=true does: imports and
// options sorted, fields, oneofs, reserved and enum values by number, type
// names fully qualified, map fields printed as map<K, V> with a resolved
// value type, custom options by their full extension name.
func printProto(res linker.Result, normalize bool) string {
	p := &protoPrinter{file: res.AST(), res: res, norm: normalize}
	if normalize {
		p.syms = collectProtoSymbols(res)
	}
	return p.printFile()
}

type protoPrinter struct {
	file  *ast.FileNode
	res   linker.Result
	norm  bool
	syms  *protoSymbols
	scope []string // enclosing message names
}

// appendIndented adds value's lines to b, each indented by two spaces.
func appendIndented(b *strings.Builder, value string) {
	lines := strings.Split(value, "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

func (p *protoPrinter) pkg() string {
	return string(p.res.Package())
}

// fullScope is the package and enclosing messages, dot-separated.
func (p *protoPrinter) fullScope() string {
	parts := []string{}
	if p.pkg() != "" {
		parts = append(parts, p.pkg())
	}
	parts = append(parts, p.scope...)
	return strings.Join(parts, ".")
}

func (p *protoPrinter) printFile() string {
	var b strings.Builder
	f := p.file
	if syn := protoSyntax(f); syn != "" && (!p.norm || syn == "proto3") {
		b.WriteString("syntax = \"" + syn + "\";\n")
	}
	if f.Edition != nil {
		b.WriteString("edition = \"" + f.Edition.Edition.AsString() + "\";\n")
	}
	var imports, publics []string
	var options []*ast.OptionNode
	var msgs []*ast.MessageNode
	var enums []*ast.EnumNode
	var extends []*ast.ExtendNode
	var services []*ast.ServiceNode
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.PackageNode:
			b.WriteString("package " + string(d.Name.AsIdentifier()) + ";\n")
		case *ast.ImportNode:
			if d.Public != nil {
				publics = append(publics, d.Name.AsString())
			} else {
				imports = append(imports, d.Name.AsString())
			}
		case *ast.OptionNode:
			options = append(options, d)
		case *ast.MessageNode:
			msgs = append(msgs, d)
		case *ast.EnumNode:
			enums = append(enums, d)
		case *ast.ExtendNode:
			extends = append(extends, d)
		case *ast.ServiceNode:
			services = append(services, d)
		}
	}
	if len(imports) > 0 || len(publics) > 0 {
		b.WriteByte('\n')
		if p.norm {
			imports, publics = sortedUnique(imports), sortedUnique(publics)
		}
		for _, i := range imports {
			b.WriteString("import \"" + i + "\";\n")
		}
		for _, i := range publics {
			b.WriteString("import public \"" + i + "\";\n")
		}
	}
	if opts := p.options(options); len(opts) > 0 {
		b.WriteByte('\n')
		for _, o := range opts {
			b.WriteString(p.optionStatement(o))
		}
	}
	if len(msgs) > 0 || len(enums) > 0 {
		b.WriteByte('\n')
		// Message order is kept even when normalising: serialisers name a
		// message by its index in the file.
		for _, m := range msgs {
			b.WriteString(p.message(m))
		}
		for _, e := range enums {
			b.WriteString(p.enum(e))
		}
	}
	if len(extends) > 0 {
		b.WriteByte('\n')
		for _, e := range p.extends(extends) {
			b.WriteString(e)
		}
	}
	if len(services) > 0 {
		b.WriteByte('\n')
		for _, s := range services {
			b.WriteString(p.service(s))
		}
	}
	return b.String()
}

func sortedUnique(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	j := 0
	for i, v := range out {
		if i == 0 || v != out[j-1] {
			out[j] = v
			j++
		}
	}
	return out[:j]
}

func (p *protoPrinter) service(s *ast.ServiceNode) string {
	var b strings.Builder
	b.WriteString("service " + s.Name.Val + " {")
	var options []*ast.OptionNode
	var rpcs []*ast.RPCNode
	for _, d := range s.Decls {
		switch d := d.(type) {
		case *ast.OptionNode:
			options = append(options, d)
		case *ast.RPCNode:
			rpcs = append(rpcs, d)
		}
	}
	if opts := p.options(options); len(opts) > 0 {
		b.WriteByte('\n')
		for _, o := range opts {
			appendIndented(&b, p.optionStatement(o))
		}
	}
	if len(rpcs) > 0 {
		b.WriteByte('\n')
		for _, r := range rpcs {
			appendIndented(&b, p.rpc(r))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func (p *protoPrinter) rpc(r *ast.RPCNode) string {
	var b strings.Builder
	b.WriteString("rpc " + r.Name.Val + " (")
	typ := func(t *ast.RPCTypeNode) {
		if t.Stream != nil {
			b.WriteString("stream ")
		}
		name := string(t.MessageType.AsIdentifier())
		if p.norm {
			name = p.resolveType(name)
		}
		b.WriteString(name)
	}
	typ(r.Input)
	b.WriteString(") returns (")
	typ(r.Output)
	b.WriteString(")")
	var options []*ast.OptionNode
	for _, d := range r.Decls {
		if o, ok := d.(*ast.OptionNode); ok {
			options = append(options, o)
		}
	}
	if opts := p.options(options); len(opts) > 0 {
		b.WriteString(" {\n")
		for _, o := range opts {
			appendIndented(&b, p.optionStatement(o))
		}
		b.WriteByte('}')
	}
	b.WriteString(";\n")
	return b.String()
}

// resolveType is a message or enum name as ".full.Name", from the current
// scope. An unresolvable name (the compiler already rejected those) stays.
func (p *protoPrinter) resolveType(name string) string {
	n := resolveScoped(name, p.fullScope(), func(n string) bool {
		fn := protoreflect.FullName(n)
		_, m := p.syms.messages[fn]
		_, e := p.syms.enums[fn]
		return m || e
	})
	if n == "" {
		return name
	}
	return "." + n
}

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
			s += " " + p.appendOptions(opts)
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
	if len(extRanges) > 0 {
		b.WriteByte('\n')
		for _, s := range p.extensionRanges(extRanges) {
			appendIndented(&b, s)
		}
	}
	if len(extends) > 0 {
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
				s += " " + p.appendOptions(opts)
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
			s += " " + p.appendOptions(opts)
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
