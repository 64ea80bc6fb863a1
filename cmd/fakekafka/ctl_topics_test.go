package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCtlTopics(t *testing.T) {
	c, ctl := ctlEnv(t)
	out := mustCtl(t, ctl, "topic", "create", "orders", "--partitions", "2", "--replication-factor", "3", "--config", "min.insync.replicas=2")
	for _, want := range []string{"topic orders", "min.insync.replicas=2", "orders  0", "orders  1"} {
		if !strings.Contains(out, want) {
			t.Errorf("topic create lacks %q:\n%s", want, out)
		}
	}
	// A Kafka client sees the topic and its min.insync.replicas.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("orders", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("DescribeConfigs orders: %v %v", err, rc.Err)
	}
	found := false
	for _, cfg := range rc.Configs {
		found = found || cfg.Key == "min.insync.replicas" && cfg.Value != nil && *cfg.Value == "2"
	}
	if !found {
		t.Errorf("kadm does not see min.insync.replicas=2: %+v", rc.Configs)
	}

	out = mustCtl(t, ctl, "topic", "create", "placed", "--replica-assignment", "3:1,1:2")
	if !strings.Contains(out, "placed  0          3") || !strings.Contains(out, "3:leader") {
		t.Errorf("topic create with an assignment:\n%s", out)
	}
	if out := mustCtl(t, ctl, "topics"); !strings.Contains(out, "orders  2           3   min.insync.replicas=2") || !strings.Contains(out, "placed") {
		t.Errorf("topics:\n%s", out)
	}
	if out := mustCtl(t, ctl, "topic", "describe", "placed"); !strings.Contains(out, "(defaults)") || !strings.Contains(out, "placed  1") {
		t.Errorf("topic describe:\n%s", out)
	}
	out = mustCtl(t, ctl, "topic", "config", "orders", "--set", "retention.ms=60000", "--delete", "min.insync.replicas")
	if !strings.Contains(out, "retention.ms") || !strings.Contains(out, "60000") || !strings.Contains(out, "DYNAMIC_TOPIC_CONFIG") {
		t.Errorf("topic config --set:\n%s", out)
	}
	if ts, _ := c.Topic("orders"); ts.Configs["retention.ms"] != "60000" || ts.Configs["min.insync.replicas"] != "" {
		t.Errorf("configs after ctl: %v", ts.Configs)
	}
	if out := mustCtl(t, ctl, "--json", "topic", "config", "orders"); !strings.Contains(out, `"source": "DYNAMIC_TOPIC_CONFIG"`) {
		t.Errorf("topic config --json:\n%s", out)
	}
	if out := mustCtl(t, ctl, "topic", "delete", "placed"); !strings.Contains(out, "deleted topic placed (2 partitions)") {
		t.Errorf("topic delete: %q", out)
	}
	if _, ok := c.Topic("placed"); ok {
		t.Error("placed survived ctl topic delete")
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"topic", "create", "orders"}, 1, "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists. (HTTP 409)"},
		{[]string{"topic", "create", "x", "--config", "nope=1"}, 1, `INVALID_CONFIG: Unknown topic config name: nope (HTTP 400)`},
		{[]string{"topic", "describe", "nope"}, 1, `unknown topic "nope" (HTTP 404)`},
		{[]string{"topic", "delete", "nope"}, 1, "(HTTP 404)"},
		{[]string{"topic", "create", "x", "--config", "novalue"}, 2, "want KEY=VALUE"},
		{[]string{"topic", "create", "x", "--replica-assignment", "1:a"}, 2, `broker id "a"`},
		{[]string{"topic", "rename", "x"}, 2, "unknown topic verb"},
		{[]string{"topic"}, 2, "topic wants create"},
	} {
		code, _, errs := ctl(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("ctl %v: exit %d, stderr %q; want %d with %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestCtlEventsWait: events --wait returns once an event after --since
// matches, and fails when none comes in time.
func TestCtlEventsWait(t *testing.T) {
	c, ctl := ctlEnv(t)
	seq := c.LastEventSeq()
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := ctl("events", "--since", fmt.Sprint(seq), "--type", "isr_expanded", "--wait", "30s")
		done <- result{code, out, errs}
	}()
	if err := c.SetISR("t", 0, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 0 || !strings.Contains(r.out, "isr_expanded") {
		t.Fatalf("events --wait: %+v", r)
	}
	code, _, errs := ctl("events", "--since", fmt.Sprint(c.LastEventSeq()), "--type", "broker_stopped", "--wait", "20ms")
	if code != 1 || !strings.Contains(errs, "no matching event") {
		t.Fatalf("events --wait with nothing coming: %d %q", code, errs)
	}
}
