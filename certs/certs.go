// Package certs is the certificate authority behind fakekafka's SSL and
// SASL_SSL listeners: a CA made on the spot (or read back from a
// directory, so clients keep trusting it across restarts), server and
// client certificates it signs, and the principal Kafka derives from a
// client certificate. Keys are ECDSA P-256: generating them costs well
// under a millisecond, so a cluster with TLS still starts at once.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Authority is a CA that signs certificates.
type Authority struct {
	PEM  []byte // the CA certificate, for clients to trust
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// FileExists says whether name exists.
func FileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// LoadAuthority reads DIR/ca.pem and ca.key when both exist; nil (and no
// error) when they do not.
func LoadAuthority(dir string) (*Authority, error) {
	certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	if dir == "" || !FileExists(certFile) || !FileExists(keyFile) {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls dir: CA: %w", err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("tls dir: ca.key must be an ECDSA key")
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("tls dir: CA: %w", err)
	}
	return &Authority{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]}), cert: cert, key: key}, nil
}

// NewAuthority makes a CA valid for ten years from now.
func NewAuthority(now time.Time) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	return &Authority{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Issue signs a certificate for subject (and hosts, for a server). A nil
// Authority cannot sign: the directory had a server certificate but no CA
// key.
func (a *Authority) Issue(subject pkix.Name, hosts []string, usage x509.ExtKeyUsage, now time.Time) (tls.Certificate, error) {
	if a == nil {
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// WriteFiles writes ca.pem, ca.key and a client certificate (client.pem,
// client.key, CN=client) to dir, for clients and mutual TLS.
func (a *Authority) WriteFiles(dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tls dir: %w", err)
	}
	client, err := a.Issue(pkix.Name{CommonName: "client"}, nil, x509.ExtKeyUsageClientAuth, now)
	if err != nil {
		return err
	}
	certPEM, keyPEM, err := PEM(client)
	if err != nil {
		return err
	}
	caKey, err := x509.MarshalECPrivateKey(a.key)
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"ca.pem", a.PEM, 0o644},
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

// PEM encodes a certificate and its key.
func PEM(c tls.Certificate) (certPEM, keyPEM []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Principal is Kafka's default principal for a client certificate:
// "User:" and the subject's distinguished name in RFC 2253 form, most
// specific attribute first ("User:CN=alice,OU=eng,O=acme").
func Principal(cert *x509.Certificate) string {
	return "User:" + DistinguishedName(cert)
}
