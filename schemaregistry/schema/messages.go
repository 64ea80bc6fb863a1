package schema

import (
	"fmt"
	"strings"
)

// differentSchemaType is Confluent's message when two versions of a subject
// have different types.
const differentSchemaType = "Incompatible because of different schema type"

// FormatMessages fills the two %s verbs of Confluent's compatibility
// messages, as Backward returns them for PROTOBUF and JSON: the first
// names the schema that reads (the receiver of Backward), the second the
// one whose data it reads. Confluent says "new" and "old": for BACKWARD
// (newer.Backward(older)) that is FormatMessages(m, "new", "old"), for
// FORWARD (older.Backward(newer)) FormatMessages(m, "old", "new"). A
// message without verbs is returned as it is.
func FormatMessages(msgs []string, reader, writer string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if strings.Contains(m, "%s") {
			// Paths in the descriptions have any '%' doubled.
			out[i] = fmt.Sprintf(m, reader, writer)
		} else {
			out[i] = m
		}
	}
	return out
}
