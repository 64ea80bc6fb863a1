// Package control serves a server.Cluster over HTTP: the JSON control API
// whose paths are part of fakekafka's contract, the dashboard and the
// event stream. It uses only server's exported API, so whatever a user can
// do over HTTP can be done from Go; the JSON shapes are package api's.
//
//	srv := httptest.NewServer(control.Handler(c))
package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// maxControlBody caps a control request body.
const maxControlBody = 1 << 20

// Handler returns the HTTP control API of c, whose paths are part of the
// public contract:
//
//	GET  /v1/cluster                                              ClusterState
//	POST /v1/partitions/{topic}/{partition}/replicas/{id}/pause   PauseReplica
//	POST /v1/partitions/{topic}/{partition}/replicas/{id}/resume  ResumeReplica
//	POST /v1/partitions/{topic}/{partition}/isr {"isr":[1,2]}     SetISR
//	GET  /v1/groups, /v1/groups/{group}                           Groups, Group (groups.go)
//	GET  /healthz, /readyz, /v1/listeners; PUT /v1/listeners/{name}  (control_listeners.go)
//	GET  /v1/events, /v1/events/stream                            Events (events_http.go)
//	GET  /                                                        the dashboard (dashboard.go)
//	GET  /v1/clock                                                ClockState (clock.go)
//	POST /v1/clock/advance {"ms":N}                               AdvanceClock
//	GET  /v1/acls, POST /v1/acls                                  ACLState, CreateACLs (acls_http.go)
//	GET  /v1/quotas, POST /v1/quotas                              QuotaState, AlterClientQuotas (quotas_http.go)
//	GET, POST /v1/topics; GET, DELETE /v1/topics/{topic}; GET, PATCH /v1/topics/{topic}/configs  (topics_http.go)
//	POST /v1/oauth/token, GET /v1/oauth/jwks                    the built-in OAuth issuer (oauth_http.go)
//	GET  /v1/partitions/{topic}/{partition}/replicas/{id}/records  ReplicaRecords (records_http.go)
//	GET  /v1/schema-registry; GET, POST, DELETE /v1/schema-registry/faults[/{id}]  (schema_registry_http.go)
//
// A partition change answers 200 with the partition's new PartitionState.
// Every error is a JSON object {"error":"..."}: 400 for a malformed body
// (unknown keys and keys in another case included) or path number, 404 for
// an unknown topic, partition, broker or path (a broker named in a body
// too), 405 for a wrong method (with Allow), 413 for a body over 1 MiB.
//
// Every route calls only c's exported methods: whatever a user can do over
// HTTP can be done from Go.
func Handler(cl *server.Cluster) http.Handler {
	c := cluster{cl}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/cluster", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.State())
	})
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/replicas/{id}/pause", c.controlPause(true))
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/replicas/{id}/resume", c.controlPause(false))
	mux.HandleFunc("POST /v1/partitions/{topic}/{partition}/isr", c.controlSetISR)
	c.registerControllerRoutes(mux)
	c.registerFaultRoutes(mux)
	c.registerGroupRoutes(mux)
	c.registerTransactionRoutes(mux)
	c.registerListenerRoutes(mux)
	c.registerEventRoutes(mux)
	c.registerSecurityRoutes(mux)
	c.registerOAuthRoutes(mux)
	c.registerDashboardRoutes(mux)
	c.registerClockRoutes(mux)
	c.registerLogRoutes(mux)
	c.registerAdminRoutes(mux)
	c.registerACLRoutes(mux)
	c.registerQuotaRoutes(mux)
	c.registerChaosRoutes(mux)
	c.registerTopicRoutes(mux)
	c.registerRecordRoutes(mux)
	c.registerSchemaRegistryRoutes(mux)
	return jsonErrors{mux}
}

// jsonErrors turns the mux's own plain-text 404 and 405 answers into JSON
// ones, so every error a client sees has the same shape.
type jsonErrors struct{ mux *http.ServeMux }

