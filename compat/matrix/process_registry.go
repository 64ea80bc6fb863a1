package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Each client's schema registry scenario is a program beside its adapters
// (clients/python/schema_registry.py, clients/js/schema_registry.js,
// clients/java-registry) that speaks the adapter protocol with the
// operation "avro": it registers two
// versions of an Avro schema through the client's registry API and
// produces a record with each, has an incompatible third version refused,
// then consumes both records and decodes each with a reader on each
// version.
var (
	RegistryPython  = newProcess("confluent-kafka-python", "clients/python", ".venv/.installed", "python", ".venv/bin/python", "schema_registry.py")
	RegistryKafkaJS = newProcess("kafkajs", "clients/js", "node_modules/.installed", "js", "node", "schema_registry.js")
	// Spring Cloud Stream's ConfluentSchemaRegistryClient with Apache Avro
	// and kafka-clients: Confluent's own Java serialisers are not on Maven
	// Central.
	RegistryJava = newProcess("kafka-clients", "clients/java-registry", "target/classes/fakekafka/registry/SchemaRegistry.class", "java",
		"java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", "target/classes:target/lib/*", "fakekafka.registry.SchemaRegistry")
)

// RegistryRun is what a registry scenario reported.
type RegistryRun struct {
	// IDs are the schema ids in the produced records' bytes, by index.
	IDs []int
	// Refused is the client's error for the incompatible version.
	Refused *AdapterError
	// Decoded are the values each reader ("v1", "v2") decoded, by index.
	Decoded map[string][]json.RawMessage
}

// SchemaRegistryAvro runs the scenario against the cluster at bootstrap
// and the registry at registryURL, on topic (subject topic-value).
func (p Process) SchemaRegistryAvro(ctx context.Context, bootstrap []string, registryURL, topic string) (RegistryRun, error) {
	cfg := newAdapterConfig(bootstrap, "")
	cfg.Topic, cfg.RegistryURL = topic, registryURL
	out := RegistryRun{Decoded: map[string][]json.RawMessage{}}
	var bad []string
	_, err := p.run(ctx, "avro", cfg, nil, func(l adapterLine) {
		switch l.Type {
		case "produced":
			if l.Index != len(out.IDs) {
				bad = append(bad, fmt.Sprintf("produced %d after %d records", l.Index, len(out.IDs)))
			}
			out.IDs = append(out.IDs, l.ID)
		case "refused":
			out.Refused = l.Error
		case "decoded":
			if l.Index != len(out.Decoded[l.Reader]) {
				bad = append(bad, fmt.Sprintf("decoded %d after %d records", l.Index, len(out.Decoded[l.Reader])))
			}
			out.Decoded[l.Reader] = append(out.Decoded[l.Reader], l.Decoded)
		default:
			bad = append(bad, fmt.Sprintf("unexpected line %+v", l))
		}
	})
	if err == nil && len(bad) > 0 {
		err = fmt.Errorf("%s: %s", p.name, strings.Join(bad, "; "))
	}
	return out, err
}
