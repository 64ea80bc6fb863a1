package server

// Kafka's default message of an error (Errors.X.message(), the text of its
// exception class), which Kafka 4.4 puts in ErrorMessage fields where the
// handler has no message of its own. The corpus (compat/reference) compares
// these exactly for the cases that pin them.
const (
	msgInvalidRequest          = "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."
	msgUnknownTopicOrPartition = "This server does not host this topic-partition."
	msgElectionNotNeeded       = "Leader election not needed for topic partition."
)
