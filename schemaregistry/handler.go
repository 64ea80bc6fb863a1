package schemaregistry

import (
	"net/http"
	"sync"
)

// Registry serves Confluent Schema Registry's REST API over a Store.
type Registry struct {
	store Store
	opts  Options
	// mu serialises writes: each computes its records from the state,
	// writes them and waits for their replay before the next starts.
	mu sync.Mutex
}

// New is a registry over store.
func New(store Store, opts Options) *Registry { return &Registry{store: store, opts: opts} }

// ServeHTTP answers one REST request.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}
