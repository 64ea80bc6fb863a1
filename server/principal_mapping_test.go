package server

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// mtlsCluster has one broker with an SSL listener that requires client
// certificates, the authorizer on, and the mapping rules given.
func mtlsCluster(t *testing.T, rules string) *Cluster {
	return NewTestCluster(t, Config{Brokers: 1, Authorizer: true, TLSClientAuth: TLSClientAuthRequired,
		SSLPrincipalMappingRules: rules,
		Listeners:                []Listener{{Name: "SSL", Listen: "127.0.0.1:0"}}})
}

// certClient is a franz-go client on the SSL listener with a certificate
// for subject.
func certClient(t *testing.T, c *Cluster, subject pkix.Name, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	tlsCfg, err := c.ClientCertTLSConfig(subject)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(tlsCfg),
		kgo.RetryTimeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func allowACL(principal string, rt authorizer.ResourceType, name string, op authorizer.Operation) authorizer.ACL {
	return authorizer.ACL{ResourceType: rt, Name: name, Pattern: authorizer.PatternLiteral, Principal: principal, Host: "*",
		Operation: op, Permission: authorizer.PermissionAllow}
}

// TestSSLPrincipalMapping: a certificate CN=alice,OU=eng,O=acme is
// User:alice under RULE:^CN=(.*?),OU=.*$/$1/L, the ACLs written for alice
// let franz-go produce and consume, a DENY and a topic without ACLs are
// refused with authorization_denied events, and a certificate the rule
// does not match keeps its whole DN through DEFAULT.
func TestSSLPrincipalMapping(t *testing.T) {
	c := mtlsCluster(t, `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`)
	for _, topic := range []string{"orders", "audit", "secret"} {
		if err := c.CreateTopic(topic, 1, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustGrant(t, c, []authorizer.ACL{
		allowACL("User:alice", authorizer.ResourceTopic, "orders", authorizer.OpWrite),
		allowACL("User:alice", authorizer.ResourceTopic, "orders", authorizer.OpRead),
		allowACL("User:alice", authorizer.ResourceGroup, "alice-group", authorizer.OpRead),
		allowACL("User:alice", authorizer.ResourceTopic, "audit", authorizer.OpWrite),
		{ResourceType: authorizer.ResourceTopic, Name: "audit", Pattern: authorizer.PatternLiteral, Principal: "User:alice",
			Host: "127.0.0.1", Operation: authorizer.OpWrite, Permission: authorizer.PermissionDeny},
		allowACL("User:CN=svc,O=acme", authorizer.ResourceTopic, "orders", authorizer.OpDescribe),
	})
	ctx := testContext(t)

	alice := certClient(t, c, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}},
		kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("alice-group"))
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o1")}).FirstErr(); err != nil {
		t.Fatalf("alice produces to orders: %v", err)
	}
	waitAuthenticated(t, c, "SSL", "User:alice")
	fs := alice.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatalf("alice consumes orders: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "o1" {
		t.Fatalf("alice consumed %v", recs)
	}

	// audit: alice may describe it (her ALLOW of WRITE implies DESCRIBE)
	// but a DENY of WRITE from her host refuses the Produce; secret: no
	// ACL at all, so already its Metadata is refused.
	since := c.LastEventSeq()
	for _, tc := range []struct{ topic, api, op string }{{"audit", "Produce", "WRITE"}, {"secret", "Metadata", "DESCRIBE"}} {
		err := alice.ProduceSync(ctx, &kgo.Record{Topic: tc.topic, Value: []byte("x")}).FirstErr()
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("alice produces to %s: %v, want TOPIC_AUTHORIZATION_FAILED", tc.topic, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		e, err := c.WaitForAfter(wctx, since, AuthorizationDenied("User:alice", tc.topic))
		cancel()
		if err != nil {
			t.Fatalf("no authorization_denied for %s: %v", tc.topic, err)
		}
		if e.API != tc.api || e.Operation != tc.op || e.ResourceType != "TOPIC" || e.PatternType != "LITERAL" ||
			e.Host != "127.0.0.1" || e.Broker != 1 {
			t.Errorf("denial %+v: want %s %s TOPIC LITERAL from 127.0.0.1 on broker 1", e, tc.api, tc.op)
		}
	}

	// CN=svc,O=acme has no OU: the rule does not match, DEFAULT keeps the DN.
	svc := certClient(t, c, pkix.Name{CommonName: "svc", Organization: []string{"acme"}}, kgo.DisableIdempotentWrite())
	if _, err := svc.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
		t.Fatal(err)
	}
	waitAuthenticated(t, c, "SSL", "User:CN=svc,O=acme")
	err := svc.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("svc produces without WRITE: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	st := c.Security()
	var who []string
	for _, p := range st.Principals {
		who = append(who, p.Principal)
		if p.Listener != "SSL" || p.SecurityProtocol != "SSL" || p.Broker != 1 || len(p.Hosts) != 1 || p.Hosts[0] != "127.0.0.1" {
			t.Errorf("connected principal %+v: want broker 1, listener SSL, host 127.0.0.1", p)
		}
	}
	if strings.Join(who, " ") != "User:CN=svc,O=acme User:alice" {
		t.Errorf("connected principals %v, want User:CN=svc,O=acme and User:alice", who)
	}
	if st.DeniedTotal < 3 || len(st.Denials) != int(st.DeniedTotal) {
		t.Errorf("denials: %d kept of %d, want at least 3, all kept", len(st.Denials), st.DeniedTotal)
	}
	if st.SSLPrincipalMappingRules != `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT` {
		t.Errorf("rules %q", st.SSLPrincipalMappingRules)
	}
}

// TestSSLPrincipalNoRuleMatches: without DEFAULT a certificate no rule
// maps is refused, as Kafka refuses it: the connection closes and an
// authentication_failed event carries Kafka's message.
func TestSSLPrincipalNoRuleMatches(t *testing.T) {
	c := mtlsCluster(t, `RULE:^CN=(.*?),OU=.*$/$1/L`)
	tlsCfg, err := c.ClientCertTLSConfig(pkix.Name{CommonName: "bob", Organization: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(tlsCfg)); err == nil {
		t.Fatal("a certificate no rule maps was accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventAuthenticationFailed && e.Reason == "SSL" })
	if err != nil {
		t.Fatal(err)
	}
	want := "Failed to map name for 'CN=bob,O=acme' based on SSL principal mapping rules: No rules apply to CN=bob,O=acme, rules [RULE:^CN=(.*?),OU=.*$/$1/L]"
	if e.Detail != want {
		t.Errorf("detail %q\nwant   %q", e.Detail, want)
	}
	// alice, who maps, still gets in.
	alice, err := c.ClientCertTLSConfig(pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := firstRequestErr(t, kgo.SeedBrokers(listenerBootstrap(t, c, "SSL")...), kgo.DialTLSConfig(alice)); err != nil {
		t.Fatalf("alice: %v", err)
	}
	waitAuthenticated(t, c, "SSL", "User:alice")
}

// TestPrincipalRulesRefusedAtStart: rules Kafka would refuse stop the
// cluster from starting, with Kafka's message.
func TestPrincipalRulesRefusedAtStart(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{SSLPrincipalMappingRules: "RULE:^CN=(.*?)/$1/x"}, "ssl.principal.mapping.rules: Invalid rule: `RULE:^CN=(.*?)/$1/x`, unmatched substring: `x`"},
		{Config{BrokerConfigs: map[string]string{"ssl.principal.mapping.rules": "RULE:a/b"}}, "ssl.principal.mapping.rules: Invalid rule: `RULE:a/b`, unmatched substring: `RULE:a/b`"},
		{Config{SASLKerberosPrincipalToLocalRules: "RULE:[1:$1]x"}, "sasl.kerberos.principal.to.local.rules: Invalid rule: `RULE:[1:$1]x`, unmatched substring: `x`"},
		{Config{SASLKerberosPrincipalToLocalRules: "DEFAULT,,DEFAULT"}, "sasl.kerberos.principal.to.local.rules: Configuration 'sasl.kerberos.principal.to.local.rules' values must not be empty."},
	} {
		tc.cfg.Brokers = 1
		c, err := NewCluster(tc.cfg)
		if err == nil {
			c.Close()
			t.Errorf("%+v: started", tc.cfg)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q\nwant it to hold %q", err, tc.want)
		}
	}
}

// TestPrincipalRulesDescribed: both rule configs are described as the
// static broker configs they are, with the values given; the SSL rules
// are read-only, as in Kafka.
func TestPrincipalRulesDescribed(t *testing.T) {
	const sslRules, krbRules = `RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT`, `RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*//,DEFAULT`
	c := NewTestCluster(t, Config{Brokers: 1, SSLPrincipalMappingRules: sslRules, SASLKerberosPrincipalToLocalRules: krbRules})
	adm := kadm.NewClient(newClient(t, c))
	rcs, err := adm.DescribeBrokerConfigs(testContext(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"ssl.principal.mapping.rules": sslRules, "sasl.kerberos.principal.to.local.rules": krbRules} {
		cfg := describedConfig(t, rcs, "1", key)
		if cfg.MaybeValue() != want || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig {
			t.Errorf("%s = %q from %v, want %q from STATIC_BROKER_CONFIG", key, cfg.MaybeValue(), cfg.Source, want)
		}
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeBroker, "1", []string{"ssl.principal.mapping.rules"}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testContext(t), newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if cs := resp.Resources[0].Configs; len(cs) != 1 || !cs[0].ReadOnly {
		t.Errorf("ssl.principal.mapping.rules described as %+v, want one read-only config", cs)
	}

	// Unset, they are Kafka's defaults.
	c2 := NewTestCluster(t, Config{Brokers: 1})
	rcs, err = kadm.NewClient(newClient(t, c2)).DescribeBrokerConfigs(testContext(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ssl.principal.mapping.rules", "sasl.kerberos.principal.to.local.rules"} {
		if cfg := describedConfig(t, rcs, "1", key); cfg.MaybeValue() != "DEFAULT" || cfg.Source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("%s = %q from %v, want DEFAULT from DEFAULT_CONFIG", key, cfg.MaybeValue(), cfg.Source)
		}
	}
}
