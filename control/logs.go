package control

import (
	"fmt"
	"net/http"
)

// registerLogRoutes adds retention and compaction on demand:
//
//	POST /v1/partitions/{topic}/{partition}/clean   CleanPartition
//	POST /v1/topics/{topic}/clean                   CleanTopic
//
// Both answer 200 with a CleanResult per partition (a list for a topic).
func (c cluster) registerLogRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/clean", func(w http.ResponseWriter, r *http.Request) {
		topic, index, err := c.pathPartition(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		res, err := c.CleanPartition(topic, index)
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /v1/topics/{topic}/clean", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("topic")
		if _, ok := c.Topic(name); !ok {
			httpError(w, http.StatusNotFound, fmt.Sprintf("unknown topic %q", name))
			return
		}
		res, err := c.CleanTopic(name)
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, res)
	})
}
