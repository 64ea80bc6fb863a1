// Package protocol holds the stateless pieces of the Kafka wire protocol that
// fakekafka needs beside kmsg: request framing, request and response headers,
// the table of supported API versions, and helpers for magic v2 record
// batches (parse, CRC-32C, validation, in-place offset rewrites, building).
//
// Nothing here starts goroutines or keeps state between calls; the only
// shared values are pools and lazily built codecs, which are safe for
// concurrent use.
package protocol
