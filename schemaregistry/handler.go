package schemaregistry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Registry serves Confluent Schema Registry's REST API over a Store.
type Registry struct {
	store Store
	opts  Options
	// mu serialises writes: each computes its records from the state,
	// writes them and waits for their replay before the next starts.
	mu     sync.Mutex
	parsed parseCache
}

// New is a registry over store.
func New(store Store, opts Options) *Registry { return &Registry{store: store, opts: opts} }

// The media types Confluent's REST API reads and writes; the first is
// its default answer.
const (
	contentTypeV1      = "application/vnd.schemaregistry.v1+json"
	contentTypeDefault = "application/vnd.schemaregistry+json"
	contentTypeJSON    = "application/json"
)

// maxBody bounds a request body (a schema with its references).
const maxBody = 16 << 20

func (r *Registry) logger() *slog.Logger {
	if r.opts.Logger != nil {
		return r.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (r *Registry) observe(c Change) {
	if r.opts.Observe != nil {
		r.opts.Observe(c)
	}
}

// rawText is an answer written as it is (GET .../schema).
type rawText string

// ServeHTTP answers one REST request.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	defer func() {
		// A bug met by some input must not take the process down: the
		// request gets Confluent's generic 500 and the log says why.
		if p := recover(); p != nil {
			r.logger().Error("schema registry request panicked", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(p))
			writeJSON(w, req, http.StatusInternalServerError, &restError{http.StatusInternalServerError, http.StatusInternalServerError, "Internal Server Error"})
		}
	}()
	if r.opts.Authenticate != nil {
		user, pass, ok := req.BasicAuth()
		if !ok || !r.opts.Authenticate(user, pass) {
			w.Header().Set("WWW-Authenticate", `Basic realm="SchemaRegistry"`)
			r.fail(w, req, &restError{http.StatusUnauthorized, http.StatusUnauthorized, "Unauthorized"})
			return
		}
	}
	if req.Method == http.MethodPost || req.Method == http.MethodPut {
		if ct := req.Header.Get("Content-Type"); ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || !acceptedRequestType(mt) {
				r.fail(w, req, &restError{http.StatusUnsupportedMediaType, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type"})
				return
			}
		}
	}
	segs, err := pathSegments(req)
	if err != nil {
		r.fail(w, req, &restError{http.StatusNotFound, http.StatusNotFound, "HTTP 404 Not Found"})
		return
	}
	ans, rerr := r.route(req, segs)
	if rerr != nil {
		r.fail(w, req, rerr)
		return
	}
	if s, ok := ans.(rawText); ok {
		w.Header().Set("Content-Type", answerType(req))
		_, _ = io.WriteString(w, string(s))
		return
	}
	writeJSON(w, req, http.StatusOK, ans)
}

func acceptedRequestType(mt string) bool {
	switch mt {
	case contentTypeV1, contentTypeDefault, contentTypeJSON, "application/octet-stream":
		return true
	}
	return false
}

// answerType is the media type of the answer: the first of the
// registry's types the request accepts, else Confluent's v1 type.
func answerType(req *http.Request) string {
	for _, part := range strings.Split(req.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case contentTypeV1, contentTypeDefault, contentTypeJSON:
			return mt
		}
	}
	return contentTypeV1
}

func writeJSON(w http.ResponseWriter, req *http.Request, status int, v any) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false) // Jackson does not escape <, >, &
	if err := e.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		fmt.Fprintf(&b, `{"error_code":500,"message":%q}`, err.Error())
	}
	w.Header().Set("Content-Type", answerType(req))
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// WriteError answers status with Confluent's error body
// {"error_code":code,"message":msg}, exactly as the registry answers its own
// errors (the media type the request accepts, Jackson's escaping), so that
// an error injected in front of the registry looks like one of its own.
func WriteError(w http.ResponseWriter, req *http.Request, status, code int, msg string) {
	writeJSON(w, req, status, &restError{status, code, msg})
}

func (r *Registry) fail(w http.ResponseWriter, req *http.Request, e *restError) {
	level := slog.LevelInfo
	if e.Status >= 500 {
		level = slog.LevelWarn
	}
	r.logger().Log(req.Context(), level, "schema registry request refused",
		"method", req.Method, "path", req.URL.Path, "status", e.Status, "error_code", e.Code, "message", e.Message)
	writeJSON(w, req, e.Status, e)
}

// pathSegments splits the escaped path, so that a subject may hold an
// encoded "/".
func pathSegments(req *http.Request) ([]string, error) {
	p := strings.Trim(req.URL.EscapedPath(), "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		parts[i] = u
	}
	return parts, nil
}

