package schemaregistry

import "net/http"

// StoreError is a Store write that failed, as Confluent's KafkaStore
// reports it, so that the REST API answers what Confluent's does: a write
// not acknowledged within kafkastore.timeout.ms (its producer retries
// NOT_ENOUGH_REPLICAS and a missing leader until then) is its
// StoreTimeoutException, 500 with error_code 50002; a record Kafka refused
// for its size is EntryTooLargeException, 422 with 42209; anything else is
// StoreException, 500 with 50001. Nothing of a failed write is applied.
type StoreError struct {
	Timeout  bool
	TooLarge bool
	// Cause names the Kafka error behind the failure, as
	// "_schemas-0: NOT_ENOUGH_REPLICAS: Messages are rejected since there
	// are fewer in-sync replicas than required."
	Cause string
}

func (e *StoreError) Error() string {
	switch {
	case e.Timeout:
		return "Put operation timed out while waiting for an ack from Kafka (" + e.Cause + ")"
	case e.TooLarge:
		return "Put operation failed because entry is too large (" + e.Cause + ")"
	}
	return "Put operation failed while waiting for an ack from Kafka (" + e.Cause + ")"
}

// Status is the HTTP status of the answer.
func (e *StoreError) Status() int {
	if e.TooLarge {
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// ErrorCode is the answer's error_code.
func (e *StoreError) ErrorCode() int {
	switch {
	case e.Timeout:
		return 50002
	case e.TooLarge:
		return 42209
	}
	return 50001
}
