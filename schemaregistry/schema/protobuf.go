package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/ast"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protobufFile is the name the registered schema gets while compiling; a
// reference name is an import path, and this one cannot be imported.
const protobufFile = "<schema>"

// protobufSchema is a .proto text compiled with its references. The AST
// gives the text as written (Confluent prints its canonical form from the
// parsed elements, not from a descriptor); the linked descriptors give the
// resolved types the normal form and the compatibility rules need.
type protobufSchema struct {
	file       linker.Result
	canonical  string
	normalized string
}

func parseProtobuf(text string, deps map[string]string) (Parsed, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("invalid protobuf schema: empty")
	}
	sources := make(map[string]string, len(deps)+1)
	for name, dep := range deps {
		sources[name] = dep
	}
	sources[protobufFile] = text
	var firstErr error
	c := protocompile.Compiler{
		// Well-known imports (google/protobuf/*.proto) resolve without a
		// reference, as Confluent's registry does; a reference of the same
		// name wins.
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(sources),
		}),
		RetainASTs: true,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			if firstErr == nil {
				firstErr = err
			}
			return nil // keep going: report the first error, as a reader fixes them in order
		}, nil),
	}
	files, err := c.Compile(context.Background(), protobufFile)
	if firstErr != nil {
		err = firstErr
	}
	if err != nil {
		return nil, fmt.Errorf("invalid protobuf schema: %s", protobufErrorText(err))
	}
	res, ok := files[0].(linker.Result)
	if !ok || res.AST() == nil {
		return nil, errors.New("invalid protobuf schema: no syntax tree")
	}
	s := &protobufSchema{file: res}
	s.canonical = printProto(res, false)
	s.normalized = printProto(res, true)
	return s, nil
}

// protobufErrorText names the schema's own positions "line:col" rather
// than with the internal file name.
func protobufErrorText(err error) string {
	msg := err.Error()
	return strings.ReplaceAll(msg, protobufFile+":", "")
}

func (s *protobufSchema) Type() Type         { return Protobuf }
func (s *protobufSchema) Canonical() string  { return s.canonical }
func (s *protobufSchema) Normalized() string { return s.normalized }

// Backward lists Confluent's incompatible differences from older to s.
func (s *protobufSchema) Backward(older Parsed) []string {
	o, ok := older.(*protobufSchema)
	if !ok {
		return []string{differentSchemaType}
	}
	var msgs []string
	for _, d := range protoCompare(o.file, s.file) {
		if !protoCompatibleChanges[d.kind] {
			msgs = append(msgs, d.String())
		}
	}
	return msgs
}

// protoAST is the file's syntax tree.
func protoAST(f linker.Result) *ast.FileNode { return f.AST() }

// protoSyntax is the syntax the file declares ("" when it declares none).
func protoSyntax(n *ast.FileNode) string {
	if n.Syntax != nil {
		return n.Syntax.Syntax.AsString()
	}
	return ""
}

// protoDescriptors collects every message, enum and extension of f and its
// imports, by full name.
type protoSymbols struct {
	messages   map[protoreflect.FullName]protoreflect.MessageDescriptor
	enums      map[protoreflect.FullName]protoreflect.EnumDescriptor
	extensions map[protoreflect.FullName]protoreflect.ExtensionDescriptor
}

func collectProtoSymbols(f protoreflect.FileDescriptor) *protoSymbols {
	syms := &protoSymbols{
		messages:   map[protoreflect.FullName]protoreflect.MessageDescriptor{},
		enums:      map[protoreflect.FullName]protoreflect.EnumDescriptor{},
		extensions: map[protoreflect.FullName]protoreflect.ExtensionDescriptor{},
	}
	seen := map[string]bool{}
	var addFile func(f protoreflect.FileDescriptor)
	var addMessages func(ms protoreflect.MessageDescriptors)
	addEnums := func(es protoreflect.EnumDescriptors) {
		for i := 0; i < es.Len(); i++ {
			syms.enums[es.Get(i).FullName()] = es.Get(i)
		}
	}
	addExts := func(xs protoreflect.ExtensionDescriptors) {
		for i := 0; i < xs.Len(); i++ {
			syms.extensions[xs.Get(i).FullName()] = xs.Get(i)
		}
	}
	addMessages = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			syms.messages[m.FullName()] = m
			addEnums(m.Enums())
			addExts(m.Extensions())
			addMessages(m.Messages())
		}
	}
	addFile = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		addMessages(f.Messages())
		addEnums(f.Enums())
		addExts(f.Extensions())
		for i := 0; i < f.Imports().Len(); i++ {
			addFile(f.Imports().Get(i).FileDescriptor)
		}
	}
	addFile(f)
	return syms
}

// resolveScoped finds name the way protobuf scopes names (and Confluent's
// Context.resolve): from the innermost scope outwards, then as given. It
// returns the full name without a leading dot, or "" when nothing matches.
func resolveScoped(name, scope string, exists func(string) bool) string {
	if strings.HasPrefix(name, ".") {
		if exists(name[1:]) {
			return name[1:]
		}
		return ""
	}
	for scope != "" {
		if n := scope + "." + name; exists(n) {
			return n
		}
		i := strings.LastIndexByte(scope, '.')
		if i < 0 {
			scope = ""
		} else {
			scope = scope[:i]
		}
	}
	if exists(name) {
		return name
	}
	return ""
}
