package control

import (
	"net/http"

	"github.com/fakekafka/fakekafka/api"
)

// registerGroupRoutes adds the group endpoints to the control API:
//
//	GET /v1/groups          {"groups":[GroupState...]}
//	GET /v1/groups/{group}  GroupState; 404 for an unknown group
func (c cluster) registerGroupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/groups", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Groups []api.GroupState `json:"groups"`
		}{c.Groups()})
	})
	mux.HandleFunc("GET /v1/groups/{group}", func(w http.ResponseWriter, r *http.Request) {
		gs, ok := c.Group(r.PathValue("group"))
		if !ok {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown group %q (or its coordinator is down)", r.PathValue("group")))
			return
		}
		httpJSON(w, http.StatusOK, gs)
	})
}
