package control

import (
	"errors"
	"net/http"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
)

// registerTopicRoutes adds topic administration:
//
//	GET    /v1/topics                   {"topics":[TopicState...]}
//	POST   /v1/topics {"name":"t","partitions":3,"replication_factor":3,"configs":{"min.insync.replicas":"2"}}
//	       CreateTopic, or CreateTopicAssigned with "assignment":[[1,2],[2,3]]; 201 with the TopicState
//	GET    /v1/topics/{topic}           TopicState: partitions, leaders, ISR, replicas, explicit configs
//	DELETE /v1/topics/{topic}           DeleteTopic; 200 with the TopicState it had (not the internal topics)
//	GET    /v1/topics/{topic}/configs   TopicConfigState: every config in force and its source
//	PATCH  /v1/topics/{topic}/configs {"set":{"min.insync.replicas":"2"},"delete":["retention.ms"]}
//	       AlterTopicConfig (IncrementalAlterConfigs); 200 with the new TopicConfigState
//
// Kafka validates: an existing topic is 409, an unknown topic or broker
// 404, a bad name, count, assignment or config 400, each message starting
// with Kafka's error name.
func (c cluster) registerTopicRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/topics", func(w http.ResponseWriter, r *http.Request) {
		ts := c.State().Topics
		if ts == nil {
			ts = []api.TopicState{}
		}
		httpJSON(w, http.StatusOK, struct {
			Topics []api.TopicState `json:"topics"`
		}{ts})
	})
	mux.HandleFunc("POST /v1/topics", c.controlCreateTopic)
	mux.HandleFunc("GET /v1/topics/{topic}", func(w http.ResponseWriter, r *http.Request) {
		ts, err := c.pathTopic(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, ts)
	})
	mux.HandleFunc("DELETE /v1/topics/{topic}", func(w http.ResponseWriter, r *http.Request) {
		ts, err := c.pathTopic(r)
		if err == nil && (ts.Name == "__consumer_offsets" || ts.Name == "__transaction_state") {
			// As kafka-topics.sh: the coordinators live in them.
			err = httpErrorf(http.StatusBadRequest, "topic %s is an internal topic and cannot be deleted", ts.Name)
		}
		if err == nil {
			err = topicError(c.DeleteTopic(ts.Name))
		}
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, ts)
	})
	mux.HandleFunc("GET /v1/topics/{topic}/configs", func(w http.ResponseWriter, r *http.Request) {
		ts, err := c.pathTopic(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		c.answerTopicConfig(w, ts.Name)
	})
	mux.HandleFunc("PATCH /v1/topics/{topic}/configs", func(w http.ResponseWriter, r *http.Request) {
		ts, err := c.pathTopic(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		var body api.TopicConfigRequest
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		if len(body.Set) == 0 && len(body.Delete) == 0 {
			httpFail(w, httpErrorf(http.StatusBadRequest, `the body needs "set" (config names to values) or "delete" (config names), or both`))
			return
		}
		if err := c.AlterTopicConfig(ts.Name, body.Set, body.Delete); err != nil {
			httpFail(w, topicError(err))
			return
		}
		c.answerTopicConfig(w, ts.Name)
	})
}

// pathTopic resolves {topic} to an existing topic.
func (c cluster) pathTopic(r *http.Request) (api.TopicState, error) {
	name := r.PathValue("topic")
	ts, ok := c.Topic(name)
	if !ok {
		return ts, httpErrorf(http.StatusNotFound, "unknown topic %q", name)
	}
	return ts, nil
}

func (c cluster) answerTopicConfig(w http.ResponseWriter, name string) {
	cs, ok := c.TopicConfig(name)
	if !ok { // deleted meanwhile
		httpFail(w, httpErrorf(http.StatusNotFound, "unknown topic %q", name))
		return
	}
	httpJSON(w, http.StatusOK, cs)
}

func (c cluster) controlCreateTopic(w http.ResponseWriter, r *http.Request) {
	var body api.CreateTopicRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.Name == "" {
		httpFail(w, httpErrorf(http.StatusBadRequest, `the body needs "name": the topic to create`))
		return
	}
	var err error
	if body.Assignment != nil {
		if body.Partitions != nil || body.ReplicationFactor != nil {
			httpFail(w, httpErrorf(http.StatusBadRequest, `"assignment" sets the partitions and replication factor: leave out "partitions" and "replication_factor"`))
			return
		}
		for _, rs := range body.Assignment {
			if err := c.knownBrokers(rs...); err != nil {
				httpFail(w, err)
				return
			}
		}
		err = c.CreateTopicAssigned(body.Name, body.Assignment, body.Configs)
	} else {
		partitions, rf := int32(-1), int16(-1)
		if body.Partitions != nil {
			partitions = *body.Partitions
		}
		if body.ReplicationFactor != nil {
			rf = *body.ReplicationFactor
		}
		err = c.CreateTopic(body.Name, partitions, rf, body.Configs)
	}
	if err != nil {
		httpFail(w, topicError(err))
		return
	}
	ts, _ := c.Topic(body.Name)
	httpJSON(w, http.StatusCreated, ts)
}

// topicError gives a topic change's Kafka error its HTTP status.
func topicError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		return httpErrorf(http.StatusConflict, "%s", err.Error())
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, server.ErrUnknownPartition):
		return httpErrorf(http.StatusNotFound, "%s", err.Error())
	}
	return httpErrorf(http.StatusBadRequest, "%s", err.Error())
}

// knownBrokers is 404 for the first id the cluster has no broker for:
// an unknown broker is 404 in a body as in a path.
func (c cluster) knownBrokers(ids ...int32) error {
	for _, id := range ids {
		if _, ok := c.Broker(id); !ok {
			return httpErrorf(http.StatusNotFound, "unknown broker %d", id)
		}
	}
	return nil
}
