package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Names on the control surfaces (API and error names or numbers) and the
// HTTP handlers of /v1/faults.

// faultAPIKey resolves an API name (Kafka's, in any case, with or without
// underscores) or key number to a key the broker serves.
func faultAPIKey(name string) (int16, error) {
	key, ok := apiKeysByName()[normalizeAPIName(name)]
	if n, err := strconv.ParseInt(name, 10, 16); err == nil {
		key, ok = int16(n), kmsg.RequestForKey(int16(n)) != nil
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown API %q: use Kafka's name, such as Produce or Fetch, or the API key", name)
	case key == apiVersionsKey:
		return 0, errors.New("ApiVersions is answered before fault rules apply")
	}
	if _, served := protocol.Lookup(key); !served {
		return 0, fmt.Errorf("API %s is not served by fakekafka, so a rule for it would never fire", kmsg.NameForKey(key))
	}
	return key, nil
}

func normalizeAPIName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

var apiKeysByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{}
	for key := range int16(200) {
		if kmsg.RequestForKey(key) != nil {
			m[normalizeAPIName(kmsg.NameForKey(key))] = key
		}
	}
	m["alterpartitionreassignments"] = 45 // Kafka's name; kmsg says AlterPartitionAssignments
	return m
})

// faultErrorCode resolves a Kafka error name or code.
func faultErrorCode(s string) (int16, error) {
	code, ok := errorCodesByName()[strings.ToUpper(s)]
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		code, ok = int16(n), true
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("unknown Kafka error %q: use its name, such as NOT_ENOUGH_REPLICAS, or its code", s)
	case code == 0:
		return 0, errors.New("error NONE (0) is no error; leave the error empty for a rule that only delays or drops")
	}
	return code, nil
}

// errorName is Kafka's current name for code, or the code itself.
func errorName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return "NOT_LEADER_OR_FOLLOWER" // Kafka's name since 2.7; kerr keeps the old one
	}
	if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

var errorCodesByName = sync.OnceValue(func() map[string]int16 {
	m := map[string]int16{"NONE": 0, "NOT_LEADER_OR_FOLLOWER": kerr.NotLeaderForPartition.Code}
	for code := int16(-1); code <= 200; code++ {
		if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
			m[e.Message] = code
		}
	}
	return m
})

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
func (c *Cluster) registerFaultRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/faults", c.controlInjectFault)
	mux.HandleFunc("GET /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, struct {
			Faults []FaultState `json:"faults"`
		}{c.Faults()})
	})
	mux.HandleFunc("GET /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		rule := c.faultRule(r.PathValue("id"))
		if rule == nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", r.PathValue("id")))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
	mux.HandleFunc("DELETE /v1/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rule := c.faultRule(id)
		if rule == nil || !c.RemoveFault(id) {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown fault %q", id))
			return
		}
		httpJSON(w, http.StatusOK, rule.State())
	})
}

func (c *Cluster) faultRule(id string) *FaultRule {
	for _, r := range c.faultRules() {
		if r.id == id {
			return r
		}
	}
	return nil
}

// nameOrNumber is a JSON string or integer, kept as text.
type nameOrNumber string

func (n *nameOrNumber) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = nameOrNumber(s)
		return nil
	}
	var i int64
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("want a name or an integer, got %s", b)
	}
	*n = nameOrNumber(strconv.FormatInt(i, 10))
	return nil
}

func (c *Cluster) controlInjectFault(w http.ResponseWriter, r *http.Request) {
	var body struct {
		API            nameOrNumber `json:"api"`
		Error          nameOrNumber `json:"error"`
		Topic          string       `json:"topic"`
		Partition      *int32       `json:"partition"`
		Broker         int32        `json:"broker"`
		ClientID       string       `json:"client_id"`
		Count          int          `json:"count"`
		DelayMillis    int64        `json:"delay_ms"`
		DropConnection bool         `json:"drop_connection"`
		AfterWork      bool         `json:"after_work"`
	}
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.DelayMillis < 0 || body.DelayMillis > int64(time.Hour/time.Millisecond) {
		httpFail(w, httpErrorf(http.StatusBadRequest, "delay_ms %d must be between 0 and 3600000", body.DelayMillis))
		return
	}
	rule, err := c.InjectFault(Fault{
		API: string(body.API), Broker: body.Broker, Topic: body.Topic, Partition: body.Partition, ClientID: body.ClientID,
		Error: string(body.Error), Count: body.Count, Delay: time.Duration(body.DelayMillis) * time.Millisecond,
		DropConnection: body.DropConnection, AfterWork: body.AfterWork,
	})
	if err != nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, "%s", err.Error()))
		return
	}
	httpJSON(w, http.StatusCreated, rule.State())
}
