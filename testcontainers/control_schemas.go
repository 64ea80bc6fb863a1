package fakekafka

import (
	"context"
	"net/http"
	"net/url"

	"github.com/fakekafka/fakekafka/api"
)

// The schema registry's controls (docs/schema-registry.md#controls): its
// content and its fault rules.

type (
	// SchemaRegistryState is GET /v1/schema-registry: the global settings
	// and every subject with its versions and schema text.
	SchemaRegistryState = api.SchemaRegistryState
	// SchemaSubjectState is one subject.
	SchemaSubjectState = api.SchemaSubjectState
	// SchemaVersionState is one version of a subject.
	SchemaVersionState = api.SchemaVersionState
	// SchemaRegistryFault is a registry fault rule
	// (POST /v1/schema-registry/faults): the next Count requests matching
	// Method and Path ("*" one segment, a final "**" any) answer Status with
	// ErrorCode and Message, after DelayMillis; without Status and ErrorCode
	// they are only delayed.
	SchemaRegistryFault = api.SchemaRegistryFaultRequest
	// SchemaRegistryFaultState is a registry fault rule and its hits.
	SchemaRegistryFaultState = api.SchemaRegistryFaultState
)

// SchemaRegistry returns the registry's content; an *APIError with 404
// when the container runs no registry.
func (c *Control) SchemaRegistry(ctx context.Context) (SchemaRegistryState, error) {
	var s SchemaRegistryState
	return s, c.do(ctx, http.MethodGet, "/v1/schema-registry", nil, &s)
}

// InjectSchemaRegistryFault adds a registry fault rule and returns it with
// its id.
func (c *Control) InjectSchemaRegistryFault(ctx context.Context, f SchemaRegistryFault) (SchemaRegistryFaultState, error) {
	var s SchemaRegistryFaultState
	return s, c.do(ctx, http.MethodPost, "/v1/schema-registry/faults", f, &s)
}

// SchemaRegistryFaults lists the registry fault rules in insertion order.
func (c *Control) SchemaRegistryFaults(ctx context.Context) ([]SchemaRegistryFaultState, error) {
	var out struct {
		Faults []SchemaRegistryFaultState `json:"faults"`
	}
	return out.Faults, c.do(ctx, http.MethodGet, "/v1/schema-registry/faults", nil, &out)
}

// RemoveSchemaRegistryFault removes a registry fault rule and returns its
// final state.
func (c *Control) RemoveSchemaRegistryFault(ctx context.Context, id string) (SchemaRegistryFaultState, error) {
	var s SchemaRegistryFaultState
	return s, c.do(ctx, http.MethodDelete, "/v1/schema-registry/faults/"+url.PathEscape(id), nil, &s)
}

// ClearSchemaRegistryFaults removes every registry fault rule and returns
// their final states.
func (c *Control) ClearSchemaRegistryFaults(ctx context.Context) ([]SchemaRegistryFaultState, error) {
	var out struct {
		Faults []SchemaRegistryFaultState `json:"faults"`
	}
	return out.Faults, c.do(ctx, http.MethodDelete, "/v1/schema-registry/faults", nil, &out)
}
