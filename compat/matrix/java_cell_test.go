package matrix

import (
	"os"
	"slices"
	"testing"
)

// requireJavaCell skips a Java-only test unless MATRIX_CLIENTS selects
// kafka-clients (CI's "langs" step), and fails it when the adapter is not
// built unless MATRIX_SKIP_ABSENT is set.
func requireJavaCell(t *testing.T) {
	t.Helper()
	// Selected from every client, so that a list naming others beside
	// kafka-clients (kafka-clients,sarama) selects it too.
	sel, err := selectClients(Clients(), os.Getenv("MATRIX_CLIENTS"))
	if err != nil || !slices.ContainsFunc(sel, func(cl Client) bool { return cl.Name() == KafkaClients.Name() }) {
		t.Skip("MATRIX_CLIENTS does not select kafka-clients (MATRIX_CLIENTS=langs runs it)")
	}
	if err := KafkaClients.Available(); err != nil {
		if os.Getenv("MATRIX_SKIP_ABSENT") != "" {
			t.Skipf("MATRIX_SKIP_ABSENT: %v", err)
		}
		t.Fatalf("%v (MATRIX_SKIP_ABSENT=1 skips it)", err)
	}
}
