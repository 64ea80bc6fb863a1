package control

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/fakekafka/fakekafka/server"
)

// The built-in OAuth issuer's endpoints (Config.OAuth.Issuer), what a
// client's OIDC settings point at (sasl.oauthbearer.token.endpoint.url,
// sasl.oauthbearer.jwks.endpoint.url):
//
//	POST /v1/oauth/token  OAuth 2.0 client credentials grant (RFC 6749 4.4):
//	                      a form with grant_type=client_credentials and an
//	                      optional scope; the client id and secret in HTTP
//	                      Basic auth or as client_id and client_secret.
//	                      Answers {"access_token","token_type":"Bearer",
//	                      "expires_in"[,"scope"]}; errors are RFC 6749's
//	                      {"error":"invalid_client"|"invalid_request"|
//	                      "unsupported_grant_type","error_description"}.
//	GET  /v1/oauth/jwks   the issuer's JWKS (its public signing key)
//
// Both answer 404 when the issuer is off.
func (c cluster) registerOAuthRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/oauth/token", c.oauthToken)
	mux.HandleFunc("GET /v1/oauth/jwks", func(w http.ResponseWriter, r *http.Request) {
		doc, err := c.OAuthJWKS()
		if err != nil {
			httpFail(w, httpErrorf(http.StatusNotFound, "%s", err.Error()))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
}

// oauthError answers an RFC 6749 section 5.2 error.
func oauthError(w http.ResponseWriter, code int, kind, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	httpJSON(w, code, struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}{kind, desc})
}

func (c cluster) oauthToken(w http.ResponseWriter, r *http.Request) {
	if _, err := c.OAuthJWKS(); err != nil {
		httpFail(w, httpErrorf(http.StatusNotFound, "%s", err.Error()))
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form: "+err.Error())
		return
	}
	form := r.PostForm
	switch gt := form.Get("grant_type"); gt {
	case "client_credentials":
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type is missing")
		return
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+gt+" is not supported: only client_credentials")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic && form.Get("client_id") != "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the client authenticated twice: Basic auth and client_id")
		return
	}
	if !basic {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "no client credentials: use HTTP Basic auth or client_id and client_secret")
		return
	}
	tok, life, err := c.ClientCredentialsToken(id, secret, form.Get("scope"))
	if basic && errors.Is(err, server.ErrOAuthInvalidClient) {
		// RFC 6749 2.3.1 form-encodes the id and secret inside Basic auth;
		// clients that follow it send %xx escapes, most others do not.
		uid, e1 := url.QueryUnescape(id)
		usecret, e2 := url.QueryUnescape(secret)
		if e1 == nil && e2 == nil && (uid != id || usecret != secret) {
			tok, life, err = c.ClientCredentialsToken(uid, usecret, form.Get("scope"))
		}
	}
	switch {
	case errors.Is(err, server.ErrOAuthInvalidClient):
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="fakekafka"`)
		}
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client id or wrong secret")
		return
	case err != nil:
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int64(life.Seconds())}
	if s := strings.TrimSpace(form.Get("scope")); s != "" {
		resp["scope"] = s
	}
	w.Header().Set("Cache-Control", "no-store")
	httpJSON(w, http.StatusOK, resp)
}
