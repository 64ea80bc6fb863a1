package certs

// A generated server certificate follows the names clients use: hosts
// advertised at runtime (as containers do once they know their published
// address) and names clients ask for by SNI are added, and the
// certificate is issued again. A certificate loaded from a directory is
// served as it is.

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxServerNames bounds the names one certificate collects, since any
// client can ask for any name by SNI.
const maxServerNames = 64

// Served is the server certificate in use.
type Served struct {
	ca    *Authority // nil: loaded, served as it is
	mu    sync.Mutex
	hosts []string // guarded by mu
	cert  atomic.Pointer[tls.Certificate]
}

// Fixed serves cert as it is.
func Fixed(cert tls.Certificate) *Served {
	s := &Served{}
	s.cert.Store(&cert)
	return s
}

// Issued serves a certificate ca issues for hosts, issued again as hosts
// are added.
func Issued(ca *Authority, hosts []string, now time.Time) (*Served, error) {
	cert, err := ca.Issue(pkix.Name{CommonName: "fakekafka"}, hosts, x509.ExtKeyUsageServerAuth, now)
	if err != nil {
		return nil, err
	}
	s := &Served{ca: ca, hosts: slices.Clone(hosts)}
	s.cert.Store(&cert)
	return s, nil
}

// GetCertificate is tls.Config.GetCertificate: the served certificate,
// first extended to the SNI name if it lacks it.
func (s *Served) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if name := hello.ServerName; name != "" {
		s.AddHosts([]string{name})
	}
	return s.cert.Load(), nil
}

// AddHosts makes the served certificate cover hosts, if it was issued
// here.
func (s *Served) AddHosts(hosts []string) {
	if s.ca == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, h := range hosts {
		if h = normalizeHost(h); h != "" && !slices.Contains(s.hosts, h) && len(s.hosts) < maxServerNames {
			s.hosts = append(s.hosts, h)
			added = true
		}
	}
	if !added {
		return
	}
	cert, err := s.ca.Issue(pkix.Name{CommonName: "fakekafka"}, s.hosts, x509.ExtKeyUsageServerAuth, time.Now())
	if err == nil {
		s.cert.Store(&cert)
	}
}

func normalizeHost(h string) string {
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}
