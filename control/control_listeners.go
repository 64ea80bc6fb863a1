package control

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// The listener and probe endpoints of the HTTP control API:
//
//	GET /healthz                     200 while the process serves
//	GET /readyz                      200 when Ready, else 503 saying what it waits for
//	GET /v1/listeners                Listeners
//	GET /v1/listeners/{name}         one listener
//	PUT /v1/listeners/{name} {"advertised":{"1":"HOST:PORT",...}}  SetAdvertised
//
// A PUT answers 200 with the listener's new ListenerState; an unknown
// listener is 404, a bad broker id or address 400.
func (c cluster) registerListenerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ok, why := c.Ready(); !ok {
			httpJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "waiting_for": why, "error": "not ready: " + why})
			return
		}
		httpJSON(w, http.StatusOK, map[string]any{"ready": true})
	})
	mux.HandleFunc("GET /v1/listeners", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.Listeners())
	})
	mux.HandleFunc("GET /v1/listeners/{name}", func(w http.ResponseWriter, r *http.Request) {
		ls, err := c.pathListener(r)
		if err != nil {
			httpFail(w, err)
			return
		}
		httpJSON(w, http.StatusOK, ls)
	})
	mux.HandleFunc("PUT /v1/listeners/{name}", c.controlSetAdvertised)
}

func (c cluster) pathListener(r *http.Request) (api.ListenerState, error) {
	name := r.PathValue("name")
	ls, ok := c.Listener(name)
	if !ok {
		return ls, httpErrorf(http.StatusNotFound, "unknown listener %q", name)
	}
	return ls, nil
}

func (c cluster) controlSetAdvertised(w http.ResponseWriter, r *http.Request) {
	if _, err := c.pathListener(r); err != nil {
		httpFail(w, err)
		return
	}
	var body api.AdvertisedRequest
	if err := decodeBody(w, r, &body); err != nil {
		httpFail(w, err)
		return
	}
	if len(body.Advertised) == 0 {
		httpFail(w, httpErrorf(http.StatusBadRequest, `missing "advertised": expected {"advertised":{"1":"HOST:PORT",...}} by broker id`))
		return
	}
	addrs := map[int32]string{}
	for k, v := range body.Advertised {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			httpFail(w, httpErrorf(http.StatusBadRequest, "broker id %q is not a number", k))
			return
		}
		if err := c.knownBrokers(int32(id)); err != nil {
			httpFail(w, err)
			return
		}
		addrs[int32(id)] = v
	}
	name := r.PathValue("name")
	if err := c.SetAdvertised(name, addrs); err != nil {
		if errors.Is(err, server.ErrUnknownListener) {
			err = httpErrorf(http.StatusNotFound, "%s", err.Error())
		}
		httpFail(w, err)
		return
	}
	ls, _ := c.Listener(name)
	httpJSON(w, http.StatusOK, ls)
}
