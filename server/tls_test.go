package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"github.com/fakekafka/fakekafka/certs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTLSDir: the cluster writes its CA and a client certificate, keeps
// the CA across restarts, and serves a server.pem it is given.
func TestTLSDir(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	c := securedCluster(t, Config{Brokers: 3, TLSDir: dir, TLSClientAuth: TLSClientAuthRequested})
	t.Logf("3 brokers with 4 listeners, CA, server and client certificates: started in %v", time.Since(start))
	for _, f := range []string{"ca.pem", "ca.key", "client.pem", "client.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	clientTLS := func(dir string) *tls.Config {
		pool := x509.NewCertPool()
		ca, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
		pool.AppendCertsFromPEM(ca)
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
		if err != nil {
			t.Fatal(err)
		}
		return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
	}
	if err := roundTrip(t, c, "tlsdir", kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(clientTLS(dir))); err != nil {
		t.Fatal(err)
	}
	waitAuthenticated(t, c, "SSL", "User:CN=client")
	c.Close()

	// The next cluster on the directory keeps the CA.
	c2 := securedCluster(t, Config{Brokers: 1, TLSDir: dir})
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.pem")); !bytes.Equal(again, caPEM) || !bytes.Equal(c2.TLSCA(), caPEM) {
		t.Fatal("the CA changed across restarts on the same directory")
	}
	if err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c2, "SSL")...), kgo.DialTLSConfig(clientTLS(dir))); err != nil {
		t.Fatal(err)
	}
	c2.Close()

	// A directory with its own server.pem: served as is, and client
	// certificates are checked against its ca.pem.
	own := t.TempDir()
	certPEM, keyPEM, err := c2.tls.issueServerPEM([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(own, "server.pem"), certPEM, 0o644)
	os.WriteFile(filepath.Join(own, "server.key"), keyPEM, 0o600)
	os.WriteFile(filepath.Join(own, "ca.pem"), caPEM, 0o644)
	c3 := securedCluster(t, Config{Brokers: 1, TLSDir: own, TLSClientAuth: TLSClientAuthRequired})
	if _, err := os.Stat(filepath.Join(own, "client.pem")); err == nil {
		t.Fatal("the cluster wrote a client certificate into a directory with its own server.pem")
	}
	if err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c3, "SSL")...), kgo.DialTLSConfig(clientTLS(dir))); err != nil {
		t.Fatalf("SSL with the given server.pem: %v", err)
	}
	if _, _, err := c3.IssueClientCert(pkix.Name{CommonName: "x"}); err == nil {
		t.Fatal("issued a client certificate without the CA key")
	}
}

// issueServerPEM is a server certificate for hosts, as PEM, for tests
// that bring their own server.pem.
func (s *tlsSetup) issueServerPEM(hosts []string) (certPEM, keyPEM []byte, err error) {
	cert, err := s.ca.Issue(pkix.Name{CommonName: "fakekafka"}, hosts, x509.ExtKeyUsageServerAuth, time.Now())
	if err != nil {
		return nil, nil, err
	}
	return certs.PEM(cert)
}

// TestServerCertificateFollowsNames: a generated certificate gains the
// hosts advertised at runtime and the names clients ask for by SNI.
func TestServerCertificateFollowsNames(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 2})
	addr := listenerBootstrap(t, c, "SSL")[0]
	served := func(serverName string) *x509.Certificate {
		t.Helper()
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: serverName})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	if err := served("").VerifyHostname("broker1.example"); err == nil {
		t.Fatal("the certificate names broker1.example before it was advertised")
	}
	if err := c.SetAdvertised("SSL", map[int32]string{1: "broker1.example:19093", 2: "10.1.2.3:19094"}); err != nil {
		t.Fatal(err)
	}
	cert := served("")
	for _, h := range []string{"broker1.example", "10.1.2.3", "127.0.0.1", "localhost"} {
		if err := cert.VerifyHostname(h); err != nil {
			t.Errorf("after SetAdvertised: %v", err)
		}
	}
	// Verified against the CA, for a name only SNI told.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: c.ClientTLSConfig().RootCAs, ServerName: "kafka.internal"})
	if err != nil {
		t.Fatalf("SNI kafka.internal: %v", err)
	}
	conn.Close()
}
