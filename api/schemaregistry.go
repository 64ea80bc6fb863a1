package api

import "time"

// The schema registry's control types: its fault rules
// (/v1/schema-registry/faults) and its content as GET /v1/schema-registry
// shows it.

// SchemaRegistryFault describes registry requests to fail or delay, as
// server.Cluster.InjectSchemaRegistryFault takes it:
//
//	c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "POST", Path: "/subjects/*/versions",
//		ErrorCode: 50001, Count: 2})
//
// A rule that fires holds the request for Delay, then answers Status with
// Confluent's error body {"error_code":ErrorCode,"message":Message}, or,
// with neither Status nor ErrorCode, serves the request normally.
type SchemaRegistryFault struct {
	// Method is the HTTP method to match ("POST"); "" for any.
	Method string
	// Path is the request path to match, segment by segment: "*" stands
	// for one segment, a final "**" for any number of them
	// ("/subjects/*/versions", "/schemas/ids/*", "/subjects/**"); "" for
	// any path. The query string does not count.
	Path string
	// Status is the HTTP status to answer; 0 takes it from ErrorCode
	// (Confluent's codes start with their status: 50001 is a 500).
	Status int
	// ErrorCode is the body's error_code; 0 takes Status.
	ErrorCode int
	// Message is the body's message; "" for Confluent's text of the code
	// (or a plain one naming the fault).
	Message string
	// Count is how many requests the rule fires on; 0 until removed.
	Count int
	// Delay holds each matching request this long (on the cluster's
	// clock) before it is answered.
	Delay time.Duration
}

// SchemaRegistryFaultRequest is POST /v1/schema-registry/faults: a
// SchemaRegistryFault in JSON form.
type SchemaRegistryFaultRequest struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Status      int    `json:"status"`
	ErrorCode   int    `json:"error_code"`
	Message     string `json:"message"`
	Count       int    `json:"count"`
	DelayMillis int64  `json:"delay_ms"`
}

// SchemaRegistryFaultState is a registry fault rule and how often it
// fired, as GET /v1/schema-registry/faults lists it. Status and ErrorCode
// are 0 for a rule that only delays.
type SchemaRegistryFaultState struct {
	ID          string `json:"id"`
	Method      string `json:"method"` // "" for any
	Path        string `json:"path"`   // "" for any
	Status      int    `json:"status"`
	ErrorCode   int    `json:"error_code"`
	Message     string `json:"message"`
	Count       int    `json:"count"`
	DelayMillis int64  `json:"delay_ms"`
	Hits        int    `json:"hits"`
	// Remaining is how many more times the rule can fire; -1 when it fires
	// until removed.
	Remaining int `json:"remaining"`
}

// SchemaRegistryState is the registry's content: GET /v1/schema-registry.
type SchemaRegistryState struct {
	// URL is where the registry's REST API listens.
	URL string `json:"url"`
	// Compatibility and Mode are the global settings.
	Compatibility string `json:"compatibility"`
	Mode          string `json:"mode"`
	// Subjects in name order, soft-deleted ones included (Deleted).
	Subjects []SchemaSubjectState `json:"subjects"`
}

// SchemaSubjectState is one subject and its versions, oldest first.
type SchemaSubjectState struct {
	Subject string `json:"subject"`
	// Compatibility and Mode are the subject's own settings; "" when it
	// follows the global ones.
	Compatibility string `json:"compatibility,omitempty"`
	Mode          string `json:"mode,omitempty"`
	// Deleted says every version is soft-deleted.
	Deleted  bool                 `json:"deleted"`
	Versions []SchemaVersionState `json:"versions"`
}

// SchemaVersionState is one version of a subject.
type SchemaVersionState struct {
	Version    int    `json:"version"`
	ID         int    `json:"id"`
	SchemaType string `json:"schema_type"` // AVRO, PROTOBUF or JSON
	// Schema is the text as the registry stores and answers it.
	Schema     string            `json:"schema"`
	References []SchemaReference `json:"references,omitempty"`
	Deleted    bool              `json:"deleted"` // soft-deleted
}

// SchemaReference is a schema's reference to another subject's version.
type SchemaReference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}
