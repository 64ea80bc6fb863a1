package schema

import (
	"encoding/base64"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

// Formatter is implemented by the schema types that render a schema in
// other formats than its canonical text, as the REST API's ?format= asks.
type Formatter interface {
	// Formatted is the schema in format; false when the type has no such
	// format (Confluent then answers the canonical text).
	Formatted(format string) (string, bool)
}

// Formatted gives Confluent's Protobuf formats: "serialized", the schema as
// a base64 FileDescriptorProto (what confluent-kafka-python's and .NET's
// deserialisers ask for), named "default" as Confluent names it; and
// "ignore_extensions", the canonical text without custom options and
// extensions.
func (s *protobufSchema) Formatted(format string) (string, bool) {
	switch format {
	case "serialized":
		fdp := protodesc.ToFileDescriptorProto(s.file)
		fdp.Name = proto.String("default")
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
		if err != nil {
			return "", false
		}
		return base64.StdEncoding.EncodeToString(b), true
	case "ignore_extensions":
		return printProtoWithoutExtensions(s.file), true
	case "default":
		return s.canonical, true
	}
	return "", false
}
