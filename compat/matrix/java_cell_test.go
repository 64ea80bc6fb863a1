package matrix

import (
	"os"
	"testing"
)

// requireJavaCell skips a Java-only test unless MATRIX_CLIENTS selects
// kafka-clients (CI's "langs" step), and fails it when the adapter is not
// built unless MATRIX_SKIP_ABSENT is set.
func requireJavaCell(t *testing.T) {
	t.Helper()
	sel, err := selectClients([]Client{KafkaClients}, os.Getenv("MATRIX_CLIENTS"))
	if err != nil || len(sel) == 0 {
		t.Skip("MATRIX_CLIENTS does not select kafka-clients (MATRIX_CLIENTS=langs runs it)")
	}
	if err := KafkaClients.Available(); err != nil {
		if os.Getenv("MATRIX_SKIP_ABSENT") != "" {
			t.Skipf("MATRIX_SKIP_ABSENT: %v", err)
		}
		t.Fatalf("%v (MATRIX_SKIP_ABSENT=1 skips it)", err)
	}
}
