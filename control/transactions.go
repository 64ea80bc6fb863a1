package control

import (
	"net/http"

	"github.com/fakekafka/fakekafka/api"
)

// registerTransactionRoutes adds the transactions and their fault controls:
//
//	GET  /v1/transactions                                     {"transactions":[TransactionState...]}
//	POST /v1/transactions/markers/{topic}/{partition}/hold    markers to the partition wait
//	POST /v1/transactions/markers/{topic}/{partition}/release they go out
//	POST /v1/transactions/crash-coordinator-before-markers    one-shot coordinator crash
func (c cluster) registerTransactionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/transactions", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Transactions []api.TransactionState `json:"transactions"`
		}{c.Transactions()})
	})
	mux.HandleFunc("POST /v1/transactions/markers/{topic}/{partition}/hold", func(w http.ResponseWriter, r *http.Request) {
		topic, index, err := c.pathPartition(r)
		if err == nil {
			err = c.HoldTransactionMarkers(topic, index)
		}
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, struct {
			Held bool `json:"held"`
		}{true})
	})
	mux.HandleFunc("POST /v1/transactions/markers/{topic}/{partition}/release", func(w http.ResponseWriter, r *http.Request) {
		topic, index, err := c.pathPartition(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		c.ReleaseTransactionMarkers(topic, index)
		httpJSON(w, http.StatusOK, struct {
			Held bool `json:"held"`
		}{false})
	})
	mux.HandleFunc("POST /v1/transactions/crash-coordinator-before-markers", func(w http.ResponseWriter, r *http.Request) {
		c.CrashTransactionCoordinatorBeforeMarkers()
		httpJSON(w, http.StatusOK, struct {
			Armed bool `json:"armed"`
		}{true})
	})
}
