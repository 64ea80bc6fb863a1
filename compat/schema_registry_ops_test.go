package compat

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/fakekafka/fakekafka/server"
)

// TestSchemaRegistryBasicAuthGo: with SASL users the registry wants HTTP
// basic auth; confluent-kafka-go's client with basic.auth.user.info of a
// SASL user registers and reads through the serdes, one without
// credentials or with a wrong password gets the registry's 401.
func TestSchemaRegistryBasicAuthGo(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		SASLUsers:      map[string]string{"alice": "alice-secret"},
		SchemaRegistry: &server.SchemaRegistryConfig{},
	})
	scMust(t, c.CreateTopic("users", 1, 3, nil))
	url := c.SchemaRegistryURL()
	for _, conf := range []*schemaregistry.Config{
		schemaregistry.NewConfig(url),
		schemaregistry.NewConfigWithBasicAuthentication(url, "alice", "wrong"),
	} {
		cl, err := schemaregistry.NewClient(conf)
		scMust(t, err)
		_, err = cl.GetAllSubjects()
		var re *rest.Error
		if !errors.As(err, &re) || re.Code != 401 {
			t.Errorf("credentials %q: %v, want error code 401", conf.BasicAuthUserInfo, err)
		}
	}

	sr, err := schemaregistry.NewClient(schemaregistry.NewConfigWithBasicAuthentication(url, "alice", "alice-secret"))
	scMust(t, err)
	ser, err := avrov2.NewSerializer(sr, serde.ValueSerde, avrov2.NewSerializerConfig())
	scMust(t, err)
	value, err := ser.Serialize("users", &userV1{Name: "ada", Age: 36})
	scMust(t, err)
	bootstrap := strings.Join(c.Bootstrap(), ",")
	srProduce(t, bootstrap, "users", value)
	deser, err := avrov2.NewDeserializer(sr, serde.ValueSerde, avrov2.NewDeserializerConfig())
	scMust(t, err)
	var u userV1
	scMust(t, deser.DeserializeInto("users", srConsume(t, bootstrap, "users", 1)[0], &u))
	if u != (userV1{Name: "ada", Age: 36}) {
		t.Fatalf("read back %+v", u)
	}
}

// TestSchemaRegistryFailoverGo: the leader of _schemas crashes between a
// serialising producer and a deserialising consumer; a client with empty
// caches reads the record by its id from the registry, which replayed
// _schemas at the new leader, and the next version registered gets the
// next id and version 2.
func TestSchemaRegistryFailoverGo(t *testing.T) {
	c, sr, bootstrap := srCluster(t, "users")
	ser, err := avrov2.NewSerializer(sr, serde.ValueSerde, avrov2.NewSerializerConfig())
	scMust(t, err)
	value, err := ser.Serialize("users", &userV1{Name: "ada", Age: 36})
	scMust(t, err)
	srProduce(t, bootstrap, "users", value)

	before := scPartition(t, c, "_schemas", 0)
	scMust(t, c.StopBroker(before.Leader, server.StopCrash))
	scWait(t, 10*time.Second, "a new leader of _schemas", func() bool {
		ps, ok := c.Partition("_schemas", 0)
		return ok && ps.Leader >= 0 && ps.Leader != before.Leader
	})

	fresh, err := schemaregistry.NewClient(schemaregistry.NewConfig(c.SchemaRegistryURL()))
	scMust(t, err)
	deser, err := avrov2.NewDeserializer(fresh, serde.ValueSerde, avrov2.NewDeserializerConfig())
	scMust(t, err)
	var u userV1
	scMust(t, deser.DeserializeInto("users", srConsume(t, bootstrap, "users", 1)[0], &u))
	if u != (userV1{Name: "ada", Age: 36}) {
		t.Fatalf("read back after failover: %+v", u)
	}

	id2, err := fresh.Register("users-value", schemaregistry.SchemaInfo{Schema: `{"type":"record","name":"User",
		"namespace":"example","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"},
		{"name":"email","type":"string","default":"unknown"}]}`}, false)
	scMust(t, err)
	if id1 := srWireID(t, value); id2 <= id1 {
		t.Errorf("version 2's id %d after version 1's %d", id2, id1)
	}
	latest, err := fresh.GetLatestSchemaMetadata("users-value")
	scMust(t, err)
	if latest.Version != 2 || latest.ID != id2 {
		t.Errorf("latest after failover: version %d id %d, want 2 and %d", latest.Version, latest.ID, id2)
	}
}
