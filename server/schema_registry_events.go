package server

import (
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/schemaregistry"
)

// observeSchemaRegistry is the registry's Options.Observe: each Change
// becomes an event of the ring, so c.WaitFor, GET /v1/events and the
// dashboard see registrations, deletions, refusals and config changes as
// they see a leader election.
func (c *Cluster) observeSchemaRegistry(ch schemaregistry.Change) {
	var t EventType
	switch ch.Kind {
	case schemaregistry.SchemaRegistered:
		t = EventSchemaRegistered
	case schemaregistry.SchemaDeleted:
		t = EventSchemaDeleted
	case schemaregistry.SchemaIncompatible:
		t = EventSchemaIncompatible
	case schemaregistry.ConfigChanged:
		t = EventSchemaConfigChanged
	default:
		c.log.Warn("schema registry: unknown change", "kind", ch.Kind, "subject", ch.Subject)
		return
	}
	c.emit(t, func(e *Event) {
		e.Subject, e.SchemaType, e.Permanent = ch.Subject, ch.SchemaType, ch.Permanent
		if ch.Version > 0 {
			e.Version = int32(ch.Version)
		}
		if ch.ID > 0 {
			e.SchemaID = int32(ch.ID)
		}
		if t == EventSchemaRegistered && e.SchemaType == "" {
			e.SchemaType = "AVRO" // the registry's default type, which its answers leave out
		}
		if len(ch.Messages) > 0 {
			e.Messages = slices.Clone(ch.Messages)
		}
		if len(ch.Config) > 0 {
			e.Configs = maps.Clone(ch.Config)
		}
	})
}
