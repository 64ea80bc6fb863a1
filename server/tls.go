package server

// TLS for the SSL and SASL_SSL listeners. With Config.TLSDir holding
// server.pem and server.key those are served; otherwise the cluster makes
// a CA (reusing DIR/ca.pem and ca.key when both exist) and a server
// certificate for the advertised hosts, 127.0.0.1 and localhost, and
// writes ca.pem, ca.key and a client certificate (client.pem, client.key,
// CN=client) to the directory for clients and mutual TLS. The certificate
// authority itself is package certs.

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/certs"
)

// TLS client authentication modes (Kafka's ssl.client.auth).
const (
	TLSClientAuthNone      = "none"
	TLSClientAuthRequested = "requested"
	TLSClientAuthRequired  = "required"
)

// tlsSetup is the cluster's TLS material.
type tlsSetup struct {
	ssl     *tls.Config // SSL listeners: client certificates as configured
	saslSSL *tls.Config // SASL_SSL listeners: SASL says who the client is
	caPEM   []byte
	ca      *certs.Authority // nil when the server certificate came from the directory without ca.key
	served  *certs.Served
}

// needsTLS says whether any listener speaks TLS.
func needsTLS(ls []Listener) bool {
	return slices.ContainsFunc(ls, func(l Listener) bool {
		return l.SecurityProtocol == "SSL" || l.SecurityProtocol == "SASL_SSL"
	})
}

func newTLSSetup(cfg Config, now time.Time) (*tlsSetup, error) {
	s := &tlsSetup{}
	dir := cfg.TLSDir
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	var err error
	if s.ca, err = certs.LoadAuthority(dir); err != nil {
		return nil, err
	}
	if dir != "" && certs.FileExists(certFile) {
		server, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("tls dir: %w", err)
		}
		if s.caPEM, err = os.ReadFile(filepath.Join(dir, "ca.pem")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("tls dir: %w", err)
		}
		if s.ca != nil {
			s.caPEM = s.ca.PEM
		}
		s.served = certs.Fixed(server)
	} else {
		if s.ca == nil {
			if s.ca, err = certs.NewAuthority(now); err != nil {
				return nil, err
			}
		}
		s.caPEM = s.ca.PEM
		if s.served, err = certs.Issued(s.ca, serverNames(cfg.Listeners), now); err != nil {
			return nil, err
		}
		if dir != "" {
			if err := s.ca.WriteFiles(dir, now); err != nil {
				return nil, err
			}
		}
	}
	pool := x509.NewCertPool()
	if len(s.caPEM) > 0 && !pool.AppendCertsFromPEM(s.caPEM) {
		return nil, fmt.Errorf("tls dir: no certificate in ca.pem")
	}
	auth := tls.NoClientCert
	switch cfg.TLSClientAuth {
	case TLSClientAuthRequested:
		auth = tls.VerifyClientCertIfGiven
	case TLSClientAuthRequired:
		auth = tls.RequireAndVerifyClientCert
	}
	s.ssl = &tls.Config{GetCertificate: s.served.GetCertificate, ClientAuth: auth, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	s.saslSSL = &tls.Config{GetCertificate: s.served.GetCertificate, MinVersion: tls.VersionTLS12}
	return s, nil
}

// serverNames are the hosts the server certificate is for.
func serverNames(ls []Listener) []string {
	names := []string{"127.0.0.1", "localhost", "::1"}
	for _, l := range ls {
		if !slices.Contains(names, l.AdvertisedHost) {
			names = append(names, l.AdvertisedHost)
		}
	}
	return names
}

// TLSCA returns the PEM of the CA clients should trust, nil when no
// listener speaks TLS (or the TLS directory has no ca.pem).
func (c *Cluster) TLSCA() []byte {
	if c.tls == nil {
		return nil
	}
	return c.tls.caPEM
}

// ClientTLSConfig is a client configuration that trusts the cluster's CA,
// for tests; add a client certificate (IssueClientCert) for mutual TLS.
func (c *Cluster) ClientTLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.TLSCA())
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// IssueClientCert signs a client certificate for subject with the cluster's
// CA and returns it and its key as PEM. Its principal on an SSL listener is
// "User:" + the subject in RFC 2253 form.
func (c *Cluster) IssueClientCert(subject pkix.Name) (certPEM, keyPEM []byte, err error) {
	if c.tls == nil {
		return nil, nil, errors.New("no listener speaks TLS")
	}
	cert, err := c.tls.ca.Issue(subject, nil, x509.ExtKeyUsageClientAuth, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return certs.PEM(cert)
}

// ClientCertTLSConfig is ClientTLSConfig with a client certificate for
// subject signed by the cluster's CA: what a test needs for mutual TLS on
// an SSL listener. The principal is the subject in RFC 2253 form
// ("CN=alice,OU=eng,O=acme") mapped by Config.SSLPrincipalMappingRules.
func (c *Cluster) ClientCertTLSConfig(subject pkix.Name) (*tls.Config, error) {
	certPEM, keyPEM, err := c.IssueClientCert(subject)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	cfg := c.ClientTLSConfig()
	cfg.Certificates = []tls.Certificate{pair}
	return cfg, nil
}
