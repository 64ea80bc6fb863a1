package server

// TLS for the SSL and SASL_SSL listeners. With Config.TLSDir holding
// server.pem and server.key those are served; otherwise the cluster makes
// a CA (reusing DIR/ca.pem and ca.key when both exist) and a server
// certificate for the advertised hosts, 127.0.0.1 and localhost, and
// writes ca.pem, ca.key and a client certificate (client.pem, client.key,
// CN=client) to the directory for clients and mutual TLS. Keys are ECDSA
// P-256: generating them costs well under a millisecond, so a cluster
// still starts at once.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
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
	ca      *x509.Certificate // nil when the server certificate came from the directory without ca.key
	caKey   *ecdsa.PrivateKey
	served  servedCert // the server certificate (tls_hosts.go)
}

// needsTLS says whether any listener speaks TLS.
func needsTLS(ls []Listener) bool {
	return slices.ContainsFunc(ls, func(l Listener) bool {
		return l.SecurityProtocol == "SSL" || l.SecurityProtocol == "SASL_SSL"
	})
}

func newTLSSetup(cfg Config, now time.Time) (*tlsSetup, error) {
	s := &tlsSetup{}
	var server tls.Certificate
	dir := cfg.TLSDir
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	if dir != "" && fileExists(certFile) {
		var err error
		if server, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
			return nil, fmt.Errorf("tls dir: %w", err)
		}
		if s.caPEM, err = os.ReadFile(filepath.Join(dir, "ca.pem")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("tls dir: %w", err)
		}
		if err := s.loadCA(dir); err != nil {
			return nil, err
		}
	} else {
		if err := s.loadCA(dir); err != nil {
			return nil, err
		}
		if s.ca == nil {
			if err := s.makeCA(now); err != nil {
				return nil, err
			}
		}
		var err error
		s.served.hosts = serverNames(cfg.Listeners)
		s.served.own = true
		if server, err = s.issue(pkix.Name{CommonName: "fakekafka"}, s.served.hosts, x509.ExtKeyUsageServerAuth, now); err != nil {
			return nil, err
		}
		if dir != "" {
			if err := s.writeFiles(dir, now); err != nil {
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
	s.served.cert.Store(&server)
	s.ssl = &tls.Config{GetCertificate: s.certificateFor, ClientAuth: auth, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	s.saslSSL = &tls.Config{GetCertificate: s.certificateFor, MinVersion: tls.VersionTLS12}
	return s, nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// loadCA reads DIR/ca.pem and ca.key when both exist, so clients keep
// trusting a directory's CA across restarts.
func (s *tlsSetup) loadCA(dir string) error {
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	if dir == "" || !fileExists(certFile) || !fileExists(keyFile) {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("tls dir: CA: %w", err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return fmt.Errorf("tls dir: ca.key must be an ECDSA key")
	}
	if s.ca, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
		return fmt.Errorf("tls dir: CA: %w", err)
	}
	s.caKey = key
	s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]})
	return nil
}

func (s *tlsSetup) makeCA(now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "fakekafka CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	s.ca, _ = x509.ParseCertificate(der)
	s.caKey = key
	s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
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

// issue signs a certificate for subject (and hosts, for a server) with the
// CA.
func (s *tlsSetup) issue(subject pkix.Name, hosts []string, usage x509.ExtKeyUsage, now time.Time) (tls.Certificate, error) {
	if s.ca == nil {
		return tls.Certificate{}, errors.New("no CA key to issue certificates with (the TLS directory has server.pem but no ca.pem and ca.key)")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(2 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

func (s *tlsSetup) writeFiles(dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tls dir: %w", err)
	}
	client, err := s.issue(pkix.Name{CommonName: "client"}, nil, x509.ExtKeyUsageClientAuth, now)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := certificatePEM(client)
	if err != nil {
		return err
	}
	caKey, err := x509.MarshalECPrivateKey(s.caKey)
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ca.pem", s.caPEM, 0o644},
		{"ca.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: caKey}), 0o600},
		{"client.pem", certPEM, 0o644},
		{"client.key", keyPEM, 0o600},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return fmt.Errorf("tls dir: %w", err)
		}
	}
	return nil
}

func certificatePEM(c tls.Certificate) (certPEM, keyPEM []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// certPrincipal is Kafka's default principal for a client certificate:
// "User:" and the subject's distinguished name in RFC 2253 form, most
// specific attribute first ("User:CN=alice,OU=eng,O=acme").
func certPrincipal(cert *x509.Certificate) string {
	var rdn pkix.RDNSequence
	if _, err := asn1.Unmarshal(cert.RawSubject, &rdn); err != nil {
		return "User:" + cert.Subject.String()
	}
	return "User:" + rdn.String()
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
	cert, err := c.tls.issue(subject, nil, x509.ExtKeyUsageClientAuth, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return certificatePEM(cert)
}
