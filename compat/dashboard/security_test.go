package dashboard

import (
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDashboardSecurity: the Security panel shows the principal a client
// certificate maps to (alice, through ssl.principal.mapping.rules) on the
// SSL listener of the broker it is connected to, the principal of a
// PLAINTEXT client, and alice's denied produce; the events panel lists the
// authorization_denied event. Chromium; writes docs/dashboard/security.png
// with -update-screenshots.
func TestDashboardSecurity(t *testing.T) {
	p := chromePage{browser(t)}
	c, url := dashboardCluster(t, server.Config{ClusterID: "dashboard-security", Authorizer: true,
		AllowEveryoneIfNoACLFound: true, TLSClientAuth: server.TLSClientAuthRequired,
		SSLPrincipalMappingRules: `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`,
		Listeners:                []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SSL", Listen: "127.0.0.1:0"}}})
	// payroll has an ACL (for someone else), so alice is denied there.
	if err := c.CreateTopic("payroll", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("orders", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateACLs(aclAllow("User:hr", "payroll")); err != nil {
		t.Fatal(err)
	}
	loadDashboard(t, p, url)

	tlsCfg, err := c.ClientCertTLSConfig(pkix.Name{CommonName: "Alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	var ssl []string
	for _, l := range c.Listeners() {
		if l.Name == "SSL" {
			for _, b := range l.Brokers {
				ssl = append(ssl, b.Advertised)
			}
		}
	}
	alice, err := kgo.NewClient(kgo.SeedBrokers(ssl...), kgo.DialTLSConfig(tlsCfg), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	ctx := testContext(t)
	o := kgo.StringRecord("o1")
	o.Topic = "orders" // no ACL names orders: open to all (allow.everyone.if.no.acl.found)
	if err := alice.ProduceSync(ctx, o).FirstErr(); err != nil {
		t.Fatalf("alice produces to orders: %v", err)
	}
	r := kgo.StringRecord("raise")
	r.Topic = "payroll"
	if err := alice.ProduceSync(ctx, r).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produces to payroll: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	plain := newClient(t, c)
	if err := plain.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	waitVisible(t, p, `#principals tr[data-principal="User:alice"][data-listener="SSL"]`)
	waitVisible(t, p, `#principals tr[data-principal="User:ANONYMOUS"][data-listener="PLAINTEXT"]`)
	waitVisible(t, p, `#denials tr[data-principal="User:alice"]`)
	if got := text(t, p, `#denials tr[data-principal="User:alice"]`); !strings.Contains(got, "TOPIC:LITERAL:payroll") || !strings.Contains(got, "127.0.0.1") {
		t.Errorf("denial row %q, want alice's denial on TOPIC:LITERAL:payroll from 127.0.0.1", got)
	}
	if got := text(t, p, `#security-summary`); !strings.Contains(got, "authorizer on") || !strings.Contains(got, `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`) {
		t.Errorf("summary %q", got)
	}
	waitVisible(t, p, `#events li[data-type="authorization_denied"]`)
	if got := text(t, p, `#events li[data-type="authorization_denied"]`); !strings.Contains(got, "User:alice from 127.0.0.1") {
		t.Errorf("event row %q", got)
	}
	checkNotReloaded(t, p)
	saveSectionShot(t, p, "security.png", "security-section", "events-section")
}

func aclAllow(principal, topic string) authorizer.ACL {
	return authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: topic, Pattern: authorizer.PatternLiteral,
		Principal: principal, Host: "*", Operation: authorizer.OpAll, Permission: authorizer.PermissionAllow}
}
