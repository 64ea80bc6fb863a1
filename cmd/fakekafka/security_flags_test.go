package main

import (
	"io"
	"slices"
	"testing"
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
