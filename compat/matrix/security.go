package matrix

import (
	"context"

	"github.com/IBM/sarama"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SecurityConfig says how to reach a SASL_SSL listener with SCRAM or,
// without a Mechanism, an SSL listener with a client certificate (the Java
// adapter only).
type SecurityConfig struct {
	Bootstrap []string
	ClientID  string
	CAFile    string // PEM of the CA the listener's certificate chains to
	Mechanism string // SCRAM-SHA-256 or SCRAM-SHA-512, or OAUTHBEARER (Java and librdkafka); empty: SSL
	User      string // with OAUTHBEARER: the OAuth client id
	Password  string // with OAUTHBEARER: the client secret
	CertFile  string // SSL: the client certificate (PEM)
	KeyFile   string // SSL: its key (PEM, PKCS#8)
	Topic     string // produced to and consumed from partition 0
	// TokenAuth: User is a delegation token id and Password its HMAC in
	// base64 (SCRAM with tokenauth=true, KIP-48): the Java adapter's and
	// franz-go's.
	TokenAuth bool
	// TokenEndpointURL and Scope are OAUTHBEARER's: the client fetches its
	// token from this endpoint with the client credentials grant.
	TokenEndpointURL string
	Scope            string
}

// SecureClient is a client whose adapter can connect over SASL_SSL: every
// client of the matrix (Process through its adapter's settings).
type SecureClient interface {
	// SecureRoundTrip produces records to cfg.Topic partition 0 with
	// acks=all, then consumes the partition from offset 0 until it has as
	// many records back (or ctx ends). A failed authentication returns the
	// client's error, not a timeout.
	SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error)
}

// SaramaSCRAM adapts franz-go's SCRAM client to sarama's SCRAMClient
// (sarama leaves the SCRAM implementation to its user).
type SaramaSCRAM struct {
	Mech    func(scram.Auth) kgosasl.Mechanism // scram.Auth.AsSha256Mechanism or AsSha512Mechanism
	session kgosasl.Session
	first   []byte
	done    bool
}

var _ sarama.SCRAMClient = (*SaramaSCRAM)(nil)

// Begin starts the exchange.
func (s *SaramaSCRAM) Begin(user, password, _ string) (err error) {
	s.session, s.first, err = s.Mech(scram.Auth{User: user, Pass: password}).Authenticate(context.Background(), "")
	return err
}

// Step answers the server's message; the first call returns the
// client-first message.
func (s *SaramaSCRAM) Step(challenge string) (string, error) {
	if s.first != nil {
		first := s.first
		s.first = nil
		return string(first), nil
	}
	done, resp, err := s.session.Challenge([]byte(challenge))
	s.done = done
	return string(resp), err
}

// Done says the exchange is over.
func (s *SaramaSCRAM) Done() bool { return s.done }
