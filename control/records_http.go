package control

import (
	"net/http"
	"strconv"

	"github.com/fakekafka/fakekafka/server"
)

// defaultRecordPage is how many records a records request returns without max.
const defaultRecordPage = 100

// registerRecordRoutes adds the record browser's endpoint:
//
//	GET /v1/partitions/{topic}/{partition}/replicas/{id}/records?offset=N&max=M
//	    ReplicaRecords: up to M (default 100, at most 1000) records of that
//	    replica's own log from offset N (default its log start), with
//	    transaction markers, aborted and open transactions, and what is
//	    at or past the partition's HW marked; next_offset continues.
//
// 404 for an unknown topic, partition, broker or replica; 400 for a bad
// offset or max.
func (c cluster) registerRecordRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/partitions/{topic}/{partition}/replicas/{id}/records", func(w http.ResponseWriter, r *http.Request) {
		topic, index, id, err := c.pathReplica(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		q := r.URL.Query()
		offset, limit := int64(0), defaultRecordPage
		if s := q.Get("offset"); s != "" {
			if offset, err = strconv.ParseInt(s, 10, 64); err != nil || offset < 0 {
				httpError(w, http.StatusBadRequest, "offset "+strconv.Quote(s)+" is not a non-negative integer")
				return
			}
		}
		if s := q.Get("max"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > server.MaxReplicaRecords {
				httpError(w, http.StatusBadRequest, "max "+strconv.Quote(s)+" must be between 1 and "+strconv.Itoa(server.MaxReplicaRecords))
				return
			}
			limit = n
		}
		res, err := c.ReplicaRecords(topic, index, id, offset, limit)
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, res)
	})
}
