package matrix

import (
	"context"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/server"
)

// TestJavaMTLSPrincipalMapping: the Java client with a PEM key store
// (ssl.keystore.type=PEM) connects to an SSL listener that requires client
// certificates; RULE:^CN=(.*?),OU=.*$/$1/L maps CN=alice,OU=eng,O=acme to
// User:alice, whose ACLs let it produce and consume. A certificate the
// rule does not match keeps its whole DN (DEFAULT), has no ACL and is
// refused, with an authorization_denied event naming that DN.
func TestJavaMTLSPrincipalMapping(t *testing.T) {
	requireJavaCell(t)
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true, TLSClientAuth: server.TLSClientAuthRequired,
		SSLPrincipalMappingRules: `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`,
		Listeners:                []server.Listener{{Name: "SSL", Listen: "127.0.0.1:0"}}})
	if err := c.CreateTopic("jmtls", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	var acls []authorizer.ACL
	for _, op := range []authorizer.Operation{authorizer.OpWrite, authorizer.OpRead} {
		acls = append(acls, authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "jmtls", Pattern: authorizer.PatternLiteral,
			Principal: "User:alice", Host: "*", Operation: op, Permission: authorizer.PermissionAllow})
	}
	if err := c.CreateACLs(acls...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, c.TLSCA(), 0o644); err != nil {
		t.Fatal(err)
	}
	certFiles := func(name string, subject pkix.Name) (string, string) {
		certPEM, keyPEM, err := c.IssueClientCert(subject)
		if err != nil {
			t.Fatal(err)
		}
		cert, key := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
		if err := os.WriteFile(cert, certPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		return cert, key
	}
	var bootstrap []string
	for _, b := range c.Listeners()[0].Brokers {
		bootstrap = append(bootstrap, b.Advertised)
	}
	recs := []Record{{Key: "k0", Value: "v0"}, {Key: "k1", Value: "v1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	aliceCert, aliceKey := certFiles("alice", pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	got, err := KafkaClients.SecureRoundTrip(ctx, SecurityConfig{Bootstrap: bootstrap, ClientID: "java-mtls", CAFile: caFile,
		CertFile: aliceCert, KeyFile: aliceKey, Topic: "jmtls"}, recs)
	if err != nil {
		t.Fatalf("alice's round trip: %v", err)
	}
	if len(got) != 2 || got[0].Value != "v0" || got[1].Value != "v1" {
		t.Fatalf("alice consumed %v", got)
	}
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Reason == "SSL" && e.Detail == "User:alice"
	}); err != nil {
		t.Fatal(err)
	}

	svcCert, svcKey := certFiles("svc", pkix.Name{CommonName: "svc", Organization: []string{"acme"}})
	_, javaErr := KafkaClients.SecureRoundTrip(ctx, SecurityConfig{Bootstrap: bootstrap, ClientID: "java-mtls-svc", CAFile: caFile,
		CertFile: svcCert, KeyFile: svcKey, Topic: "jmtls"}, recs[:1])
	if javaErr == nil || !strings.Contains(strings.ToLower(javaErr.Error()), "authoriz") {
		t.Fatalf("CN=svc,O=acme without ACLs: %v, want an authorization error", javaErr)
	}
	e, err := c.WaitFor(ctx, server.AuthorizationDenied("User:CN=svc,O=acme", "jmtls"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Java: %v; denial: %s %s on %s %s in %s", javaErr, e.Principal, e.Operation, e.ResourceType, e.ResourceName, e.API)
}
