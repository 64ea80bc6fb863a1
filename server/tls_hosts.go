package server

// A generated server certificate follows the names clients use: hosts
// advertised at runtime (SetAdvertised, as containers do once they know
// their published address) and names clients ask for by SNI are added,
// and the certificate is issued again. A certificate loaded from the TLS
// directory is served as it is.

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

// servedCert is the server certificate in use.
type servedCert struct {
	mu    sync.Mutex
	own   bool     // issued by the cluster's CA, so it may be issued again
	hosts []string // guarded by mu
	cert  atomic.Pointer[tls.Certificate]
}

// certificateFor is tls.Config.GetCertificate: the served certificate,
// first extended to the SNI name if it lacks it.
func (s *tlsSetup) certificateFor(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if name := hello.ServerName; name != "" {
		s.addHosts([]string{name})
	}
	return s.served.cert.Load(), nil
}

// addHosts makes the served certificate cover hosts, if the cluster issued
// it.
func (s *tlsSetup) addHosts(hosts []string) {
	sc := &s.served
	if !sc.own {
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	added := false
	for _, h := range hosts {
		if h = normalizeHost(h); h != "" && !slices.Contains(sc.hosts, h) && len(sc.hosts) < maxServerNames {
			sc.hosts = append(sc.hosts, h)
			added = true
		}
	}
	if !added {
		return
	}
	cert, err := s.issue(pkix.Name{CommonName: "fakekafka"}, sc.hosts, x509.ExtKeyUsageServerAuth, time.Now())
	if err == nil {
		sc.cert.Store(&cert)
	}
}

func normalizeHost(h string) string {
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}
