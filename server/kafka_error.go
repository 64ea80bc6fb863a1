package server

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// KafkaError is an error the control methods return where Kafka's own API
// would answer with an error code: errors.Is(err, kerr.InvalidConfig)
// holds, and the text is Kafka's name then what is wrong, as one sentence
// ("INVALID_CONFIG: Unknown topic config name: x"), not kerr's description
// with ours glued on.
type KafkaError struct {
	Err     *kerr.Error
	Message string
}

func (e *KafkaError) Error() string { return e.Err.Message + ": " + e.Message }

func (e *KafkaError) Unwrap() error { return e.Err }

// kafkaError is KafkaError{e, msg}, or nil when e is nil.
func kafkaError(e *kerr.Error, msg string) error {
	if e == nil {
		return nil
	}
	if msg == "" {
		msg = e.Description
	}
	return &KafkaError{e, msg}
}

func kafkaErrorf(e *kerr.Error, format string, args ...any) error {
	return kafkaError(e, fmt.Sprintf(format, args...))
}

// ErrUnknownBroker is returned (wrapped) by the control methods for a
// broker id the cluster does not have.
var ErrUnknownBroker = errUnknownBroker

// kafkaCodeErrorf is kafkaErrorf for an error code; Kafka's description
// follows in parentheses, as the code alone says little.
func kafkaCodeErrorf(code int16, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	e, ok := kerr.ErrorForCode(code).(*kerr.Error)
	if !ok {
		return fmt.Errorf("error code %d: %s", code, msg)
	}
	return kafkaError(e, msg+" ("+strings.TrimSuffix(e.Description, ".")+")")
}
