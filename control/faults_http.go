package control

import (
	"net/http"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// Names on the control surfaces (API and error names or numbers) and the
// HTTP handlers of /v1/faults.

// registerFaultRoutes adds the fault endpoints to the control API:
//
//	POST   /v1/faults       {"api":"Produce","error":"NOT_ENOUGH_REPLICAS","topic":"t","partition":0,
//	                         "broker":1,"client_id":"c","count":3,"delay_ms":0,"drop_connection":false,
//	                         "after_work":false}   InjectFault; 201 with the rule's FaultState
//	GET    /v1/faults       {"faults":[FaultState...]} in insertion order
//	GET    /v1/faults/{id}  one FaultState
//	DELETE /v1/faults/{id}  RemoveFault; 200 with the rule's final FaultState
//
// "error" and "api" may be names or numbers, as strings or JSON numbers.
// A body InjectFault refuses is 400; an unknown id is 404.
func (c cluster) registerFaultRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/faults", c.controlInjectFault)
	mux.HandleFunc("GET /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Faults []api.FaultState `json:"faults"`
		}{c.Faults()})
	})
	mux.HandleFunc("GET /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		rule := c.FaultRule(r.PathValue("id"))
		if rule == nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", r.PathValue("id")))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
	mux.HandleFunc("DELETE /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rule := c.FaultRule(id)
		if rule == nil || !c.RemoveFault(id) {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", id))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
}

func (c cluster) controlInjectFault(w http.ResponseWriter, r *http.Request) {
	var body api.FaultRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	delay, err := faultDelay(body.DelayMillis)
	if err != nil {
		httpFail(w, err)
		return
	}
	if body.Broker != 0 {
		if err := c.knownBrokers(body.Broker); err != nil {
			httpFail(w, err)
			return
		}
	}
	rule, err := c.InjectFault(server.Fault{
		API: string(body.API), Broker: body.Broker, Topic: body.Topic, Partition: body.Partition, ClientID: body.ClientID,
		Error: string(body.Error), Count: body.Count, Delay: delay,
		DropConnection: body.DropConnection, AfterWork: body.AfterWork,
	})
	if err != nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, "%s", err.Error()))
		return
	}
	httpJSON(w, http.StatusCreated, rule.State())
}

// faultDelay is a fault request's delay_ms, refused outside [0, 1 h].
func faultDelay(ms int64) (time.Duration, error) {
	if ms < 0 || ms > int64(time.Hour/time.Millisecond) {
		return 0, httpErrorf(http.StatusBadRequest, "delay_ms %d must be between 0 and 3600000", ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
