package schema

import (
	"reflect"
	"strings"
	"testing"
)

// orderProto is written the way people write .proto files: comments,
// blank lines, one-line blocks, options in any order.
const orderProto = `// Orders placed in the shop.
syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";
import "customer.proto";
import "confluent/meta.proto";

option java_package = "com.shop.v1";
option go_package = "shop/v1";

message Order {
  reserved 9, 4 to 6, 15 to max;
  reserved "legacy";
  option deprecated = true;
  string id = 1 [json_name = "orderId", deprecated = true];
  google.protobuf.Timestamp placed_at = 2; // when
  map<string, Line> lines = 3;
  customer.Customer customer = 8 [(confluent.field_meta) = { doc: "who", params: [{key: "k", value: "v"}] }];
  oneof payment { int64 cash_cents = 11; string card = 10; }
  optional Status status = 7;
  message Line { int32 qty = 1; double price = 2; }
  enum Status { STATUS_UNKNOWN = 0; PAID = 2; NEW = 1; }
}

enum Channel { WEB = 0; SHOP = 1 [deprecated = true]; }

service Orders {
  rpc Place (Order) returns (Order.Line);
  rpc Watch (stream Order) returns (stream Order) { option deprecated = true; }
}
`

var orderDeps = map[string]string{"customer.proto": `syntax = "proto3"; package customer; message Customer { string id = 1; }`}

func TestProtobufCanonical(t *testing.T) {
	p, err := Parse(Protobuf, orderProto, orderDeps)
	if err != nil {
		t.Fatal(err)
	}
	want := `syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";
import "customer.proto";
import "confluent/meta.proto";

option java_package = "com.shop.v1";
option go_package = "shop/v1";

message Order {
  reserved 9, 4 to 6, 15 to max;
  reserved "legacy";

  option deprecated = true;

  string id = 1 [
    deprecated = true,
    json_name = "orderId"
  ];
  google.protobuf.Timestamp placed_at = 2;
  map<string, Line> lines = 3;
  customer.Customer customer = 8 [(confluent.field_meta) = {
    doc: "who",
    params: [
      {
        key: "k",
        value: "v"
      }
    ]
  }];
  optional Status status = 7;

  oneof payment {
    int64 cash_cents = 11;
    string card = 10;
  }

  message Line {
    int32 qty = 1;
    double price = 2;
  }
  enum Status {
    STATUS_UNKNOWN = 0;
    PAID = 2;
    NEW = 1;
  }
}
enum Channel {
  WEB = 0;
  SHOP = 1 [deprecated = true];
}

service Orders {
  rpc Place (Order) returns (Order.Line);
  rpc Watch (stream Order) returns (stream Order) {
    option deprecated = true;
  };
}
`
	if got := p.Canonical(); got != want {
		t.Errorf("canonical:\n%s\nwant:\n%s", got, want)
	}
	// The canonical text is a fixed point.
	again, err := Parse(Protobuf, p.Canonical(), orderDeps)
	if err != nil || again.Canonical() != want {
		t.Errorf("canonical of canonical: %v\n%s", err, again.Canonical())
	}
}

func TestProtobufNormalized(t *testing.T) {
	p, err := Parse(Protobuf, orderProto, orderDeps)
	if err != nil {
		t.Fatal(err)
	}
	want := `syntax = "proto3";
package shop.v1;

import "confluent/meta.proto";
import "customer.proto";
import "google/protobuf/timestamp.proto";

option go_package = "shop/v1";
option java_package = "com.shop.v1";

message Order {
  reserved 4 to 6;
  reserved 9;
  reserved 15 to max;
  reserved "legacy";

  option deprecated = true;

  string id = 1 [
    deprecated = true,
    json_name = "orderId"
  ];
  .google.protobuf.Timestamp placed_at = 2;
  map<string, .shop.v1.Order.Line> lines = 3;
  optional .shop.v1.Order.Status status = 7;
  .customer.Customer customer = 8 [(confluent.field_meta) = {
    doc: "who",
    params: {
      key: "k",
      value: "v"
    }
  }];

  oneof payment {
    string card = 10;
    int64 cash_cents = 11;
  }

  message Line {
    int32 qty = 1;
    double price = 2;
  }
  enum Status {
    STATUS_UNKNOWN = 0;
    NEW = 1;
    PAID = 2;
  }
}
enum Channel {
  WEB = 0;
  SHOP = 1 [deprecated = true];
}

service Orders {
  rpc Place (.shop.v1.Order) returns (.shop.v1.Order.Line);
  rpc Watch (stream .shop.v1.Order) returns (stream .shop.v1.Order) {
    option deprecated = true;
  };
}
`
	if got := p.Normalized(); got != want {
		t.Errorf("normalized:\n%s\nwant:\n%s", got, want)
	}
	// Two spellings of one schema normalise to one text.
	reordered := `syntax = "proto3"; package shop.v1;
import "google/protobuf/timestamp.proto"; import "confluent/meta.proto"; import "customer.proto";
option go_package = "shop/v1"; option java_package = "com.shop.v1";
message Order {
  reserved "legacy"; reserved 15 to max, 9, 4 to 6;
  option deprecated = true;
  optional .shop.v1.Order.Status status = 7;
  oneof payment { string card = 10; int64 cash_cents = 11; }
  shop.v1.Order.Line unused_before = 12;
  message Line { int32 qty = 1; double price = 2; }
  enum Status { STATUS_UNKNOWN = 0; NEW = 1; PAID = 2; }
}
enum Channel { WEB = 0; SHOP = 1 [deprecated = true]; }
`
	q, err := Parse(Protobuf, reordered, orderDeps)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q.Normalized(), "  .shop.v1.Order.Line unused_before = 12;\n") {
		t.Errorf("a qualified name is not resolved:\n%s", q.Normalized())
	}
	if strings.Contains(q.Canonical(), ".shop.v1.Order.Line unused_before") {
		t.Errorf("canonical text resolved a name it should keep as written:\n%s", q.Canonical())
	}
}

