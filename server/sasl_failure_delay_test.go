package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// A failed authentication is answered at once and the connection closed
// only failedAuthenticationDelay later, as Kafka's
// connection.failed.authentication.delay.ms does; a manual clock does not
// hold it open.
func TestSASLFailedAuthenticationClosesAfterDelay(t *testing.T) {
	for _, manual := range []bool{false, true} {
		name := "real clock"
		cfg := Config{Brokers: 1}
		if manual {
			name, cfg.Clock = "manual clock", clock.NewManual(time.Time{})
		}
		t.Run(name, func(t *testing.T) {
			c := securedCluster(t, cfg)
			r := dialRaw(t, saslAddr(t, c))
			if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != 0 {
				t.Fatal(kerr.ErrorForCode(resp.ErrorCode))
			}
			resp := r.authenticate(1, "\x00alice\x00wrong")
			answered := time.Now()
			if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("error %d, want SASL_AUTHENTICATION_FAILED", resp.ErrorCode)
			}
			expectClosed(t, r.nc)
			if d := time.Since(answered); d < failedAuthenticationDelay*9/10 {
				t.Fatalf("closed %v after the answer, want %v", d, failedAuthenticationDelay)
			}

			// An unsupported mechanism: the same delay.
			r = dialRaw(t, saslAddr(t, c))
			if resp := r.handshake(1, "GSSAPI"); resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
				t.Fatalf("error %d, want UNSUPPORTED_SASL_MECHANISM", resp.ErrorCode)
			}
			answered = time.Now()
			expectClosed(t, r.nc)
			if d := time.Since(answered); d < failedAuthenticationDelay*9/10 {
				t.Fatalf("closed %v after the answer, want %v", d, failedAuthenticationDelay)
			}
		})
	}
}
