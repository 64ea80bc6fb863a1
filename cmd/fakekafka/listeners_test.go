package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

func TestListenerFlagsFromEnvironment(t *testing.T) {
	o, err := parseFlags([]string{"--advertise", "adv.example"}, env(map[string]string{
		"FAKEKAFKA_LISTENERS":                      "EXTERNAL://0.0.0.0:9092, INTERNAL://:19092,PLAINTEXT://127.0.0.1:29092",
		"FAKEKAFKA_ADVERTISED_LISTENERS":           "EXTERNAL://localhost:0,PLAINTEXT://[::1]:39092",
		"FAKEKAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT",
		"FAKEKAFKA_AWAIT_ADVERTISED":               "EXTERNAL",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []server.Listener{
		{Name: "EXTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "0.0.0.0:9092", AdvertisedHost: "localhost"},
		{Name: "INTERNAL", SecurityProtocol: "PLAINTEXT", Listen: ":19092"},
		{Name: "PLAINTEXT", Listen: "127.0.0.1:29092", AdvertisedHost: "::1", AdvertisedPort: 39092},
	}
	if !slices.Equal(o.cfg.Listeners, want) || o.cfg.AwaitAdvertised != "EXTERNAL" || o.cfg.AdvertisedHost != "adv.example" {
		t.Fatalf("listeners %+v, await %q", o.cfg.Listeners, o.cfg.AwaitAdvertised)
	}
}

func TestTopicsFlag(t *testing.T) {
	control := startBinary(t, "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--schema-registry", "", "--topics", "a, b:4,c:2:1")
	resp, err := http.Get(control + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st server.ClusterState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, tp := range st.Topics {
		got[tp.Name] = [2]int{len(tp.Partitions), len(tp.Partitions[0].Replicas)}
	}
	if want := map[string][2]int{"a": {1, 3}, "b": {4, 3}, "c": {2, 1}}; !maps.Equal(got, want) {
		t.Fatalf("topics %v, want %v", got, want)
	}
	for _, bad := range []string{"x:0", "x:1:9", "x:y", "x:1:1:1", ":3"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--control", "", "--topics", bad}, env(nil), io.Discard, &stderr); code == 0 || !strings.Contains(stderr.String(), "--topics") {
			t.Errorf("--topics %s: exit %d, %q", bad, code, stderr.String())
		}
	}
}

func TestBadListenerFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listeners", "EXTERNAL:9092"}, "not NAME://HOST:PORT"},
		{[]string{"--listeners", "EXTERNAL://host"}, "missing port"},
		{[]string{"--listeners", "EXTERNAL://:x"}, "bad port"},
		{[]string{"--listeners", "A://:1,A://:2"}, "listed twice"},
		{[]string{"--listeners", ","}, "no listener"},
		{[]string{"--listeners", "PLAINTEXT://:1", "--listen", "127.0.0.1:1"}, "exclude each other"},
		{[]string{"--advertised-listeners", "PLAINTEXT://h:1"}, "need --listeners"},
		{[]string{"--listeners", "PLAINTEXT://:1", "--advertised-listeners", "OTHER://h:1"}, "OTHER is not in --listeners"},
		{[]string{"--listeners", "PLAINTEXT://:1", "--advertised-listeners", "PLAINTEXT://0.0.0.0:1"}, "must name a host"},
		{[]string{"--listeners", "A://:1", "--listener-security-protocol-map", "A"}, "not NAME:PROTOCOL"},
		{[]string{"--listeners", "A://127.0.0.1:0", "--control", ""}, "no security protocol"},
		{[]string{"--listeners", "SASL_SSL://127.0.0.1:0", "--tls-client-auth", "maybe", "--control", ""}, "--tls-client-auth must be none, requested or required"},
		{[]string{"--sasl-user", "alice", "--control", ""}, "NAME:PASSWORD"},
		{[]string{"--sasl-user", "alice:", "--control", ""}, "empty password"},
		{[]string{"--sasl-enabled-mechanisms", "PLAIN,GSSAPI", "--control", ""}, `unknown mechanism "GSSAPI"`},
		{[]string{"--listeners", "PLAINTEXT://127.0.0.1:0", "--await-advertised", "EXTERNAL", "--control", ""}, "no listener named"},
		{[]string{"--listen", "127.0.0.1:0", "--ssl-principal-mapping-rules", "RULE:^CN=(.*?)/$1", "--control", ""},
			"ssl.principal.mapping.rules: Invalid rule: `RULE:^CN=(.*?)/$1`, unmatched substring: `RULE:^CN=(.*?)/$1`"},
		{[]string{"--listen", "127.0.0.1:0", "--sasl-kerberos-principal-to-local-rules", "RULE:[:$1]", "--control", ""},
			`sasl.kerberos.principal.to.local.rules: For input string: ""`},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), c.args, env(nil), io.Discard, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want failure mentioning %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// runReadyLine runs the command with args and returns its ready line; the
// command stops at the end of the test.
func runReadyLine(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, args, env(nil), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		select {
		case <-exit:
		case <-time.After(30 * time.Second):
			t.Error("fakekafka did not stop")
		}
	})
	return strings.TrimSpace(line)
}

// startBinary runs the command in-process with args and returns its
// control URL; it stops at the end of the test.
func startBinary(t *testing.T, args ...string) string {
	t.Helper()
	line := runReadyLine(t, args...)
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "control="); ok {
			return v
		}
	}
	t.Fatalf("no control URL in %q", line)
	return ""
}

