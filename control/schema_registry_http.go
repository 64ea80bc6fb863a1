package control

import (
	"net/http"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// registerSchemaRegistryRoutes adds the schema registry's controls:
//
//	GET    /v1/schema-registry              SchemaRegistryState: subjects, versions, ids, types, schemas, settings
//	POST   /v1/schema-registry/faults       {"method":"POST","path":"/subjects/*/versions","status":500,
//	                                         "error_code":50001,"message":"...","count":2,"delay_ms":0}
//	                                        InjectSchemaRegistryFault; 201 with the rule's state
//	GET    /v1/schema-registry/faults       {"faults":[SchemaRegistryFaultState...]} in insertion order
//	DELETE /v1/schema-registry/faults       ClearSchemaRegistryFaults; {"faults":[their final states]}
//	GET    /v1/schema-registry/faults/{id}  one rule
//	DELETE /v1/schema-registry/faults/{id}  RemoveSchemaRegistryFault; 200 with its final state
//
// Every path is 404 when the cluster runs no registry; a body
// InjectSchemaRegistryFault refuses is 400; an unknown id is 404.
func (c cluster) registerSchemaRegistryRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/schema-registry", func(w http.ResponseWriter, r *http.Request) {
		st, ok := c.SchemaRegistryState()
		if !ok {
			httpFail(w, errRegistryOff())
			return
		}
		httpJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("POST /v1/schema-registry/faults", c.registryOn(c.controlInjectSchemaRegistryFault))
	mux.HandleFunc("GET /v1/schema-registry/faults", c.registryOn(func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Faults []api.SchemaRegistryFaultState `json:"faults"`
		}{c.SchemaRegistryFaults()})
	}))
	mux.HandleFunc("DELETE /v1/schema-registry/faults", c.registryOn(func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Faults []api.SchemaRegistryFaultState `json:"faults"`
		}{c.ClearSchemaRegistryFaults()})
	}))
	mux.HandleFunc("GET /v1/schema-registry/faults/{id}", c.registryOn(func(w http.ResponseWriter, r *http.Request) {
		rule := c.SchemaRegistryFaultRule(r.PathValue("id"))
		if rule == nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown schema registry fault %q", r.PathValue("id")))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	}))
	mux.HandleFunc("DELETE /v1/schema-registry/faults/{id}", c.registryOn(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rule := c.SchemaRegistryFaultRule(id)
		if rule == nil || !c.RemoveSchemaRegistryFault(id) {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown schema registry fault %q", id))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	}))
}

func errRegistryOff() error {
	return httpErrorf(http.StatusNotFound, "%v", server.ErrSchemaRegistryOff)
}

// registryOn answers 404 when the cluster runs no registry, else calls h.
func (c cluster) registryOn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.SchemaRegistryURL() == "" {
			httpFail(w, errRegistryOff())
			return
		}
		h(w, r)
	}
}

func (c cluster) controlInjectSchemaRegistryFault(w http.ResponseWriter, r *http.Request) {
	var body api.SchemaRegistryFaultRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	delay, err := faultDelay(body.DelayMillis)
	if err != nil {
		httpFail(w, err)
		return
	}
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: body.Method, Path: body.Path, Status: body.Status,
		ErrorCode: body.ErrorCode, Message: body.Message, Count: body.Count, Delay: delay})
	if err != nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, "%s", err.Error()))
		return
	}
	httpJSON(w, http.StatusCreated, rule.State())
}
