package main

import (
	"context"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCtlUsers(t *testing.T) {
	c, ctl := ctlEnv(t)
	if out := mustCtl(t, ctl, "users"); strings.TrimSpace(out) != "USER  PLAIN  SCRAM" {
		t.Fatalf("no users: %q", out)
	}
	out := mustCtl(t, ctl, "user", "add", "alice", "pw")
	if !strings.Contains(out, "alice  true   SCRAM-SHA-256 (4096 iterations), SCRAM-SHA-512 (4096 iterations)") {
		t.Fatalf("after add: %q", out)
	}
	if us := c.SASLUsers(); len(us) != 1 || us[0].Name != "alice" {
		t.Fatalf("cluster users %+v", us)
	}
	mustCtl(t, ctl, "user", "rm", "alice")
	if len(c.SASLUsers()) != 0 {
		t.Fatal("alice was not removed")
	}
	if code, _, errs := ctl("user", "rm", "alice"); code != 1 || !strings.Contains(errs, "unknown SASL user") {
		t.Fatalf("rm unknown: exit %d %q", code, errs)
	}
	if code, _, _ := ctl("user", "add", "bob"); code != 2 {
		t.Fatalf("add without a password: exit %d, want 2", code)
	}
}

// TestCtlSecurity: ctl security shows a PLAINTEXT client's principal on
// its broker and listener, and the Metadata request the authorizer denied.
func TestCtlSecurity(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctl := ctlFor(t, c)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("t")
	req.Topics = append(req.Topics, rt)
	if _, err := req.RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, ctl, "security")
	for _, want := range []string{"authorizer on; ssl.principal.mapping.rules DEFAULT; 1 denied",
		"1       PLAINTEXT  PLAINTEXT  User:ANONYMOUS", "User:ANONYMOUS  127.0.0.1  DESCRIBE   TOPIC:LITERAL:t  Metadata  1"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl security lacks %q:\n%s", want, out)
		}
	}
}