func getListeners(t *testing.T, control string) map[string]server.ListenerState {
	t.Helper()
	resp, err := http.Get(control + "/v1/listeners")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ls []server.ListenerState
	if err := json.NewDecoder(resp.Body).Decode(&ls); err != nil {
		t.Fatal(err)
	}
	out := map[string]server.ListenerState{}
	for _, l := range ls {
		out[l.Name] = l
	}
	return out
}

func putAdvertised(t *testing.T, control, name string, addrs []string) {
	t.Helper()
	m := map[string]string{}
	for i, a := range addrs {
		m[fmt.Sprint(i+1)] = a
	}
	body, _ := json.Marshal(map[string]any{"advertised": m})
	req, _ := http.NewRequest(http.MethodPut, control+"/v1/listeners/"+name, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT /v1/listeners/%s: %s", name, resp.Status)
	}
}

// The subcommands the image runs on itself (healthcheck) and from another
// container (probe), against the binary in its container shape: two
// listeners, readiness waiting for EXTERNAL's addresses.
func TestHealthcheckAndProbe(t *testing.T) {
	control := startBinary(t, "--listeners", "EXTERNAL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
		"--listener-security-protocol-map", "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT",
		"--await-advertised", "EXTERNAL", "--control", "127.0.0.1:0")
	controlAddr := strings.TrimPrefix(control, "http://")
	healthcheck := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"healthcheck"}, args...), env(map[string]string{"FAKEKAFKA_CONTROL": controlAddr}), &out, io.Discard)
		return code, out.String()
	}
	if code, out := healthcheck("--live"); code != 0 || !strings.Contains(out, "200") {
		t.Fatalf("healthcheck --live before the PUT: %d %q", code, out)
	}
	if code, out := healthcheck(); code != 1 || !strings.Contains(out, "503") {
		t.Fatalf("healthcheck before the PUT: %d %q", code, out)
	}

	ls := getListeners(t, control)
	var bound []string
	for _, b := range ls["EXTERNAL"].Brokers {
		bound = append(bound, b.Bind)
	}
	putAdvertised(t, control, "EXTERNAL", bound)
	if code, out := healthcheck(); code != 0 || !strings.Contains(out, `"ready":true`) {
		t.Fatalf("healthcheck after the PUT: %d %q", code, out)
	}

	probe := func(bootstrap string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), []string{"probe", "--timeout", "5s", bootstrap}, env(nil), &out, io.Discard)
		return code, out.String()
	}
	internal := ls["INTERNAL"].Brokers
	if code, out := probe("127.0.0.1:1," + internal[1].Bind); code != 0 || !strings.Contains(out, "all 3 brokers reachable") ||
		!strings.Contains(out, fmt.Sprintf("broker 3 %s: ok", internal[2].Advertised)) {
		t.Fatalf("probe INTERNAL: %d\n%s", code, out)
	}

	// Advertise a port nobody listens on for broker 2: the probe names it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	putAdvertised(t, control, "EXTERNAL", []string{bound[0], dead, bound[2]})
	if code, out := probe(bound[0]); code != 1 || !strings.Contains(out, "broker 2 "+dead+": FAILED") || !strings.Contains(out, "1 of 3 brokers unreachable") {
		t.Fatalf("probe with broker 2 unreachable: %d\n%s", code, out)
	}
	if code, _ := probe("127.0.0.1:1"); code != 1 {
		t.Fatalf("probe of a dead bootstrap: %d", code)
	}
	if code := run(context.Background(), []string{"probe"}, env(nil), io.Discard, io.Discard); code != 2 {
		t.Fatalf("probe without an address: exit %d", code)
	}
}