func notFound() *restError {
	return &restError{http.StatusNotFound, http.StatusNotFound, "HTTP 404 Not Found"}
}

func methodNotAllowed() *restError {
	return &restError{http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed"}
}

// route dispatches on the path; each answer is a JSON value, rawText or
// a restError.
func (r *Registry) route(req *http.Request, s []string) (any, *restError) {
	m := req.Method
	n := len(s)
	switch {
	case n == 0:
		if m != http.MethodGet {
			return nil, methodNotAllowed()
		}
		return struct{}{}, nil
	case s[0] == "subjects":
		return r.routeSubjects(req, s[1:])
	case s[0] == "schemas":
		return r.routeSchemas(req, s[1:])
	case s[0] == "config":
		return r.routeConfig(req, s[1:])
	case s[0] == "mode":
		return r.routeMode(req, s[1:])
	case s[0] == "compatibility" && n >= 4 && s[1] == "subjects" && s[3] == "versions" && n <= 5:
		if m != http.MethodPost {
			return nil, methodNotAllowed()
		}
		version := ""
		if n == 5 {
			version = s[4]
		}
		return r.checkCompatibility(req, s[2], version)
	case s[0] == "contexts" && n == 1:
		return []string{"."}, nil
	}
	return nil, notFound()
}

func (r *Registry) routeSubjects(req *http.Request, s []string) (any, *restError) {
	m := req.Method
	switch len(s) {
	case 0:
		if m != http.MethodGet {
			return nil, methodNotAllowed()
		}
		return r.listSubjects(req), nil
	case 1:
		switch m {
		case http.MethodPost:
			return r.lookup(req, s[0])
		case http.MethodDelete:
			return r.deleteSubject(req, s[0])
		}
		return nil, methodNotAllowed()
	}
	if s[1] != "versions" {
		return nil, notFound()
	}
	switch len(s) {
	case 2:
		switch m {
		case http.MethodGet:
			return r.listVersions(req, s[0])
		case http.MethodPost:
			return r.register(req, s[0])
		}
		return nil, methodNotAllowed()
	case 3:
		switch m {
		case http.MethodGet:
			v, err := r.getVersion(req, s[0], s[2])
			if err != nil {
				return nil, err
			}
			return v, nil
		case http.MethodDelete:
			return r.deleteVersion(req, s[0], s[2])
		}
		return nil, methodNotAllowed()
	case 4:
		if m != http.MethodGet {
			return nil, methodNotAllowed()
		}
		switch s[3] {
		case "schema":
			v, err := r.getVersion(req, s[0], s[2])
			if err != nil {
				return nil, err
			}
			return rawText(v.Schema), nil
		case "referencedby":
			return r.referencedBy(req, s[0], s[2])
		}
	}
	return nil, notFound()
}

// queryBool reads a boolean query parameter as JAX-RS does: "true" in
// any case is true, anything else false.
func queryBool(req *http.Request, name string) bool {
	return strings.EqualFold(req.URL.Query().Get(name), "true")
}

// versionLatest stands for "latest" (and -1, which Confluent reads so).
const versionLatest = -1

// parseVersion reads a version path segment as Confluent's VersionId.
func parseVersion(s string) (int, *restError) {
	if strings.EqualFold(s, "latest") {
		return versionLatest, nil
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || (v < 1 && v != -1) {
		return 0, errInvalidVersion(s)
	}
	return int(v), nil
}

// decodeBody reads a JSON request body into v.
func decodeBody(req *http.Request, v any) *restError {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil {
		return errBadBody(err)
	}
	if len(body) > maxBody {
		return &restError{http.StatusUnprocessableEntity, codeSchemaTooLarge, "Register operation failed because schema is too large"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errBadBody(errors.New("empty body"))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errBadBody(err)
	}
	return nil
}

// page applies the offset and limit query parameters of Confluent's
// listings: skip offset entries, then keep at most limit (none: all).
func page[T any](req *http.Request, list []T) []T { return pageMax(req, list, 0) }

// pageMax is page for a listing Confluent caps (GET /schemas:
// schema.search.default.limit and .max.limit, 1000): a limit outside
// 1..max is max.
func pageMax[T any](req *http.Request, list []T, max int) []T {
	q := req.URL.Query()
	if off, err := strconv.Atoi(q.Get("offset")); err == nil && off > 0 {
		list = list[min(off, len(list)):]
	}
	lim, err := strconv.Atoi(q.Get("limit"))
	if err != nil || lim <= 0 || max > 0 && lim > max {
		lim = max
	}
	if lim > 0 && lim < len(list) {
		list = list[:lim]
	}
	return list
}
