package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/clock"
)

// The Avro schemas of these tests: v2 adds a field with a default
// (BACKWARD compatible), bad one without (refused under BACKWARD).
const (
	orderV1  = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	orderV2  = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string","default":""}]}`
	orderBad = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"qty","type":"int"}]}`
)

// registerSchema POSTs schema to subject's versions on the registry at
// url: the registry's answer.
func registerSchema(t *testing.T, url, subject, schema string) registryAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	return registryCall(t, "POST", url+"/subjects/"+subject+"/versions", string(body))
}

// registeredID is the id a registration answered, -1 for none.
func registeredID(a registryAnswer) int {
	var r struct {
		ID *int `json:"id"`
	}
	if json.Unmarshal([]byte(a.body), &r) != nil || r.ID == nil {
		return -1
	}
	return *r.ID
}

// A fault answers the next two registrations with 50001; the third is
// registered, and the test waits for its event.
func TestSchemaRegistryFaultThenRegister(t *testing.T) {
	c := NewTestCluster(t, Config{SchemaRegistry: &SchemaRegistryConfig{}})
	ctx := testContext(t)
	url := c.SchemaRegistryURL()
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "POST", Path: "/subjects/*/versions",
		ErrorCode: 50001, Message: "store unavailable", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got := registerSchema(t, url, "orders-value", orderV1)
		if got.status != 500 || got.body != `{"error_code":50001,"message":"store unavailable"}` {
			t.Fatalf("faulted registration: %+v", got)
		}
	}
	if got := registerSchema(t, url, "orders-value", orderV1); got.status != 200 || registeredID(got) != 1 {
		t.Fatalf("registration after the fault: %+v", got)
	}
	ev, err := c.WaitFor(ctx, api.SchemaRegisteredVersion("orders-value", 1))
	if err != nil {
		t.Fatal(err)
	}
	if ev.SchemaID != 1 || ev.SchemaType != "AVRO" || rule.Hits() != 2 {
		t.Errorf("event %+v, hits %d", ev, rule.Hits())
	}
}

// The registry's changes are events, in order, with their fields; the
// state the controls show follows them.
func TestSchemaRegistryEvents(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, SchemaRegistry: &SchemaRegistryConfig{}})
	url := c.SchemaRegistryURL()
	seq := c.LastEventSeq()
	for _, s := range []string{orderV1, orderV2} {
		if got := registerSchema(t, url, "orders-value", s); got.status != 200 {
			t.Fatalf("register: %+v", got)
		}
	}
	if got := registerSchema(t, url, "orders-value", orderV2); got.status != 200 || registeredID(got) != 2 {
		t.Fatalf("register v2 again: %+v", got) // no change, no event
	}
	if got := registerSchema(t, url, "orders-value", orderBad); got.status != 409 {
		t.Fatalf("incompatible: %+v", got)
	}
	msgs := incompatibleMessages(t, c) // a check: no event
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/config/orders-value", `{"compatibility":"NONE"}`},
		{"PUT", "/config", `{"compatibility":"FULL"}`},
		{"DELETE", "/config/orders-value", ""},
		{"PUT", "/mode/orders-value", `{"mode":"READONLY"}`},
		{"DELETE", "/mode/orders-value", ""},
		{"DELETE", "/subjects/orders-value/versions/1", ""},
		{"DELETE", "/subjects/orders-value/versions/1?permanent=true", ""},
	} {
		if got := registryCall(t, r.method, url+r.path, r.body); got.status != 200 {
			t.Fatalf("%s %s: %+v", r.method, r.path, got)
		}
	}
	var got []string
	for _, e := range c.Events(seq) {
		if strings.HasPrefix(string(e.Type), "schema_") {
			b, _ := json.Marshal(e)
			var m map[string]any
			json.Unmarshal(b, &m)
			delete(m, "seq")
			delete(m, "time")
			line, _ := json.Marshal(m)
			got = append(got, string(line))
		}
	}
	want := []string{
		`{"schema_id":1,"schema_type":"AVRO","subject":"orders-value","type":"schema_registered","version":1}`,
		`{"schema_id":2,"schema_type":"AVRO","subject":"orders-value","type":"schema_registered","version":2}`,
		`{"messages":` + msgs + `,"schema_type":"AVRO","subject":"orders-value","type":"schema_incompatible"}`,
		`{"configs":{"compatibility":"NONE"},"subject":"orders-value","type":"schema_config_changed"}`,
		`{"configs":{"compatibility":"FULL"},"type":"schema_config_changed"}`,
		`{"configs":{"compatibility":""},"subject":"orders-value","type":"schema_config_changed"}`,
		`{"configs":{"mode":"READONLY"},"subject":"orders-value","type":"schema_config_changed"}`,
		`{"configs":{"mode":""},"subject":"orders-value","type":"schema_config_changed"}`,
		`{"schema_id":1,"schema_type":"AVRO","subject":"orders-value","type":"schema_deleted","version":1}`,
		`{"permanent":true,"schema_id":1,"schema_type":"AVRO","subject":"orders-value","type":"schema_deleted","version":1}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	st, ok := c.SchemaRegistryState()
	if !ok || st.Compatibility != "FULL" || st.Mode != "READWRITE" || len(st.Subjects) != 1 {
		t.Fatalf("state %+v", st)
	}
	s := st.Subjects[0]
	if s.Subject != "orders-value" || s.Deleted || s.Compatibility != "" || s.Mode != "" || len(s.Versions) != 1 ||
		!reflect.DeepEqual(s.Versions[0], api.SchemaVersionState{Version: 2, ID: 2, SchemaType: "AVRO", Schema: s.Versions[0].Schema}) ||
		!strings.Contains(s.Versions[0].Schema, `"note"`) {
		t.Errorf("subject %+v", s)
	}
}

