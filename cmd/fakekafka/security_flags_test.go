package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/fakekafka/fakekafka/server"
)

func TestAuthorizerFlags(t *testing.T) {
	o, err := parseFlags([]string{"--authorizer", "--super-user", "User:a", "--super-user", "User:b; User:CN=x,O=y", "--allow-everyone-if-no-acl-found"},
		env(map[string]string{"FAKEKAFKA_SUPER_USER": "User:env"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.cfg.Authorizer || !o.cfg.AllowEveryoneIfNoACLFound || !slices.Equal(o.cfg.SuperUsers, []string{"User:env", "User:a", "User:b", "User:CN=x,O=y"}) {
		t.Fatalf("config %+v", o.cfg)
	}
	if _, err := parseFlags([]string{"--super-user", "alice"}, env(nil), io.Discard); err == nil {
		t.Fatal("a super user without a principal type was accepted")
	}
	o, err = parseFlags(nil, env(map[string]string{"FAKEKAFKA_AUTHORIZER": "true"}), io.Discard)
	if err != nil || !o.cfg.Authorizer {
		t.Fatalf("FAKEKAFKA_AUTHORIZER: %+v %v", o, err)
	}
}

func TestCtlACLs(t *testing.T) {
	c, ctl := ctlEnv(t)
	if out := mustCtl(t, ctl, "acls"); !strings.Contains(out, "authorizer off") || !strings.Contains(out, "no ACLs") {
		t.Fatalf("ctl acls without bindings:\n%s", out)
	}
	if err := c.CreateACLs(authorizer.ACL{ResourceType: authorizer.ResourceGroup, Name: "billing", Pattern: authorizer.PatternPrefixed,
		Principal: "User:alice", Host: "*", Operation: authorizer.OpRead, Permission: authorizer.PermissionDeny}); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, ctl, "acls")
	for _, want := range []string{"PRINCIPAL", "User:alice", "DENY", "READ", "GROUP", "PREFIXED", "billing"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl acls lacks %q:\n%s", want, out)
		}
	}
	var st server.ACLState
	if err := json.Unmarshal([]byte(mustCtl(t, ctl, "--json", "acls")), &st); err != nil || len(st.ACLs) != 1 || st.ACLs[0].Permission != "DENY" {
		t.Fatalf("ctl --json acls: %+v %v", st, err)
	}
}

func TestCtlQuotas(t *testing.T) {
	c, ctl := ctlEnv(t)
	if out := mustCtl(t, ctl, "quotas"); !strings.Contains(out, "no client quotas") {
		t.Fatalf("ctl quotas without quotas:\n%s", out)
	}
	if err := c.AlterClientQuotas(quota.Entity{User: quota.Default(), ClientID: quota.Named("app")}, quota.Op{Key: quota.ConsumerByteRate, Value: 2048}); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, ctl, "quotas"); !strings.Contains(out, "user=<default>,client-id=app") || !strings.Contains(out, "consumer_byte_rate=2048") {
		t.Fatalf("ctl quotas:\n%s", out)
	}
}
