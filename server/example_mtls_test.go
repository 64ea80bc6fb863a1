package server_test

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// docs/security.md's mTLS example, verbatim between the markers
// (TestMTLSExampleInDocs checks it).

// example:mtls:start
func TestMTLSWithPrincipalMapping(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		Listeners:                []server.Listener{{Name: "SSL", Listen: "127.0.0.1:0"}},
		TLSClientAuth:            server.TLSClientAuthRequired,
		SSLPrincipalMappingRules: `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`, // CN=alice,OU=eng,O=acme -> alice
		Authorizer:               true,
	})
	for _, topic := range []string{"orders", "payroll"} {
		if err := c.CreateTopic(topic, 1, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	// ACLs name the mapped principal, User:alice.
	if err := c.CreateACLs(authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "orders",
		Pattern: authorizer.PatternLiteral, Principal: "User:alice", Host: "*",
		Operation: authorizer.OpWrite, Permission: authorizer.PermissionAllow}); err != nil {
		t.Fatal(err)
	}

	// A client certificate with the subject CN=alice,OU=eng,O=acme, signed by the cluster's CA.
	tlsCfg, err := c.ClientCertTLSConfig(pkix.Name{CommonName: "alice",
		OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DialTLSConfig(tlsCfg))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("ok")}).FirstErr(); err != nil {
		t.Fatalf("alice writes orders: %v", err)
	}
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: "payroll", Value: []byte("no")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice writes payroll: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// The denial is an event: principal, host, operation, resource, API, broker.
	e, err := c.WaitFor(ctx, server.AuthorizationDenied("User:alice", "payroll"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s from %s: %s on %s %s in %s", e.Principal, e.Host, e.Operation, e.ResourceType, e.ResourceName, e.API)
	// User:alice from 127.0.0.1: DESCRIBE on TOPIC payroll in Metadata
}

// example:mtls:end

// TestMTLSExampleInDocs: docs/security.md shows the example above as it is.
func TestMTLSExampleInDocs(t *testing.T) {
	requireExampleInDocs(t, "example_mtls_test.go", "mtls", "../docs/security.md")
}
