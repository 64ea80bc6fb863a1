package schemaregistry

import (
	"context"
	"errors"
)

// StoreError is a Store write that failed, as Confluent's KafkaStore
// reports it: Timeout when the write was not acknowledged within
// kafkastore.timeout.ms (its producer retries NOT_ENOUGH_REPLICAS and a
// missing leader until then; StoreTimeoutException, answered 50002), else
// the producer's own failure (StoreException, 50001). A timeout is
// context.DeadlineExceeded to errors.Is. A record larger than the
// producer's max.request.size is TooLarge (RecordTooLargeException, which
// Confluent answers 422 with 42209) and ErrEntryTooLarge to errors.Is.
// Nothing of a failed write is applied.
type StoreError struct {
	Timeout  bool
	TooLarge bool
	// Cause names the Kafka error behind the failure, as
	// "_schemas-0: NOT_ENOUGH_REPLICAS: Messages are rejected since there
	// are fewer in-sync replicas than required."
	Cause string
}

// ErrEntryTooLarge is a record too large for the store.
var ErrEntryTooLarge = errors.New("entry too large")

func (e *StoreError) Error() string {
	if e.TooLarge {
		return "Put operation failed because entry is too large (" + e.Cause + ")"
	}
	if e.Timeout {
		return "Put operation timed out while waiting for an ack from Kafka (" + e.Cause + ")"
	}
	return "Put operation failed while waiting for an ack from Kafka (" + e.Cause + ")"
}

// Is makes a timeout context.DeadlineExceeded, a record too large
// ErrEntryTooLarge.
func (e *StoreError) Is(target error) bool {
	return e.Timeout && target == context.DeadlineExceeded || e.TooLarge && target == ErrEntryTooLarge
}
