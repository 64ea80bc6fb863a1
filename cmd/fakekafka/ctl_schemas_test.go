package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
)

// ctl schemas fault: add prints the rule (status from the error code),
// list shows its hits, rm and clear remove; bad flags are usage errors and
// refusals the API's message.
func TestCtlSchemaFaults(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, SchemaRegistry: &server.SchemaRegistryConfig{}})
	ctl := ctlFor(t, c)
	out := mustCtl(t, ctl, "schemas", "fault", "add", "--method", "POST", "--path", "/subjects/*/versions", "--error-code", "50001", "--count", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID METHOD PATH STATUS ERROR_CODE COUNT DELAY HITS REMAINING" {
		t.Fatalf("fault add:\n%s", out)
	}
	row := strings.Fields(lines[1])
	id := row[0]
	if got := strings.Join(row[1:], " "); got != "POST /subjects/*/versions 500 50001 2 0ms 0 2" {
		t.Errorf("fault add row %q", got)
	}
	mustCtl(t, ctl, "schemas", "fault", "add", "--path", "/schemas/ids/*", "--delay", "1500ms")
	out = mustCtl(t, ctl, "schemas", "faults")
	if !strings.Contains(out, "/schemas/ids/*") || !strings.Contains(out, "1500ms") || !strings.Contains(out, "unlimited") {
		t.Errorf("faults:\n%s", out)
	}
	if out := mustCtl(t, ctl, "schemas", "fault", "rm", id); !strings.Contains(out, "/subjects/*/versions") {
		t.Errorf("fault rm:\n%s", out)
	}
	if code, _, errs := ctl("schemas", "fault", "rm", id); code != 1 || !strings.Contains(errs, "unknown schema registry fault") {
		t.Errorf("rm twice: exit %d, %q", code, errs)
	}
	if out := mustCtl(t, ctl, "schemas", "fault", "clear"); !strings.Contains(out, "/schemas/ids/*") {
		t.Errorf("fault clear:\n%s", out)
	}
	if n := len(c.SchemaRegistryFaults()); n != 0 {
		t.Errorf("%d rules left", n)
	}
	if code, _, errs := ctl("schemas", "fault", "add", "--status", "200"); code != 1 || !strings.Contains(errs, "not an HTTP error status") {
		t.Errorf("status 200: exit %d, %q", code, errs)
	}
	if code, _, errs := ctl("schemas", "fault", "add", "--count", "x"); code != 2 || !strings.Contains(errs, "count") {
		t.Errorf("bad --count: exit %d, %q", code, errs)
	}
	if code, _, errs := ctl("schemas", "frobnicate"); code != 2 || !strings.Contains(errs, "unknown schemas verb") {
		t.Errorf("unknown verb: exit %d, %q", code, errs)
	}
}

// ctl schemas on a cluster without a registry says so (exit 1).
func TestCtlSchemasWhenOff(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	ctl := ctlFor(t, c)
	if code, _, errs := ctl("schemas"); code != 1 || !strings.Contains(errs, "schema registry is off") {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// ctl schemas lists the subjects, show a subject's versions and one
// version's schema (indented); events --subject shows the registrations.
func TestCtlSchemas(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, SchemaRegistry: &server.SchemaRegistryConfig{}})
	ctl := ctlFor(t, c)
	if out := mustCtl(t, ctl, "schemas"); out != "registry "+c.SchemaRegistryURL()+": compatibility BACKWARD, mode READWRITE\nno subjects\n" {
		t.Errorf("empty registry:\n%s", out)
	}
	for _, s := range []string{
		`{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`,
		`{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string","default":""}]}`,
	} {
		body, _ := json.Marshal(map[string]string{"schema": s})
		resp, err := http.Post(c.SchemaRegistryURL()+"/subjects/orders-value/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("register: %d", resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("PUT", c.SchemaRegistryURL()+"/config/orders-value", strings.NewReader(`{"compatibility":"FULL"}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT config: %v %v", resp, err)
	}
	want := "registry " + c.SchemaRegistryURL() + ": compatibility BACKWARD, mode READWRITE\n" +
		"SUBJECT       VERSIONS  LATEST  ID  TYPE  COMPATIBILITY  MODE  \n" +
		"orders-value  2         2       2   AVRO  FULL           -     \n"
	if out := mustCtl(t, ctl, "schemas"); out != want {
		t.Errorf("schemas:\n%q\nwant\n%q", out, want)
	}
	want = "VERSION  ID  TYPE  REFERENCES  \n" +
		"1        1   AVRO  -           \n" +
		"2        2   AVRO  -           \n"
	if out := mustCtl(t, ctl, "schemas", "show", "orders-value"); out != want {
		t.Errorf("show:\n%q\nwant\n%q", out, want)
	}
	v1 := "{\n  \"type\": \"record\",\n  \"name\": \"Order\",\n  \"fields\": [\n    {\n      \"name\": \"id\",\n      \"type\": \"string\"\n    }\n  ]\n}\n"
	if out := mustCtl(t, ctl, "schemas", "show", "orders-value", "1"); out != v1 {
		t.Errorf("show version 1:\n%s", out)
	}
	if out := mustCtl(t, ctl, "schemas", "show", "orders-value", "latest"); !strings.Contains(out, `"name": "note"`) {
		t.Errorf("show latest:\n%s", out)
	}
	if out := mustCtl(t, ctl, "--json", "schemas"); !strings.Contains(out, `"subject": "orders-value"`) {
		t.Errorf("--json schemas:\n%s", out)
	}
	for _, bad := range [][]string{{"show", "nope"}, {"show", "orders-value", "3"}} {
		if code, _, errs := ctl(append([]string{"schemas"}, bad...)...); code != 1 || !strings.Contains(errs, "no ") {
			t.Errorf("schemas %v: exit %d, %q", bad, code, errs)
		}
	}
	if code, _, errs := ctl("schemas", "show", "orders-value", "x"); code != 2 || !strings.Contains(errs, "not a positive number") {
		t.Errorf("bad version: exit %d, %q", code, errs)
	}
	out := mustCtl(t, ctl, "events", "--subject", "orders-value")
	for _, want := range []string{"schema_registered      subject orders-value version 1 id 1 AVRO", "schema_registered      subject orders-value version 2 id 2 AVRO",
		"schema_config_changed  subject orders-value compatibility=FULL"} {
		if !strings.Contains(out, want) {
			t.Errorf("events --subject lacks %q:\n%s", want, out)
		}
	}
}