func (j jsonErrors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := j.mux.Handler(r)
	if pattern != "" {
		j.mux.ServeHTTP(w, r)
		return
	}
	// No pattern: h is the mux's not-found or method-not-allowed handler.
	// Run it against a recorder only to learn which.
	rec := &statusRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	switch rec.code {
	case http.StatusMethodNotAllowed:
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		httpError(w, rec.code, fmt.Sprintf("method %s not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	}
}

// statusRecorder keeps the status and headers of a response and drops its
// body.
type statusRecorder struct {
	header http.Header
	code   int
}

func (s *statusRecorder) Header() http.Header { return s.header }

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}

// cluster is the server's Cluster with the control API's helpers.
type cluster struct{ *server.Cluster }

// controlError is an error with the HTTP status it answers.
type controlError struct {
	code int
	msg  string
}

func (e *controlError) Error() string { return e.msg }

func httpErrorf(code int, format string, args ...any) error {
	return &controlError{code, fmt.Sprintf(format, args...)}
}

// httpFail answers err as JSON: its own status for a controlError, 404 for
// an unknown partition, else 400.
func httpFail(w http.ResponseWriter, err error) {
	var ce *controlError
	switch {
	case errors.As(err, &ce):
		httpError(w, ce.code, ce.msg)
	case errors.Is(err, server.ErrUnknownPartition):
		httpError(w, http.StatusNotFound, err.Error())
	default:
		httpError(w, http.StatusBadRequest, err.Error())
	}
}

func httpError(w http.ResponseWriter, code int, msg string) {
	httpJSON(w, code, struct {
		Error string `json:"error"`
	}{msg})
}

func httpJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// pathPartition resolves {topic}/{partition} to an existing partition.
func (c cluster) pathPartition(r *http.Request) (string, int32, error) {
	name := r.PathValue("topic")
	index, err := pathInt32(r, "partition")
	if err != nil {
		return "", 0, err
	}
	if _, ok := c.Topic(name); !ok {
		return "", 0, httpErrorf(http.StatusNotFound, "unknown topic %q", name)
	}
	if _, ok := c.Partition(name, index); !ok {
		return "", 0, httpErrorf(http.StatusNotFound, "topic %q has no partition %d", name, index)
	}
	return name, index, nil
}

func pathInt32(r *http.Request, key string) (int32, error) {
	s := r.PathValue(key)
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, httpErrorf(http.StatusBadRequest, "%s %q is not a non-negative 32-bit integer", key, s)
	}
	return int32(n), nil
}

// pathReplica resolves {topic}/{partition}/replicas/{id} to an existing
// replica.
func (c cluster) pathReplica(r *http.Request) (string, int32, int32, error) {
	topic, index, err := c.pathPartition(r)
	if err != nil {
		return "", 0, 0, err
	}
	id, err := pathInt32(r, "id")
	if err == nil {
		err = c.replicaOf(topic, index, id)
	}
	return topic, index, id, err
}

// replicaOf checks that broker exists and holds a replica of topic/index.
func (c cluster) replicaOf(topic string, index, broker int32) error {
	if _, ok := c.Broker(broker); !ok {
		return httpErrorf(http.StatusNotFound, "unknown broker %d", broker)
	}
	ps, ok := c.Partition(topic, index)
	if !ok {
		return httpErrorf(http.StatusNotFound, "unknown topic or partition %s/%d", topic, index)
	}
	if !slices.ContainsFunc(ps.Replicas, func(r api.ReplicaState) bool { return r.Broker == broker }) {
		return httpErrorf(http.StatusNotFound, "broker %d has no replica of %s/%d", broker, topic, index)
	}
	return nil
}

// decodeBody reads exactly one JSON value of at most maxControlBody bytes
// into v, refusing unknown fields and keys in another case than the
// documented one (api.DecodeStrict).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxControlBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return httpErrorf(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", tooBig.Limit)
	case err != nil:
		return httpErrorf(http.StatusBadRequest, "cannot read the request body: %v", err)
	case len(bytes.TrimSpace(raw)) == 0:
		return httpErrorf(http.StatusBadRequest, "request body is empty; expected a JSON object")
	}
	if err := api.DecodeStrict(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return httpErrorf(http.StatusBadRequest, "malformed request body: %q must be %s, not a JSON %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return httpErrorf(http.StatusBadRequest, "malformed request body: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// jsonKind names what JSON value decodes into t, for error messages that
// speak JSON rather than Go.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}

// answerPartition answers 200 with the partition's state after a change.
func (c cluster) answerPartition(w http.ResponseWriter, topic string, index int32) {
	ps, ok := c.Partition(topic, index)
	if !ok { // deleted meanwhile
		httpFail(w, httpErrorf(http.StatusNotFound, "unknown topic or partition %s/%d", topic, index))
		return
	}
	httpJSON(w, http.StatusOK, ps)
}

func (c cluster) controlPause(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		topic, index, id, err := c.pathReplica(r)
		if err != nil && c.pauseAhead(topic, index, id, paused) {
			err = nil // a pause ahead of the replica a reassignment adds, or its undoing
		}
		if err == nil {
			if paused {
				err = c.PauseReplica(topic, index, id)
			} else {
				err = c.ResumeReplica(topic, index, id)
			}
		}
		if err != nil {
			httpFail(w, err)
			return
		}
		c.answerPartition(w, topic, index)
	}
}

func (c cluster) controlSetISR(w http.ResponseWriter, r *http.Request) {
	topic, index, err := c.pathPartition(r)
	if err != nil {
		httpFail(w, err)
		return
	}
	var body api.ISRRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if body.ISR == nil {
		httpFail(w, httpErrorf(http.StatusBadRequest, `missing "isr": expected {"isr":[broker ids]}`))
		return
	}
	// An unknown broker is 404 wherever it is named; a broker that holds
	// no replica of the partition makes the body wrong (400).
	if err := c.knownBrokers(*body.ISR...); err != nil {
		httpFail(w, err)
		return
	}
	if err := c.SetISR(topic, index, *body.ISR); err != nil {
		httpFail(w, err)
		return
	}
	c.answerPartition(w, topic, index)
}
