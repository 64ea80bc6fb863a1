package compat

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"github.com/fakekafka/fakekafka/server"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// srCluster is a cluster with the schema registry on, a topic of one
// partition, and confluent-kafka-go's registry client for it.
func srCluster(t *testing.T, topic string) (c *server.Cluster, sr schemaregistry.Client, bootstrap string) {
	t.Helper()
	c = server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	scMust(t, c.CreateTopic(topic, 1, 3, nil))
	sr, err := schemaregistry.NewClient(schemaregistry.NewConfig(c.SchemaRegistryURL()))
	scMust(t, err)
	return c, sr, strings.Join(c.Bootstrap(), ",")
}

// srProduce produces values to partition 0 of topic with librdkafka and
// waits for every delivery.
func srProduce(t *testing.T, bootstrap, topic string, values ...[]byte) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap})
	scMust(t, err)
	defer p.Close()
	reports := make(chan kafka.Event, len(values))
	for _, v := range values {
		scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: v}, reports))
	}
	for range values {
		select {
		case e := <-reports:
			if m, ok := e.(*kafka.Message); !ok || m.TopicPartition.Error != nil {
				t.Fatalf("delivery to %s: %v", topic, e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no delivery report from %s in 10 s", topic)
		}
	}
}

// srConsume reads n values from the start of partition 0 of topic,
// through errors the client recovers from.
func srConsume(t *testing.T, bootstrap, topic string, n int) [][]byte {
	t.Helper()
	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "group.id": "sr-readers"})
	scMust(t, err)
	defer cons.Close()
	scMust(t, cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}))
	var out [][]byte
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d records of %s in 20 s", len(out), n, topic)
		}
		m, err := cons.ReadMessage(time.Second)
		var ke kafka.Error
		if errors.As(err, &ke) && !ke.IsFatal() {
			continue // a timeout, or a broker that is down (the failover test)
		} else if err != nil {
			t.Fatalf("consume %s after %d of %d: %v", topic, len(out), n, err)
		}
		out = append(out, m.Value)
	}
	return out
}

// srWireID is the schema id of a serialised value: magic byte 0, then the
// id in four bytes, big-endian (Confluent's wire format).
func srWireID(t *testing.T, v []byte) int {
	t.Helper()
	if len(v) < 5 || v[0] != 0 {
		t.Fatalf("not Confluent's wire format: % x", v)
	}
	return int(binary.BigEndian.Uint32(v[1:5]))
}

// srVersionIDs checks that subject has exactly versions 1..len(ids), whose
// schema ids are ids.
func srVersionIDs(t *testing.T, sr schemaregistry.Client, subject string, ids ...int) {
	t.Helper()
	versions, err := sr.GetAllVersions(subject)
	scMust(t, err)
	if len(versions) != len(ids) {
		t.Fatalf("versions of %s: %v, want %d", subject, versions, len(ids))
	}
	for i, id := range ids {
		md, err := sr.GetSchemaMetadata(subject, i+1)
		scMust(t, err)
		if md.ID != id || md.Version != i+1 || md.Subject != subject {
			t.Errorf("%s version %d: id %d version %d subject %q, want id %d", subject, i+1, md.ID, md.Version, md.Subject, id)
		}
	}
}

// srRefused checks that err is the registry client's 409 (incompatible).
func srRefused(t *testing.T, what string, err error) {
	t.Helper()
	var refused *rest.Error
	if !errors.As(err, &refused) || refused.Code != 409 {
		t.Fatalf("%s: %v, want error code 409", what, err)
	}
}

// protoMessage compiles one .proto file's text with protocompile and
// returns its message name: the serdes run on dynamic messages, with no
// generated code.
func protoMessage(t *testing.T, file, src, name string) protoreflect.MessageDescriptor {
	t.Helper()
	comp := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{file: src})}}
	files, err := comp.Compile(context.Background(), file)
	scMust(t, err)
	md := files[0].Messages().ByName(protoreflect.Name(name))
	if md == nil {
		t.Fatalf("%s has no message %s", file, name)
	}
	return md
}

