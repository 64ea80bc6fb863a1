package control

import (
	"net/http"

	"github.com/fakekafka/fakekafka/api"
)

// The security endpoints of the HTTP control API:
//
//	GET    /v1/users                 SASLUsers: names and mechanisms, never passwords
//	POST   /v1/users {"name":"alice","password":"..."}  AddSASLUser (every mechanism)
//	DELETE /v1/users/{name}          RemoveSASLUser; 404 if unknown
//	GET    /v1/tls/ca.pem            the CA clients should trust (PEM); 404 without TLS
//	GET    /v1/security              Security: connected principals, recent denials
func (c cluster) registerSecurityRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/security", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.Security())
	})
	mux.HandleFunc("GET /v1/users", func(w http.ResponseWriter, r *http.Request) {
		httpJSON(w, http.StatusOK, c.SASLUsers())
	})
	mux.HandleFunc("POST /v1/users", func(w http.ResponseWriter, r *http.Request) {
		var body api.UserRequest
		if err := decodeBody(w, r, &body); err != nil {
			httpFail(w, err)
			return
		}
		if err := c.AddSASLUser(body.Name, body.Password); err != nil {
			httpFail(w, httpErrorf(http.StatusBadRequest, "%s", err.Error()))
			return
		}
		httpJSON(w, http.StatusOK, c.SASLUsers())
	})
	mux.HandleFunc("DELETE /v1/users/{name}", func(w http.ResponseWriter, r *http.Request) {
		if !c.RemoveSASLUser(r.PathValue("name")) {
			httpFail(w, httpErrorf(http.StatusNotFound, "unknown SASL user %q", r.PathValue("name")))
			return
		}
		httpJSON(w, http.StatusOK, c.SASLUsers())
	})
	mux.HandleFunc("GET /v1/tls/ca.pem", func(w http.ResponseWriter, r *http.Request) {
		ca := c.TLSCA()
		if ca == nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "no listener speaks TLS, or the TLS directory has no ca.pem"))
			return
		}
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Write(ca)
	})
}
