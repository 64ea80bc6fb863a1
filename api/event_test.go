package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"
)

// An event's JSON leaves out what does not apply and reads back the same.
func TestEventJSONRoundTrip(t *testing.T) {
	e := Event{Seq: 7, Time: time.Unix(1700000000, 0).UTC(), Type: EventLeaderElected, Broker: -1, Topic: "orders", Partition: 0,
		Leader: 2, OldLeader: 1, Epoch: 3, ISR: []int32{2, 3}, From: -1, To: -1, Generation: -1, ProducerID: -1, ProducerEpoch: -1,
		Reason: "fenced", Mode: StopCrash, Partitions: []TopicPartition{{Topic: "t", Partition: 1}}, Version: -1, SchemaID: -1}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{`"broker"`, `"from"`, `"to"`, `"generation"`, `"producer_id"`, `"version"`, `"schema_id"`} {
		if strings.Contains(string(b), absent) {
			t.Errorf("%s has %s, which does not apply", b, absent)
		}
	}
	if !strings.Contains(string(b), `"partition":0`) {
		t.Errorf("%s lost partition 0", b)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, e) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, e)
	}
}

func TestMatchers(t *testing.T) {
	e := Event{Type: EventLeaderElected, Topic: "orders", Partition: 1, Leader: 2, Broker: -1}
	for i, c := range []struct {
		m    EventMatcher
		want bool
	}{
		{OfType(EventLeaderElected), true},
		{LeaderElected("orders", 1), true},
		{LeaderElectedOn("orders", 1, 2), true},
		{LeaderElectedOn("orders", 1, 3), false},
		{LeaderElected("orders", 0), false},
		{ISRShrunk("orders", 1), false},
		{TxnCommitted("x"), false},
	} {
		if got := c.m(e); got != c.want {
			t.Errorf("matcher %d: %v, want %v", i, got, c.want)
		}
	}
	if !TxnCompleted("x")(Event{Type: EventTxnStateChanged, TransactionalID: "x", State: "CompleteAbort"}) {
		t.Error("TxnCompleted missed CompleteAbort")
	}
}

// A schema event's JSON names the subject, version, id and messages, and
// reads back the same; the matchers select by subject and version.
func TestSchemaEvents(t *testing.T) {
	reg := Event{Seq: 3, Type: EventSchemaRegistered, Broker: -1, Partition: -1, Leader: -1, OldLeader: -1, Epoch: -1, From: -1, To: -1,
		Generation: -1, ProducerID: -1, ProducerEpoch: -1, Subject: "orders-value", Version: 2, SchemaID: 7, SchemaType: "AVRO"}
	b, err := json.Marshal(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"subject":"orders-value"`, `"version":2`, `"schema_id":7`, `"schema_type":"AVRO"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, reg) {
		t.Errorf("round trip (%v):\n got %+v\nwant %+v", err, back, reg)
	}
	del := Event{Type: EventSchemaDeleted, Subject: "orders-value", Version: -1, SchemaID: -1, Permanent: true}
	inc := Event{Type: EventSchemaIncompatible, Subject: "orders-value", Version: -1, SchemaID: -1, Messages: []string{"reader field f has no default"}}
	global := Event{Type: EventSchemaConfigChanged, Version: -1, SchemaID: -1, Configs: map[string]string{"compatibility": "FULL"}}
	for i, c := range []struct {
		m    EventMatcher
		e    Event
		want bool
	}{
		{SchemaRegistered("orders-value"), reg, true},
		{SchemaRegistered(""), reg, true},
		{SchemaRegistered("payments-value"), reg, false},
		{SchemaRegisteredVersion("orders-value", 2), reg, true},
		{SchemaRegisteredVersion("orders-value", 1), reg, false},
		{SchemaDeleted("orders-value"), del, true},
		{SchemaDeleted("orders-value"), reg, false},
		{SchemaIncompatible("orders-value"), inc, true},
		{SchemaIncompatible(""), del, false},
		{SchemaConfigChanged(""), global, true},
		{SchemaConfigChanged("orders-value"), global, false},
	} {
		if got := c.m(c.e); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

// EventTypes lists every declared event type exactly once: GET /v1/events
// refuses a ?type= that is not in it, so a type missing here could never
// be filtered for.
func TestEventTypesListsEveryType(t *testing.T) {
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "EventType" {
				for _, v := range vs.Values {
					lit := v.(*ast.BasicLit)
					declared[strings.Trim(lit.Value, `"`)] = true
				}
			}
		}
	}
	seen := map[EventType]bool{}
	for _, typ := range EventTypes {
		if seen[typ] {
			t.Errorf("%s is listed twice", typ)
		}
		seen[typ] = true
		if !declared[string(typ)] {
			t.Errorf("%s is listed but not declared", typ)
		}
	}
	for name := range declared {
		if !seen[EventType(name)] {
			t.Errorf("%s is declared but missing from EventTypes", name)
		}
	}
	if len(declared) < 50 {
		t.Fatalf("found only %d declared event types: the parse missed some", len(declared))
	}
}
