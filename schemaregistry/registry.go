// Package schemaregistry is fakekafka's schema registry: Confluent Schema
// Registry's REST API (the paths, content types, status codes and
// error_code bodies its clients and serialisers use), with the registry's
// content kept as records of the replicated, compacted _schemas topic in
// Confluent's own key/value format, so that the content survives a leader
// failover of that topic and, with --data-dir, a restart.
//
// The package knows nothing of brokers: a Store appends records (acks=all)
// and replays them into a State once committed; server implements the
// Store on the _schemas partition. Schema parsing, normalisation and the
// compatibility rules of each type are package schema's.
package schemaregistry

import (
	"context"
	"log/slog"
)

// Record is one record of the _schemas topic: a JSON key and a JSON value
// in Confluent's format; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Store is where the registry keeps its records: the _schemas topic.
type Store interface {
	// State is the content replayed from the topic so far.
	State() *State
	// Write appends recs (acks=all) and returns once they are committed
	// and replayed into State(), or with the error that kept them out
	// (nothing of a failed write is applied).
	Write(ctx context.Context, recs []Record) error
}

// ChangeKind names what a Change reports.
type ChangeKind string

// Changes the registry reports through Options.Observe.
const (
	SchemaRegistered   ChangeKind = "schema_registered"
	SchemaDeleted      ChangeKind = "schema_deleted"
	SchemaIncompatible ChangeKind = "schema_incompatible"
	ConfigChanged      ChangeKind = "schema_config_changed"
)

// Change is one thing that happened in the registry, for events.
type Change struct {
	Kind       ChangeKind
	Subject    string
	Version    int
	ID         int
	SchemaType string
	Permanent  bool     // SchemaDeleted: a hard delete
	Messages   []string // SchemaIncompatible: why
	// ConfigChanged: what changed, "compatibility" or "mode", and its new
	// value ("" when a subject's own setting was deleted).
	Config map[string]string
}

// Options configures a Registry.
type Options struct {
	// Authenticate checks HTTP basic credentials; nil: no authentication.
	Authenticate func(user, password string) bool
	// Observe is told of every Change; nil: nobody.
	Observe func(Change)
	Logger  *slog.Logger
}
