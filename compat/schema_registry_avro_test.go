package compat

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/fakekafka/fakekafka/server"
	"github.com/hamba/avro/v2"
)

// docs/schema-registry.md's Go example, verbatim between the markers
// (TestSchemaRegistryExamplesInDocs checks it): confluent-kafka-go's Avro
// serialiser registers the first version of the schema as it produces; a
// second version that adds a field with a default is registered with the
// client and used by a serialiser on the latest version (avrov2 registers
// a schema as hamba/avro prints it, which drops field defaults); an
// incompatible version is refused with the registry's 409; a consumer on
// the latest schema and one on the first both read every record.

// The record types: userV1 and userV3 carry their schema (avrov2 registers
// it); userV2 is written with the registered version 2.
type userV1 struct {
	Name string `avro:"name"`
	Age  int32  `avro:"age"`
}

type userV2 struct {
	Name  string `avro:"name"`
	Age   int32  `avro:"age"`
	Email string `avro:"email"`
}

type userV3 struct { // age becomes a string: incompatible
	Name string `avro:"name"`
	Age  string `avro:"age"`
}

func (userV1) Schema() avro.Schema {
	return mustAvro(`{"type":"record","name":"User","namespace":"example","fields":[
		{"name":"name","type":"string"},{"name":"age","type":"int"}]}`)
}

func (userV3) Schema() avro.Schema {
	return mustAvro(`{"type":"record","name":"User","namespace":"example","fields":[
		{"name":"name","type":"string"},{"name":"age","type":"string"}]}`)
}

// mustAvro parses a schema in a cache of its own: the versions share a
// name.
func mustAvro(s string) avro.Schema {
	sch, err := avro.ParseWithCache(s, "", &avro.SchemaCache{})
	if err != nil {
		panic(err)
	}
	return sch
}

// example:sr-go-avro:start
func TestSchemaRegistryAvroGo(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	if err := c.CreateTopic("users", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(c.Bootstrap(), ",")
	sr, err := schemaregistry.NewClient(schemaregistry.NewConfig(c.SchemaRegistryURL()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	topic := "users"
	produce := func(value []byte) {
		delivered := make(chan kafka.Event, 1)
		tp := kafka.TopicPartition{Topic: &topic, Partition: 0}
		if err := p.Produce(&kafka.Message{TopicPartition: tp, Value: value}, delivered); err != nil {
			t.Fatal(err)
		}
		if m := (<-delivered).(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}

	// Version 1: the serialiser registers users-value as it serialises.
	ser, err := avrov2.NewSerializer(sr, serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	value, err := ser.Serialize(topic, &userV1{Name: "ada", Age: 36})
	if err != nil {
		t.Fatal(err)
	}
	produce(value)

	// Version 2 adds a field with a default: BACKWARD compatible.
	_, err = sr.Register("users-value", schemaregistry.SchemaInfo{Schema: `{"type":"record","name":"User",
		"namespace":"example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"},
		{"name":"email","type":"string","default":"unknown"}]}`}, false)
	if err != nil {
		t.Fatal(err)
	}
	latest := avrov2.NewSerializerConfig()
	latest.AutoRegisterSchemas, latest.UseLatestVersion = false, true
	serLatest, err := avrov2.NewSerializer(sr, serde.ValueSerde, latest)
	if err != nil {
		t.Fatal(err)
	}
	value, err = serLatest.Serialize(topic, &userV2{Name: "alan", Age: 41, Email: "alan@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	produce(value)

	// An incompatible change is refused: the client's *rest.Error, code 409.
	_, err = ser.Serialize(topic, &userV3{Name: "grace", Age: "old"})
	var refused *rest.Error
	if !errors.As(err, &refused) || refused.Code != 409 {
		t.Fatalf("an incompatible schema: %v, want error code 409", err)
	}
	if versions, err := sr.GetAllVersions("users-value"); err != nil || len(versions) != 2 {
		t.Fatalf("versions of users-value: %v %v, want [1 2]", versions, err)
	}

	cons, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "group.id": "readers"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}); err != nil {
		t.Fatal(err)
	}
	var values [][]byte
	for len(values) < 2 {
		m, err := cons.ReadMessage(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, m.Value)
	}

	// A consumer on the latest schema reads the first record with the
	// default; one on the first schema reads the second without the email.
	onLatest := avrov2.NewDeserializerConfig()
	onLatest.UseLatestVersion = true
	newReader, err := avrov2.NewDeserializer(sr, serde.ValueSerde, onLatest)
	if err != nil {
		t.Fatal(err)
	}
	oldReader, err := avrov2.NewDeserializer(sr, serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	wantNew := []userV2{{"ada", 36, "unknown"}, {"alan", 41, "alan@example.com"}}
	wantOld := []userV1{{"ada", 36}, {"alan", 41}}
	for i, v := range values {
		var u2 userV2
		if err := newReader.DeserializeInto(topic, v, &u2); err != nil || u2 != wantNew[i] {
			t.Errorf("record %d on the latest schema: %+v %v, want %+v", i, u2, err, wantNew[i])
		}
		var u1 userV1
		if err := oldReader.DeserializeInto(topic, v, &u1); err != nil || u1 != wantOld[i] {
			t.Errorf("record %d on the first schema: %+v %v, want %+v", i, u1, err, wantOld[i])
		}
	}
}

// example:sr-go-avro:end