func TestProtobufNormalizedNumbersAndOptions(t *testing.T) {
	p, err := Parse(Protobuf, `syntax = "proto2";
import "google/protobuf/descriptor.proto";
package x;
extend google.protobuf.MessageOptions { optional Limits limits = 50000; }
message Limits { optional int32 max = 1; optional double ratio = 2; optional Inner inner = 3; }
message Inner { optional int32 a = 1; optional int32 b = 2; }
message M {
  option (limits).max = 0x10;
  option (limits).ratio = 1.50000;
  option (x.limits).inner.b = 2;
  option (limits).inner.a = 1;
  optional double d = 1 [default = 2.5e1];
}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// proto2 says no syntax line when normalised; a custom option set in
	// parts is merged into one message literal under its full name;
	// numbers print in decimal.
	want := `package x;

import "google/protobuf/descriptor.proto";

message Limits {
  optional int32 max = 1;
  optional double ratio = 2;
  optional .x.Inner inner = 3;
}
message Inner {
  optional int32 a = 1;
  optional int32 b = 2;
}
message M {
  option (x.limits) = {
    inner: {
      a: 1,
      b: 2
    },
    max: 16,
    ratio: 1.5
  };

  optional double d = 1 [default = 25];
}

extend .google.protobuf.MessageOptions {
  optional .x.Limits limits = 50000;
}
`
	if got := p.Normalized(); got != want {
		t.Errorf("normalized:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(p.Canonical(), "  option (limits).max = 0x10;\n  option (limits).ratio = 1.50000;\n  option (x.limits).inner.b = 2;\n") ||
		!strings.Contains(p.Canonical(), "optional double d = 1 [default = 2.5e1];") {
		t.Errorf("canonical does not keep options as written:\n%s", p.Canonical())
	}
}

// TestProtobufParseErrors: what the registry answers 42201 with.
func TestProtobufParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{`syntax = "proto3"; message A { int32 a = 1 }`, "invalid protobuf schema: 1:44: syntax error: expecting ';'"},
		{`syntax = "proto3"; message A { strin a = 1; }`, "invalid protobuf schema: 1:32: field A.a: unknown type strin"},
		{`syntax = "proto3"; import "missing.proto"; message A { }`, `invalid protobuf schema: 1:27: could not resolve path "missing.proto": file does not exist`},
		{`syntax = "proto3"; message A { int32 a = 1; int32 b = 1; }`, "invalid protobuf schema: 1:55: message A: fields a and b both have the same tag 1"},
	}
	for _, c := range cases {
		_, err := Parse(Protobuf, c.text, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %q", c.text, err, c.want)
		}
	}
}

// TestProtobufBuiltInImports: the files Confluent's serialisers never
// register as references import without one; a reference of the same
// name is used instead when given.
func TestProtobufBuiltInImports(t *testing.T) {
	var names []string
	for _, known := range []map[string]string{protobufKnownFiles, googleTypeFiles} {
		for name := range known {
			names = append(names, name)
		}
	}
	names = append(names, "google/protobuf/timestamp.proto", "google/protobuf/struct.proto", "google/protobuf/descriptor.proto")
	for _, name := range names {
		if _, err := Parse(Protobuf, `syntax = "proto3"; import "`+name+`"; message M { }`, nil); err != nil {
			t.Errorf("import %s: %v", name, err)
		}
	}
	order := `syntax = "proto3"; package shop;
import "google/type/money.proto"; import "google/type/date.proto"; import "confluent/type/decimal.proto";
message Order { google.type.Money total = 1; google.type.Date day = 2; confluent.type.Decimal tax = 3; }`
	older := mustProto(t, order, nil)
	newer := mustProto(t, strings.Replace(order, "google.type.Date day = 2", "google.type.Money day = 2", 1), nil)
	if got := protoDiffNames(older, newer); len(got) != 1 || got[0] != "FIELD_NAMED_TYPE_CHANGED #/Order/2" {
		t.Errorf("differences = %q", got)
	}
	// A reference named like a built-in file wins over it.
	own := map[string]string{"google/type/date.proto": `syntax = "proto3"; package google.type; message Date { string iso = 1; }`}
	text := `syntax = "proto3"; import "google/type/date.proto"; message M { google.type.Date d = 1; }`
	want := []string{"FIELD_NAME_CHANGED #/Date/1", "FIELD_SCALAR_KIND_CHANGED #/Date/1", "FIELD_REMOVED #/Date/2", "FIELD_REMOVED #/Date/3", "FIELD_NAMED_TYPE_CHANGED #/M/1"}
	if got := protoDiffNames(mustProto(t, text, nil), mustProto(t, text, own)); !reflect.DeepEqual(got, want) {
		t.Errorf("built-in against own google/type/date.proto: %q, want %q", got, want)
	}
}