// order is a dynamic message of md with the fields given by name.
func order(md protoreflect.MessageDescriptor, fields map[string]any) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	for name, v := range fields {
		m.Set(md.Fields().ByName(protoreflect.Name(name)), protoreflect.ValueOf(v))
	}
	return m
}

// TestSchemaRegistryProtobufGo: confluent-kafka-go's Protobuf serialiser
// registers the schema it derives from each message's file (version 1,
// then a compatible version 2 with a new field), a field whose type
// changes is refused with 409, and deserialisers on either version read
// both records.
func TestSchemaRegistryProtobufGo(t *testing.T) {
	_, sr, bootstrap := srCluster(t, "orders")
	v1 := protoMessage(t, "orders_v1.proto", `syntax = "proto3";
package example.orders;
message Order {
  string id = 1;
  int64 amount_cents = 2;
}
`, "Order")
	v2 := protoMessage(t, "orders_v2.proto", `syntax = "proto3";
package example.orders;
message Order {
  string id = 1;
  int64 amount_cents = 2;
  string currency = 3;
}
`, "Order")
	v3 := protoMessage(t, "orders_v3.proto", `syntax = "proto3";
package example.orders;
message Order {
  string id = 1;
  string amount_cents = 2;
}
`, "Order")

	ser, err := protobuf.NewSerializer(sr, serde.ValueSerde, protobuf.NewSerializerConfig())
	scMust(t, err)
	first, err := ser.Serialize("orders", order(v1, map[string]any{"id": "o-1", "amount_cents": int64(1250)}))
	scMust(t, err)
	second, err := ser.Serialize("orders", order(v2, map[string]any{"id": "o-2", "amount_cents": int64(990), "currency": "EUR"}))
	scMust(t, err)
	_, err = ser.Serialize("orders", order(v3, map[string]any{"id": "o-3", "amount_cents": "12.50"}))
	srRefused(t, "a field's type changed", err)
	srVersionIDs(t, sr, "orders-value", srWireID(t, first), srWireID(t, second))
	if srWireID(t, first) == srWireID(t, second) {
		t.Fatalf("two versions share id %d", srWireID(t, first))
	}
	md, err := sr.GetLatestSchemaMetadata("orders-value")
	scMust(t, err)
	if md.SchemaType != "PROTOBUF" || !strings.Contains(md.Schema, "currency") {
		t.Errorf("latest: type %q schema %q", md.SchemaType, md.Schema)
	}

	srProduce(t, bootstrap, "orders", first, second)
	got := srConsume(t, bootstrap, "orders", 2)
	deser, err := protobuf.NewDeserializer(sr, serde.ValueSerde, protobuf.NewDeserializerConfig())
	scMust(t, err)
	for i, want := range []map[string]any{{"id": "o-1", "amount_cents": int64(1250), "currency": ""}, {"id": "o-2", "amount_cents": int64(990), "currency": "EUR"}} {
		newer := dynamicpb.NewMessage(v2)
		scMust(t, deser.DeserializeInto("orders", got[i], newer))
		older := dynamicpb.NewMessage(v1)
		scMust(t, deser.DeserializeInto("orders", got[i], older))
		for name, v := range want {
			if g := newer.Get(v2.Fields().ByName(protoreflect.Name(name))).Interface(); g != v {
				t.Errorf("record %d on version 2: %s = %v, want %v", i, name, g, v)
			}
			if f := v1.Fields().ByName(protoreflect.Name(name)); f != nil {
				if g := older.Get(f).Interface(); g != v {
					t.Errorf("record %d on version 1: %s = %v, want %v", i, name, g, v)
				}
			}
		}
	}
}

