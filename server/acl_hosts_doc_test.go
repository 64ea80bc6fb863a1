package server

import (
	"errors"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDocsACLHosts is docs/security.md's example of ACL hosts: exact
// addresses and CIDR ranges (Kafka 4.4). The client produces over the wire
// from 127.0.0.1 as User:ANONYMOUS.
func TestDocsACLHosts(t *testing.T) {
	c := NewTestCluster(t, Config{Authorizer: true})
	if err := c.CreateTopic("orders", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DisableIdempotentWrite())
	produce := func() error {
		return cl.ProduceSync(testContext(t), &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr()
	}

	write := func(host string, p authorizer.Permission) authorizer.ACL {
		return authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "orders", Pattern: authorizer.PatternLiteral,
			Principal: "User:ANONYMOUS", Host: host, Operation: authorizer.OpWrite, Permission: p}
	}
	if err := c.CreateACLs(
		write("127.0.0.0/8", authorizer.PermissionAllow), // every loopback client may write
		write("10.0.0.0/8", authorizer.PermissionDeny),   // a range this client is not in: no effect
	); err != nil {
		t.Fatal(err)
	}
	if err := produce(); err != nil {
		t.Fatalf("from 127.0.0.1 with ALLOW 127.0.0.0/8 and DENY 10.0.0.0/8: %v", err)
	}
	if err := c.CreateACLs(write("127.0.0.1", authorizer.PermissionDeny)); err != nil { // this very address
		t.Fatal(err)
	}
	if err := produce(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("with DENY from 127.0.0.1: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := c.CreateACLs(write("10.0.0.0/33", authorizer.PermissionAllow)); !errors.Is(err, authorizer.ErrInvalid) {
		t.Fatalf("host 10.0.0.0/33: %v, want ErrInvalid", err)
	}
}
