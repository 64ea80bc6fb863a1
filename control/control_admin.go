package control

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fakekafka/fakekafka/api"
	"github.com/twmb/franz-go/pkg/kerr"
)

// registerAdminRoutes adds partition changes to the control API:
//
//	POST /v1/topics/{topic}/partitions {"count":3,"assignment":[[1,2],[2,3]]}
//	    CreatePartitions (assignment optional: one replica list per new
//	    partition). Answers the topic's state; 400 with Kafka's error name
//	    for a bad count or assignment, 404 for an unknown topic.
//	POST /v1/partitions/{topic}/{partition}/reassign {"replicas":[1,2,4]}
//	    ReassignPartition; {"replicas":null} is CancelReassignment. Answers
//	    the partition's state; 400 for a bad target or nothing to cancel.
//	GET /v1/reassignments
//	    {"reassignments":[ReassignmentState...]}: those in progress.
func (c cluster) registerAdminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/topics/{topic}/partitions", c.controlCreatePartitions)
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/reassign", c.controlReassign)
	mux.HandleFunc("GET /v1/reassignments", func(w http.ResponseWriter, r *http.Request) {
		rs := c.Reassignments()
		if rs == nil {
			rs = []api.ReassignmentState{}
		}
		httpJSON(w, http.StatusOK, struct {
			Reassignments []api.ReassignmentState `json:"reassignments"`
		}{rs})
	})
}

func (c cluster) controlReassign(w http.ResponseWriter, r *http.Request) {
	topic, index, err := c.pathPartition(r)
	if err != nil {
		httpFail(w, err)
		return
	}
	var body api.ReassignRequest // Replicas "null" when null, nil when missing
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
	if err := c.knownBrokers(replicas...); err != nil {
		httpFail(w, err)
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

func (c cluster) controlCreatePartitions(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("topic")
	var body api.CreatePartitionsRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.Count == nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, `the body needs "count": the new number of partitions`))
		return
	}
	if _, ok := c.Topic(name); !ok {
		httpFail(w, httpErrorf(http.StatusNotFound, "unknown topic %q", name))
		return
	}
	for _, rs := range body.Assignment {
		if err := c.knownBrokers(rs...); err != nil {
			httpFail(w, err)
			return
		}
	}
	err := c.CreatePartitions(name, *body.Count, body.Assignment)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		httpFail(w, httpErrorf(http.StatusNotFound, "unknown topic %q", name))
		return
	}
	if err != nil {
		httpFail(w, err)
		return
	}
	httpJSON(w, http.StatusOK, topicState(c.State(), name))
}

// topicState picks topic name out of a snapshot (empty if it is not there).
func topicState(s api.ClusterState, name string) api.TopicState {
	for _, t := range s.Topics {
		if t.Name == name {
			return t
		}
	}
	return api.TopicState{}
}

// pauseAhead reports whether a pause (or resume) of broker's replica of
// topic/index that does not exist yet is allowed: a pause if the broker
// and partition exist, a resume if such a pause is pending.
func (c cluster) pauseAhead(topic string, index, broker int32, pause bool) bool {
	if _, ok := c.Partition(topic, index); !ok {
		return false
	}
	if _, ok := c.Broker(broker); !ok {
		return false
	}
	return pause || c.ReplicaPaused(topic, index, broker)
}
