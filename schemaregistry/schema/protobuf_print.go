package schema

import (
	"sort"
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

// printProtoWithoutExtensions is Confluent's format=ignore_extensions: the
// canonical text without custom options (but Confluent's own, confluent.*),
// extension ranges and extend blocks.
func printProtoWithoutExtensions(res linker.Result) string {
	p := &protoPrinter{file: res.AST(), res: res, noExt: true}
	return p.printFile()
}

type protoPrinter struct {
	file  *ast.FileNode
	res   linker.Result
	norm  bool
	noExt bool // leave out custom options and extensions
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
	if len(extends) > 0 && !p.noExt {
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
