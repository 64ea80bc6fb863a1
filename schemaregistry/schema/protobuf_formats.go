package schema

import (
	"encoding/base64"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

// Formatted gives Confluent's Protobuf formats for the REST API's
// ?format= (the registry's optional formatter, as Avro's "resolved"):
// "serialized", the schema as a base64 FileDescriptorProto (what
// confluent-kafka-python's and .NET's deserialisers ask for), named
// "default" as Confluent names it; "ignore_extensions", the canonical text
// without custom options and extensions. false for a format Protobuf does
// not have.
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
