package certs

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A CA written to a directory reads back as the same CA, and what it
// issues verifies against the PEM clients are given.
func TestAuthorityRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if a, err := LoadAuthority(dir); a != nil || err != nil {
		t.Fatalf("empty dir: %v, %v", a, err)
	}
	a, err := NewAuthority(now)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFiles(dir, now); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "ca.key", "client.pem", "client.key"} {
		if !FileExists(filepath.Join(dir, f)) {
			t.Fatalf("%s not written", f)
		}
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")); err != nil {
		t.Fatalf("client pair: %v", err)
	}
	b, err := LoadAuthority(dir)
	if err != nil || string(b.PEM) != string(a.PEM) {
		t.Fatalf("reloaded CA differs: %v", err)
	}
	cert, err := b.Issue(pkix.Name{CommonName: "fakekafka"}, []string{"127.0.0.1", "broker.example"}, x509.ExtKeyUsageServerAuth, now)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.PEM)
	for _, host := range []string{"127.0.0.1", "broker.example"} {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now}); err != nil {
			t.Fatalf("%s: %v", host, err)
		}
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "other.example", Roots: pool, CurrentTime: now}); err == nil {
		t.Fatal("verified for a host it was not issued for")
	}
}

func TestLoadAuthorityRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("not a certificate"), 0o644)
	os.WriteFile(filepath.Join(dir, "ca.key"), []byte("not a key"), 0o600)
	if _, err := LoadAuthority(dir); err == nil {
		t.Fatal("loaded a CA from garbage")
	}
}

func TestNilAuthorityCannotIssue(t *testing.T) {
	var a *Authority
	if _, err := a.Issue(pkix.Name{CommonName: "x"}, nil, x509.ExtKeyUsageClientAuth, now); err == nil {
		t.Fatal("a nil authority issued a certificate")
	}
}

// A served certificate gains SNI names up to its bound; a fixed one never
// changes.
func TestServedFollowsNames(t *testing.T) {
	a, _ := NewAuthority(now)
	s, err := Issued(a, []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := s.GetCertificate(&tls.ClientHelloInfo{ServerName: "kafka.example"})
	if err := cert.Leaf.VerifyHostname("kafka.example"); err != nil {
		t.Fatalf("SNI name not added: %v", err)
	}
	s.AddHosts([]string{"::1", "0:0:0:0:0:0:0:1"}) // one address, two spellings
	for i := range maxServerNames + 10 {
		s.AddHosts([]string{fmt.Sprintf("h%d.example", i)})
	}
	if len(s.hosts) != maxServerNames {
		t.Fatalf("%d names, want the bound %d", len(s.hosts), maxServerNames)
	}
	fixed := Fixed(*cert)
	fixed.AddHosts([]string{"new.example"})
	got, _ := fixed.GetCertificate(&tls.ClientHelloInfo{ServerName: "sni.example"})
	if got.Leaf.VerifyHostname("new.example") == nil || got.Leaf.VerifyHostname("sni.example") == nil {
		t.Fatal("a fixed certificate was issued again")
	}
}

func TestPrincipal(t *testing.T) {
	a, _ := NewAuthority(now)
	cert, _ := a.Issue(pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}}, nil, x509.ExtKeyUsageClientAuth, now)
	if got := Principal(cert.Leaf); got != "User:CN=alice,OU=eng,O=acme" {
		t.Fatalf("principal %q", got)
	}
	certPEM, keyPEM, err := PEM(cert)
	if err != nil || len(certPEM) == 0 || len(keyPEM) == 0 {
		t.Fatalf("PEM: %v", err)
	}
}
