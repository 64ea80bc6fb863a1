package schemaregistry

import "context"

// StoreError is a Store write that failed, as Confluent's KafkaStore
// reports it: Timeout when the write was not acknowledged within
// kafkastore.timeout.ms (its producer retries NOT_ENOUGH_REPLICAS and a
// missing leader until then; StoreTimeoutException, answered 50002), else
// the producer's own failure (StoreException, 50001). A timeout is
// context.DeadlineExceeded to errors.Is. Nothing of a failed write is
// applied.
type StoreError struct {
	Timeout bool
	// Cause names the Kafka error behind the failure, as
	// "_schemas-0: NOT_ENOUGH_REPLICAS: Messages are rejected since there
	// are fewer in-sync replicas than required."
	Cause string
}

func (e *StoreError) Error() string {
	if e.Timeout {
		return "Put operation timed out while waiting for an ack from Kafka (" + e.Cause + ")"
	}
	return "Put operation failed while waiting for an ack from Kafka (" + e.Cause + ")"
}

// Is makes a timeout context.DeadlineExceeded.
func (e *StoreError) Is(target error) bool { return e.Timeout && target == context.DeadlineExceeded }
