package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/twmb/franz-go/pkg/kerr"
)

// registerReassignRoutes adds reassignment to the control API:
//
//	POST /v1/partitions/{topic}/{partition}/reassign {"replicas":[1,2,4]}
//	    ReassignPartition; {"replicas":null} is CancelReassignment. Answers
//	    the partition's state; 400 for a bad target or nothing to cancel.
//	GET /v1/reassignments
//	    {"reassignments":[ReassignmentState...]}: those in progress.
func (c *Cluster) registerReassignRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/reassign", c.controlReassign)
	mux.HandleFunc("GET /v1/reassignments", func(w http.ResponseWriter, r *http.Request) {
		rs := c.Reassignments()
		if rs == nil {
			rs = []ReassignmentState{}
		}
		httpJSON(w, http.StatusOK, struct {
			Reassignments []ReassignmentState `json:"reassignments"`
		}{rs})
	})
}

func (c *Cluster) controlReassign(w http.ResponseWriter, r *http.Request) {
	topic, index, err := c.pathPartition(r)
	if err != nil {
		httpFail(w, err)
		return
	}
	var body struct {
		Replicas json.RawMessage `json:"replicas"` // "null" when null, nil when missing
	}
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.Replicas == nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, `the body needs "replicas": a list of broker ids, or null to cancel`))
		return
	}
	var replicas []int32
	if err := json.Unmarshal(body.Replicas, &replicas); err != nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, `"replicas" must be a list of broker ids or null`))
		return
	}
	if replicas == nil {
		err = c.CancelReassignment(topic, index)
	} else {
		err = c.ReassignPartition(topic, index, replicas)
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		httpFail(w, httpErrorf(http.StatusNotFound, "%v", err)) // deleted meanwhile
		return
	}
	if err != nil {
		httpFail(w, err)
		return
	}
	c.answerPartition(w, topic, index)
}
