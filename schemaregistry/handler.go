package schemaregistry

import "net/http"

// Registry serves Confluent Schema Registry's REST API over a Store.
type Registry struct {
	store Store
	opts  Options
}

// New is a registry over store.
func New(store Store, opts Options) *Registry { return &Registry{store: store, opts: opts} }

// ServeHTTP answers one REST request.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}