// incompatibleMessages is the JSON list of messages the registry's 409
// gives for orderBad after orderV2, taken from the check endpoint, which
// answers the same messages without an event.
func incompatibleMessages(t *testing.T, c *Cluster) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": orderBad})
	got := registryCall(t, "POST", c.SchemaRegistryURL()+"/compatibility/subjects/orders-value/versions/latest?verbose=true", string(body))
	var r struct {
		Messages []string `json:"messages"`
	}
	if err := json.Unmarshal([]byte(got.body), &r); err != nil || len(r.Messages) == 0 {
		t.Fatalf("compatibility check: %+v", got)
	}
	b, _ := json.Marshal(r.Messages)
	return string(b)
}

// A delay on the real registry's listener with the cluster's manual
// clock: the registry's answer comes only once the clock passes it.
func TestSchemaRegistryDelayOnTheListener(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Brokers: 1, Clock: clk, SchemaRegistry: &SchemaRegistryConfig{}})
	ctx := testContext(t)
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "GET", Path: "/subjects", Delay: 3 * time.Second, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan registryAnswer, 1)
	go func() {
		a, err := tryRegistryCall("GET", c.SchemaRegistryURL()+"/subjects", "")
		if err != nil {
			a.body = err.Error()
		}
		answered <- a
	}()
	if err := rule.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(3*time.Second - time.Millisecond)
	if got := registryCall(t, "GET", c.SchemaRegistryURL()+"/subjects", ""); got.status != 200 || got.body != "[]" {
		t.Errorf("the next GET, the rule used up: %+v", got)
	}
	select {
	case got := <-answered:
		t.Fatalf("answered before the delay passed: %+v", got)
	default:
	}
	clk.Advance(time.Millisecond)
	select {
	case got := <-answered:
		if got.status != 200 || got.body != "[]" {
			t.Errorf("delayed answer %+v", got)
		}
	case <-ctx.Done():
		t.Fatal("no answer once the delay passed")
	}
}
