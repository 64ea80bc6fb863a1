package control

import (
	"net/http"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/server"
)

// registerChaosRoutes adds chaos runs:
//
//	POST   /v1/chaos          StartChaos with a chaos.Spec; {"seed":N,"actions":[...]}; 409 while a run is active
//	DELETE /v1/chaos          StopChaos; the run's ChaosReport, 404 without a run
//	GET    /v1/chaos/report   ChaosReport, 404 without a run
func (c cluster) registerChaosRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/chaos", func(w http.ResponseWriter, r *http.Request) {
		var spec chaos.Spec
		if err := decodeBody(w, r, &spec); err != nil {
			httpFail(w, err)
			return
		}
		actions, err := c.StartChaos(spec)
		switch {
		case err == server.ErrChaosRunning:
			httpError(w, http.StatusConflict, err.Error())
		case err != nil:
			httpError(w, http.StatusBadRequest, err.Error())
		default:
			seed := spec.Seed
			if s, ok := c.ChaosSeed(); ok {
				seed = s
			}
			httpJSON(w, http.StatusOK, map[string]any{"seed": seed, "actions": actions})
		}
	})
	mux.HandleFunc("DELETE /v1/chaos", func(w http.ResponseWriter, r *http.Request) {
		rep, err := c.StopChaos()
		if err != nil {
			httpError(w, http.StatusNotFound, err.Error())
			return
		}
		httpJSON(w, http.StatusOK, rep)
	})
	mux.HandleFunc("GET /v1/chaos/report", func(w http.ResponseWriter, r *http.Request) {
		rep, err := c.ChaosReport()
		if err != nil {
			httpError(w, http.StatusNotFound, err.Error())
			return
		}
		httpJSON(w, http.StatusOK, rep)
	})
}
