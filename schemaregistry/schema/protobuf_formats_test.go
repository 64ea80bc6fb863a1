package schema

import (
	"encoding/base64"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestProtobufSerializedFormat: format=serialized is a FileDescriptorProto
// a client builds a working descriptor from, as confluent-kafka-python's
// deserialiser does (it names the file itself).
func TestProtobufSerializedFormat(t *testing.T) {
	p := mustProto(t, `syntax = "proto3"; package shop;
import "google/protobuf/timestamp.proto";
message Order { string id = 1; google.protobuf.Timestamp at = 2; map<string, int64> lines = 3; }`, nil)
	text, ok := p.Formatted("serialized")
	if !ok {
		t.Fatal("no serialized format")
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(raw, &fdp); err != nil {
		t.Fatal(err)
	}
	if fdp.GetName() != "default" || fdp.GetPackage() != "shop" || len(fdp.GetDependency()) != 1 || fdp.GetDependency()[0] != "google/protobuf/timestamp.proto" {
		t.Fatalf("descriptor: name %q package %q deps %q", fdp.GetName(), fdp.GetPackage(), fdp.GetDependency())
	}
	fd, err := protodesc.NewFile(&fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	order := fd.Messages().ByName("Order")
	if order == nil || order.Fields().ByName("at").Message().FullName() != "google.protobuf.Timestamp" || !order.Fields().ByName("lines").IsMap() {
		t.Fatalf("Order: %v", order)
	}
	if _, ok := p.Formatted("nonsense"); ok {
		t.Error("an unknown format was answered")
	}
}

func TestProtobufIgnoreExtensionsFormat(t *testing.T) {
	p := mustProto(t, `syntax = "proto2"; package x;
import "google/protobuf/descriptor.proto"; import "confluent/meta.proto";
extend google.protobuf.FieldOptions { optional string label = 50000; }
message M {
  option (confluent.message_meta) = { doc: "kept" };
  optional int32 a = 1 [(label) = "dropped", deprecated = true];
  extensions 100 to 200;
}
`, nil)
	want := `syntax = "proto2";
package x;

import "google/protobuf/descriptor.proto";
import "confluent/meta.proto";

message M {
  option (confluent.message_meta) = {
    doc: "kept"
  };

  optional int32 a = 1 [deprecated = true];
}
`
	if got, ok := p.Formatted("ignore_extensions"); !ok || got != want {
		t.Errorf("ignore_extensions:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := p.Formatted("default"); got != p.Canonical() {
		t.Errorf("default format is not the canonical text")
	}
}
