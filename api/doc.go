// Package api holds the public state, event and request types of fakekafka:
// the JSON shapes of the HTTP control API and the values the Go API of
// package server returns. Package server, the control handler, `fakekafka
// ctl` and the testcontainers module all use these one definitions.
//
// It is its own module and uses only the standard library, so a client
// (the testcontainers module, say) can decode the control API's answers
// without depending on the broker.
package api