// The JSON Schema versions: a closed content model (additionalProperties
// false), so an optional property added is BACKWARD compatible; a
// property's type changed is not.
const (
	paymentV1 = `{"type":"object","additionalProperties":false,"required":["id","amount"],
"properties":{"id":{"type":"string"},"amount":{"type":"integer"}}}`
	paymentV2 = `{"type":"object","additionalProperties":false,"required":["id","amount"],
"properties":{"id":{"type":"string"},"amount":{"type":"integer"},"currency":{"type":"string"}}}`
	paymentV3 = `{"type":"object","additionalProperties":false,"required":["id","amount"],
"properties":{"id":{"type":"string"},"amount":{"type":"string"}}}`
)

type payment struct {
	ID       string `json:"id"`
	Amount   int    `json:"amount"`
	Currency string `json:"currency,omitempty"`
}

// TestSchemaRegistryJSONSchemaGo: the schemas are registered with the
// client (JSON Schema's serialiser derives a schema from a Go type's
// reflection, so here the registered schema is the contract: the
// serialiser uses the latest version and validates each value against
// it); a compatibility test and a registration of the incompatible version
// are refused; both records deserialise.
func TestSchemaRegistryJSONSchemaGo(t *testing.T) {
	_, sr, bootstrap := srCluster(t, "payments")
	const subject = "payments-value"
	id1, err := sr.Register(subject, schemaregistry.SchemaInfo{Schema: paymentV1, SchemaType: "JSON"}, false)
	scMust(t, err)
	conf := jsonschema.NewSerializerConfig()
	conf.AutoRegisterSchemas, conf.UseLatestVersion, conf.EnableValidation = false, true, true
	ser, err := jsonschema.NewSerializer(sr, serde.ValueSerde, conf)
	scMust(t, err)
	first, err := ser.Serialize("payments", &payment{ID: "p-1", Amount: 1250})
	scMust(t, err)
	// Version 1 is closed: a currency is not valid yet.
	if _, err := ser.Serialize("payments", &payment{ID: "p-x", Amount: 1, Currency: "EUR"}); err == nil {
		t.Fatal("a value with a property version 1 does not have was serialised")
	}

	id2, err := sr.Register(subject, schemaregistry.SchemaInfo{Schema: paymentV2, SchemaType: "JSON"}, false)
	scMust(t, err)
	scMust(t, sr.ClearLatestCaches()) // the serialiser's latest is cached
	second, err := ser.Serialize("payments", &payment{ID: "p-2", Amount: 990, Currency: "EUR"})
	scMust(t, err)
	if srWireID(t, first) != id1 || srWireID(t, second) != id2 || id1 == id2 {
		t.Fatalf("wire ids %d, %d; registered %d, %d", srWireID(t, first), srWireID(t, second), id1, id2)
	}

	v3 := schemaregistry.SchemaInfo{Schema: paymentV3, SchemaType: "JSON"}
	ok, err := sr.TestCompatibility(subject, 2, v3)
	if err != nil || ok {
		t.Fatalf("compatibility of version 3 with version 2: %v %v, want false", ok, err)
	}
	_, err = sr.Register(subject, v3, false)
	srRefused(t, "amount as a string", err)
	srVersionIDs(t, sr, subject, id1, id2)

	srProduce(t, bootstrap, "payments", first, second)
	got := srConsume(t, bootstrap, "payments", 2)
	// Without validation: confluent-kafka-go v2.11.1 validates the value it
	// decodes into, a pointer, which its validator refuses whatever it
	// points to (the serialiser validated each value).
	deser, err := jsonschema.NewDeserializer(sr, serde.ValueSerde, jsonschema.NewDeserializerConfig())
	scMust(t, err)
	for i, want := range []payment{{ID: "p-1", Amount: 1250}, {ID: "p-2", Amount: 990, Currency: "EUR"}} {
		var p payment
		if err := deser.DeserializeInto("payments", got[i], &p); err != nil || p != want {
			t.Errorf("record %d: %+v %v, want %+v", i, p, err, want)
		}
	}
}
