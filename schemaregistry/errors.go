package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// restError is an answer in Confluent's error body
// {"error_code":N,"message":"..."} with its HTTP status.
type restError struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *restError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// Confluent's error codes (rest/exceptions/Errors.java).
const (
	codeSubjectNotFound                 = 40401
	codeVersionNotFound                 = 40402
	codeSchemaNotFound                  = 40403
	codeSubjectSoftDeleted              = 40404
	codeSubjectNotSoftDeleted           = 40405
	codeVersionSoftDeleted              = 40406
	codeVersionNotSoftDeleted           = 40407
	codeSubjectCompatibilityNotSet      = 40408
	codeSubjectModeNotSet               = 40409
	codeIncompatibleSchema              = 409
	codeInvalidSchema                   = 42201
	codeInvalidVersion                  = 42202
	codeInvalidCompatibility            = 42203
	codeInvalidMode                     = 42204
	codeOperationNotPermitted           = 42205
	codeReferenceExists                 = 42206
	codeInvalidSubject                  = 42208
	codeStoreError                      = 50001
	codeOperationTimeout                = 50002
	invalidCompatibilityMessage         = "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"
	invalidModeMessage                  = "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD."
	invalidVersionMessageFormat         = "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""
	subjectSoftDeletedMessageFormat     = "Subject '%s' was soft deleted.Set permanent=true to delete permanently"
	subjectNotSoftDeletedMessageFormat  = "Subject '%s' was not deleted first before being permanently deleted"
	versionSoftDeletedMessageFormat     = "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently"
	versionNotSoftDeletedMessageFormat  = "Subject '%s' Version %d was not deleted first before being permanently deleted"
	subjectCompatNotSetMessageFormat    = "Subject '%s' does not have subject-level compatibility configured"
	subjectModeNotSetMessageFormat      = "Subject '%s' does not have subject-level mode configured"
	referenceExistsMessageFormat        = "One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=%s,version=%d}."
	incompatibleSchemaMessagePrefixForm = "Schema being registered is incompatible with an earlier schema for subject \"%s\", details: "
)

func errSubjectNotFound(subject string) *restError {
	return &restError{http.StatusNotFound, codeSubjectNotFound, fmt.Sprintf("Subject '%s' not found.", subject)}
}

func errVersionNotFound(version int) *restError {
	return &restError{http.StatusNotFound, codeVersionNotFound, fmt.Sprintf("Version %d not found.", version)}
}

func errSchemaNotFound() *restError {
	return &restError{http.StatusNotFound, codeSchemaNotFound, "Schema not found"}
}

func errSchemaIDNotFound(id int) *restError {
	return &restError{http.StatusNotFound, codeSchemaNotFound, fmt.Sprintf("Schema %d not found", id)}
}

func errInvalidSchema(msg string) *restError {
	return &restError{http.StatusUnprocessableEntity, codeInvalidSchema, msg}
}

func errInvalidVersion(v string) *restError {
	return &restError{http.StatusUnprocessableEntity, codeInvalidVersion, fmt.Sprintf(invalidVersionMessageFormat, v)}
}

func errNotPermitted(msg string) *restError {
	return &restError{http.StatusUnprocessableEntity, codeOperationNotPermitted, msg}
}

func errReferenceExists(subject string, version int) *restError {
	return &restError{http.StatusUnprocessableEntity, codeReferenceExists, fmt.Sprintf(referenceExistsMessageFormat, subject, version)}
}

func errBadBody(err error) *restError {
	return &restError{http.StatusUnprocessableEntity, http.StatusUnprocessableEntity, "Unrecognizable request body: " + err.Error()}
}

// errStore is Confluent's answer when the _schemas write fails: 50002
// when it timed out, 50001 otherwise, with the store's reason.
func errStore(what string, err error) *restError {
	if errors.Is(err, context.DeadlineExceeded) {
		return &restError{http.StatusInternalServerError, codeOperationTimeout, what + " operation timed out: " + err.Error()}
	}
	return &restError{http.StatusInternalServerError, codeStoreError, what + " operation failed while writing to the Kafka store: " + err.Error()}
}
