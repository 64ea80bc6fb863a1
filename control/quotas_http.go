package control

// Client quotas over HTTP:
//
//	GET  /v1/quotas                                  QuotaState: every configured entity
//	POST /v1/quotas {"entity":{"client-id":"app"},"set":{"producer_byte_rate":1048576},"remove":["consumer_byte_rate"]}
//
// An entity maps types (user, client-id, ip) to names; null is <default>.
// POST answers the new QuotaState; a refused change is a 400 with Kafka's
// reason.

import (
	"maps"
	"net/http"
	"slices"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/quota"
)

func (c cluster) registerQuotaRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/quotas", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.QuotaState())
	})
	mux.HandleFunc("POST /v1/quotas", func(w http.ResponseWriter, r *http.Request) {
		var body api.QuotaRequest
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		var cs []quota.Component
		for _, typ := range slices.Sorted(maps.Keys(body.Entity)) {
			cs = append(cs, quota.Component{Type: typ, Name: body.Entity[typ]})
		}
		e, err := quota.ParseEntity(cs)
		if err != nil {
			httpFail(w, httpErrorf(http.StatusBadRequest, "%v", err))
			return
		}
		var ops []quota.Op
		for k, v := range body.Set {
			ops = append(ops, quota.Op{Key: k, Value: v})
		}
		for _, k := range body.Remove {
			ops = append(ops, quota.Op{Key: k, Remove: true})
		}
		if len(ops) == 0 {
			httpFail(w, httpErrorf(http.StatusBadRequest, "nothing to change: give set or remove"))
			return
		}
		if err := c.AlterClientQuotas(e, ops...); err != nil {
			httpFail(w, httpErrorf(http.StatusBadRequest, "%v", err))
			return
		}
		httpJSON(w, http.StatusOK, c.QuotaState())
	})
}
