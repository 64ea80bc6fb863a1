package schemaregistry

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Modes (Confluent's Mode).
const (
	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
	modeForward          = "FORWARD"
)

var modes = []string{modeReadWrite, modeReadOnly, modeReadOnlyOverride, modeImport, modeForward}

func jsonMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// configResponse is Confluent's Config entity (GET, DELETE).
type configResponse struct {
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
	Normalize          *bool  `json:"normalize,omitempty"`
}

// configUpdate is Confluent's ConfigUpdateRequest (PUT and its answer).
type configUpdate struct {
	Compatibility      string `json:"compatibility,omitempty"`
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
	Normalize          *bool  `json:"normalize,omitempty"`
}

type modeBody struct {
	Mode string `json:"mode"`
}

func (r *Registry) routeConfig(req *http.Request, s []string) (any, *restError) {
	if len(s) > 1 {
		return nil, notFound()
	}
	subject := ""
	if len(s) == 1 {
		subject = s[0]
	}
	st := r.state()
	switch req.Method {
	case http.MethodGet:
		c, ok := st.Config(subject)
		if !ok {
			switch {
			case subject == "":
				c = ConfigValue{CompatibilityLevel: compatBackward}
			case queryBool(req, "defaultToGlobal"):
				c = st.effectiveConfig("")
			default:
				return nil, &restError{http.StatusNotFound, codeSubjectCompatibilityNotSet, sprintf(subjectCompatNotSetMessageFormat, subject)}
			}
		}
		return configResponse{c.CompatibilityLevel, c.Normalize}, nil
	case http.MethodPut:
		var b configUpdate
		if rerr := decodeBody(req, &b); rerr != nil {
			return nil, rerr
		}
		level := strings.ToUpper(b.Compatibility)
		if level == "" {
			level = strings.ToUpper(b.CompatibilityLevel)
		}
		if level != "" && !slices.Contains(compatLevels, level) || level == "" && b.Normalize == nil {
			return nil, &restError{http.StatusUnprocessableEntity, codeInvalidCompatibility, invalidCompatibilityMessage}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		st = r.state() // read under the write lock, as register does: a reload may have replaced it
		if st.readOnly(subject) {
			return nil, errReadOnly(subject)
		}
		c, _ := st.Config(subject)
		c.Subject = subject
		if level != "" {
			c.CompatibilityLevel = level
		}
		if b.Normalize != nil {
			c.Normalize = b.Normalize
		}
		if err := r.store.Write(req.Context(), []Record{ConfigRecord(subject, &c)}); err != nil {
			return nil, errStore("Update compatibility level", err)
		}
		r.observe(Change{Kind: ConfigChanged, Subject: subject, Config: map[string]string{"compatibility": c.CompatibilityLevel}})
		return configUpdate{Compatibility: c.CompatibilityLevel, Normalize: c.Normalize}, nil
	case http.MethodDelete:
		r.mu.Lock()
		defer r.mu.Unlock()
		st = r.state() // read under the write lock, as register does: a reload may have replaced it
		if st.readOnly(subject) {
			return nil, errReadOnly(subject)
		}
		c, ok := st.Config(subject)
		if !ok {
			if subject != "" {
				return nil, errSubjectNotFound(subject)
			}
			c = ConfigValue{CompatibilityLevel: compatBackward}
		} else {
			if err := r.store.Write(req.Context(), []Record{ConfigRecord(subject, nil)}); err != nil {
				return nil, errStore("Delete compatibility level", err)
			}
			r.observe(Change{Kind: ConfigChanged, Subject: subject, Config: map[string]string{"compatibility": ""}})
		}
		return configResponse{c.CompatibilityLevel, c.Normalize}, nil
	}
	return nil, methodNotAllowed()
}

func (r *Registry) routeMode(req *http.Request, s []string) (any, *restError) {
	if len(s) > 1 {
		return nil, notFound()
	}
	subject := ""
	if len(s) == 1 {
		subject = s[0]
	}
	st := r.state()
	switch req.Method {
	case http.MethodGet:
		m, ok := st.Mode(subject)
		if !ok {
			switch {
			case subject == "":
				m = modeReadWrite
			case queryBool(req, "defaultToGlobal"):
				m = st.effectiveMode("")
			default:
				return nil, &restError{http.StatusNotFound, codeSubjectModeNotSet, sprintf(subjectModeNotSetMessageFormat, subject)}
			}
		}
		return modeBody{m}, nil
	case http.MethodPut:
		var b modeBody
		if rerr := decodeBody(req, &b); rerr != nil {
			return nil, rerr
		}
		mode := strings.ToUpper(b.Mode)
		if !slices.Contains(modes, mode) {
			return nil, &restError{http.StatusUnprocessableEntity, codeInvalidMode, invalidModeMessage}
		}
		if mode == modeForward && subject != "" {
			return nil, &restError{http.StatusUnprocessableEntity, codeInvalidMode, "Forward mode only supported on global level"}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		st = r.state() // read under the write lock, as register does: a reload may have replaced it
		var recs []Record
		if mode == modeImport && st.effectiveMode(subject) != modeImport && !queryBool(req, "force") {
			// Confluent imports only into an empty registry (or subject):
			// soft-deleted leftovers go for good first.
			var subjects []string
			if subject == "" {
				if len(st.Subjects(false)) > 0 {
					return nil, errNotPermitted("Cannot import since found existing subjects")
				}
				subjects = st.Subjects(true)
			} else {
				if st.hasSubject(subject, false) {
					return nil, errNotPermitted("Cannot import since found existing subjects")
				}
				if st.hasSubject(subject, true) {
					subjects = []string{subject}
				}
			}
			for _, subj := range subjects {
				for _, v := range st.Versions(subj, true) {
					if len(st.referencingSubjects(subj, v.Version, true)) > 0 {
						return nil, errReferenceExists(subj, v.Version)
					}
					recs = append(recs, SchemaTombstone(subj, v.Version))
				}
			}
			recs = append(recs, ClearSubjectRecord(subject))
		}
		recs = append(recs, ModeRecord(subject, &ModeValue{Subject: subject, Mode: mode}))
		if err := r.store.Write(req.Context(), recs); err != nil {
			return nil, errStore("Update mode", err)
		}
		r.observe(Change{Kind: ConfigChanged, Subject: subject, Config: map[string]string{"mode": mode}})
		return modeBody{mode}, nil
	case http.MethodDelete:
		r.mu.Lock()
		defer r.mu.Unlock()
		st = r.state() // read under the write lock, as register does: a reload may have replaced it
		m, ok := st.Mode(subject)
		if !ok {
			if subject != "" {
				return nil, errSubjectNotFound(subject)
			}
			m = modeReadWrite
		} else {
			if err := r.store.Write(req.Context(), []Record{ModeRecord(subject, nil)}); err != nil {
				return nil, errStore("Delete mode", err)
			}
			r.observe(Change{Kind: ConfigChanged, Subject: subject, Config: map[string]string{"mode": ""}})
		}
		return modeBody{m}, nil
	}
	return nil, methodNotAllowed()
}
