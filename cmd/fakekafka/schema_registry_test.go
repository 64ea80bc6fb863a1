package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// --schema-registry: 127.0.0.1:8081 by default, FAKEKAFKA_SCHEMA_REGISTRY,
// the command line over the environment, and "" turns it off.
func TestSchemaRegistryFlag(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		env  func(string) string
		want string // "" for off
	}{
		{nil, none, "127.0.0.1:8081"},
		{nil, env(map[string]string{"FAKEKAFKA_SCHEMA_REGISTRY": "0.0.0.0:18081"}), "0.0.0.0:18081"},
		{[]string{"--schema-registry", "127.0.0.1:9"}, env(map[string]string{"FAKEKAFKA_SCHEMA_REGISTRY": "0.0.0.0:18081"}), "127.0.0.1:9"},
		{[]string{"--schema-registry", ""}, none, ""},
		{[]string{"--schema-registry="}, env(map[string]string{"FAKEKAFKA_SCHEMA_REGISTRY": "0.0.0.0:18081"}), ""},
	} {
		o, err := parseFlags(c.args, c.env, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		got := ""
		if o.cfg.SchemaRegistry != nil {
			got = o.cfg.SchemaRegistry.Listen
		}
		if got != c.want {
			t.Errorf("%v: registry listens on %q, want %q", c.args, got, c.want)
		}
	}
}

// The ready line names the registry's URL, which serves the REST API; off
// when turned off.
func TestSchemaRegistryReadyLine(t *testing.T) {
	line := runReadyLine(t, "--listen", "127.0.0.1:0", "--control", "", "--schema-registry", "127.0.0.1:0")
	var url string
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "schema-registry="); ok {
			url = v
		}
	}
	if !strings.HasPrefix(line, "fakekafka ready: bootstrap=") || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("ready line %q", line)
	}
	resp, err := http.Get(url + "/subjects")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("GET /subjects: %s %s", resp.Status, body)
	}

	off := runReadyLine(t, "--listen", "127.0.0.1:0", "--control", "", "--schema-registry", "")
	if !strings.HasSuffix(off, " schema-registry=off") {
		t.Fatalf("ready line without a registry: %q", off)
	}
}

// A registry port already taken fails the start, as the control port does.
func TestSchemaRegistryPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--control", "", "--schema-registry", ln.Addr().String()}, env(nil), io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "schema registry listener") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
