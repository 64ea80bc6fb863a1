package control

import (
	"errors"
	"net/http"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The controller's endpoints of the HTTP control API:
//
//	POST /v1/brokers/{id}/stop {"mode":"clean"|"crash"|"powerloss"}  StopBroker (mode defaults to crash)
//	POST /v1/brokers/{id}/start                                      StartBroker
//	POST /v1/brokers/{id}/isolate                                    IsolateBroker (zombie leader)
//	POST /v1/brokers/{id}/heal                                       HealBroker
//	POST /v1/partitions/{topic}/{partition}/replicas/{id}/fetch {"up_to":5}  StepReplica (one fetch; up_to optional)
//	POST /v1/partitions/{topic}/{partition}/elect {"leader":2,"unclean":false}
//	     ElectLeader; omit leader for Kafka's own choice, {"preferred":true} for the preferred leader
//
// Broker changes answer 200 with the new ClusterState, elections with the
// partition's PartitionState. Stopping a stopped broker or starting a
// running one is 409; an election Kafka would refuse is 409 with Kafka's
// error name in the message.
func (c cluster) registerControllerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/brokers/{id}/stop", c.controlStopBroker)
	mux.HandleFunc("POST /v1/brokers/{id}/start", c.controlStartBroker)
	mux.HandleFunc("POST /v1/brokers/{id}/isolate", c.controlBroker(c.IsolateBroker))
	mux.HandleFunc("POST /v1/brokers/{id}/heal", c.controlBroker(c.HealBroker))
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/elect", c.controlElect)
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/replicas/{id}/fetch", c.controlStep)
}

func (c cluster) pathBroker(r *http.Request) (int32, error) {
	id, err := pathInt32(r, "id")
	if err != nil {
		return 0, err
	}
	if _, ok := c.Broker(id); !ok {
		return 0, httpErrorf(http.StatusNotFound, "unknown broker %d", id)
	}
	return id, nil
}

func brokerStateError(err error) error {
	if errors.Is(err, server.ErrBrokerState) {
		return httpErrorf(http.StatusConflict, "%s", err.Error())
	}
	return err
}

func (c cluster) controlStopBroker(w http.ResponseWriter, r *http.Request) {
	id, err := c.pathBroker(r)
	if err != nil {
		httpFail(w, err)
		return
	}
	body := api.StopRequest{Mode: api.StopCrash}
	if r.ContentLength != 0 {
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
	}
	if err := c.StopBroker(id, body.Mode); err != nil {
		httpFail(w, brokerStateError(err))
		return
	}
	httpJSON(w, http.StatusOK, c.State())
}

func (c cluster) controlStartBroker(w http.ResponseWriter, r *http.Request) {
	c.controlBroker(c.StartBroker)(w, r)
}

// controlBroker serves a bodyless broker action.
func (c cluster) controlBroker(action func(int32) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := c.pathBroker(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		if err := action(id); err != nil {
			httpFail(w, brokerStateError(err))
			return
		}
		httpJSON(w, http.StatusOK, c.State())
	}
}

func (c cluster) controlElect(w http.ResponseWriter, r *http.Request) {
	topic, index, err := c.pathPartition(r)
	if err != nil {
		httpFail(w, err)
		return
	}
	var body api.ElectRequest
	if r.ContentLength != 0 {
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
	}
	switch {
	case body.Preferred && (body.Leader != nil || body.Unclean):
		err = httpErrorf(http.StatusBadRequest, `"preferred" excludes "leader" and "unclean"`)
	case body.Preferred:
		err = c.ElectPreferredLeader(topic, index)
	default:
		leader := int32(-1)
		if body.Leader != nil {
			if err = c.knownBrokers(*body.Leader); err != nil {
				break // 404
			}
			if err = c.replicaOf(topic, index, *body.Leader); err != nil {
				err = httpErrorf(http.StatusBadRequest, "%s", err.Error())
				break
			}
			leader = *body.Leader
		}
		_, err = c.ElectLeader(topic, index, leader, body.Unclean)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		err = httpErrorf(http.StatusConflict, "%s", err.Error())
	}
	if err != nil {
		httpFail(w, err)
		return
	}
	c.answerPartition(w, topic, index)
}

func (c cluster) controlStep(w http.ResponseWriter, r *http.Request) {
	topic, index, id, err := c.pathReplica(r)
	var body api.StepRequest
	if err == nil && r.ContentLength != 0 {
		err = decodeBody(w, r, &body)
	}
	if err != nil {
		httpFail(w, err)
		return
	}
	upTo := int64(-1)
	if body.UpTo != nil {
		if *body.UpTo < 0 {
			httpFail(w, httpErrorf(http.StatusBadRequest, "up_to must not be negative"))
			return
		}
		upTo = *body.UpTo
	}
	if err := c.StepReplica(topic, index, id, upTo); err != nil {
		httpFail(w, httpErrorf(http.StatusConflict, "%s", err.Error()))
		return
	}
	c.answerPartition(w, topic, index)
}
