package compat

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/server"
)

// TestConfluentMutualTLSMapping: librdkafka (confluent-kafka-go) with a
// client certificate CN=alice,OU=eng,O=acme on an SSL listener whose
// ssl.principal.mapping.rules make it User:alice: it writes the topic its
// ACL names and is refused another, with an authorization_denied event.
func TestConfluentMutualTLSMapping(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true, TLSClientAuth: server.TLSClientAuthRequired,
		SSLPrincipalMappingRules: `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`,
		Listeners:                []server.Listener{{Name: "SSL", Listen: "127.0.0.1:0"}}})
	for _, topic := range []string{"orders", "payroll"} {
		scMust(t, c.CreateTopic(topic, 1, 1, nil))
	}
	scMust(t, c.CreateACLs(authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "orders", Pattern: authorizer.PatternLiteral,
		Principal: "User:alice", Host: "*", Operation: authorizer.OpWrite, Permission: authorizer.PermissionAllow}))
	certPEM, keyPEM, err := c.IssueClientCert(pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	scMust(t, err)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	scMust(t, os.WriteFile(ca, c.TLSCA(), 0o644))
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers":   strings.Join(listenerAddrs(t, c, "SSL"), ","),
		"security.protocol":   "SSL",
		"ssl.ca.location":     ca,
		"ssl.certificate.pem": string(certPEM),
		"ssl.key.pem":         string(keyPEM),
		"acks":                "all",
		"log_level":           3,
	})
	scMust(t, err)
	defer p.Close()
	produce := func(topic string) error {
		ch := make(chan kafka.Event, 1)
		// librdkafka answers from its topic state when it already has one:
		// the metadata reply that marks the topic unauthorized can land
		// between the topic's creation and the partitioner on a loaded
		// machine, and then Produce itself returns the error rather than
		// the delivery report.
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte("v")}, ch); err != nil {
			return err
		}
		select {
		case e := <-ch:
			return e.(*kafka.Message).TopicPartition.Error
		case <-time.After(30 * time.Second):
			t.Fatalf("delivery to %s timed out", topic)
			return nil
		}
	}
	if err := produce("orders"); err != nil {
		t.Fatalf("alice writes orders: %v", err)
	}
	authenticated(t, c, "SSL", "User:alice")
	err = produce("payroll")
	var ke kafka.Error
	if !errors.As(err, &ke) || ke.Code() != kafka.ErrTopicAuthorizationFailed {
		t.Fatalf("alice writes payroll: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := c.WaitFor(ctx, server.AuthorizationDenied("User:alice", "payroll"))
	scMust(t, err)
	t.Logf("librdkafka: %v; denial: %s %s in %s", ke, e.Operation, e.ResourceName, e.API)
}
