package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// env is an environment of kv; the schema registry takes a free port
// unless kv says otherwise, so that no test binds the default 8081.
func env(kv map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := kv[k]; ok {
			return v
		}
		if k == "FAKEKAFKA_SCHEMA_REGISTRY" {
			return "127.0.0.1:0"
		}
		return ""
	}
}

func TestFlagsAndEnvironment(t *testing.T) {
	o, err := parseFlags([]string{"--min-insync-replicas", "3"}, env(map[string]string{
		"FAKEKAFKA_BROKERS":              "5",
		"FAKEKAFKA_MIN_INSYNC_REPLICAS":  "2",
		"FAKEKAFKA_REPLICA_LAG_TIME_MAX": "1500",
		"FAKEKAFKA_AUTO_CREATE_TOPICS":   "false",
		"FAKEKAFKA_CLOCK":                "manual",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.Brokers != 5 || o.cfg.MinInsyncReplicas != 3 || o.cfg.ReplicaLagTimeMax != 1500*time.Millisecond || *o.cfg.AutoCreateTopics {
		t.Fatalf("parsed %+v", o.cfg)
	}
	if o.cfg.Clock == nil || !o.cfg.Clock.Manual() {
		t.Fatalf("FAKEKAFKA_CLOCK=manual gave clock %v", o.cfg.Clock)
	}
	if o, err := parseFlags(nil, env(nil), io.Discard); err != nil || o.cfg.Clock != nil || o.cfg.Timing != server.TimingFast {
		t.Fatalf("default clock %v, timing %q, %v; want nil (the cluster's real clock) and fast", o.cfg.Clock, o.cfg.Timing, err)
	}
	o, err = parseFlags([]string{"--timing", "kafka"}, env(nil), io.Discard)
	if err != nil || o.cfg.Timing != server.TimingKafka {
		t.Fatalf("--timing kafka: %q, %v", o.cfg.Timing, err)
	}
	if o, err = parseFlags(nil, env(map[string]string{"FAKEKAFKA_TIMING": "kafka"}), io.Discard); err != nil || o.cfg.Timing != server.TimingKafka {
		t.Fatalf("FAKEKAFKA_TIMING=kafka: %v", err)
	}
}

func TestNonsenseFlagsAreRejected(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--brokers", "0"}, nil, "--brokers must be at least 1"},
		{[]string{"--brokers", "many"}, nil, "invalid value"},
		{[]string{"--replica-lag-time-max", "soon"}, nil, "milliseconds or a duration"},
		{[]string{"--replica-lag-time-max", "-5"}, nil, "must be positive"},
		{[]string{"--no-such-flag"}, nil, "unknown flag --no-such-flag (see fakekafka --help)"},
		{[]string{"extra"}, nil, "unexpected arguments"},
		{nil, map[string]string{"FAKEKAFKA_NUM_PARTITIONS": "x"}, "FAKEKAFKA_NUM_PARTITIONS"},
		{[]string{"--log-level", "loud"}, nil, "--log-level"},
		{[]string{"--clock", "sundial"}, nil, "--clock must be real or manual"},
		{nil, map[string]string{"FAKEKAFKA_CLOCK": "fast"}, "--clock must be real or manual"},
		{[]string{"--timing", "slow"}, nil, "--timing must be fast or kafka"},
		{[]string{"--listen", "nonsense", "--control", ""}, nil, "listen address"},
		{[]string{"--brokers", "2", "--default-replication-factor", "3", "--listen", "127.0.0.1:0", "--control", ""}, nil, "replication factor"},
		{[]string{"--chaos", "wild"}, nil, "--chaos"},
		{[]string{"--chaos", "gentle,seed=x"}, nil, "--chaos"},
		{nil, map[string]string{"FAKEKAFKA_CHAOS": "rough,bogus=1"}, "--chaos"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), c.args, env(c.env), io.Discard, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want failure mentioning %q", c.args, c.env, code, stderr.String(), c.want)
		}
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--listen", "127.0.0.1:0", "--control", "127.0.0.1:0"}, env(nil), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	var bootstrap, control string
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "bootstrap="); ok {
			bootstrap = v
		}
		if v, ok := strings.CutPrefix(f, "control="); ok {
			control = v
		}
	}
	if !strings.HasPrefix(line, "fakekafka ready") || bootstrap == "" || control == "" {
		t.Fatalf("ready line %q", line)
	}

	resp, err := http.Get(control + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Brokers []struct{ Address string } `json:"brokers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&state)
	resp.Body.Close()
	if err != nil || len(state.Brokers) != 3 || state.Brokers[0].Address != strings.Split(bootstrap, ",")[0] {
		t.Fatalf("GET /v1/cluster: %+v, %v", state, err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.DefaultProduceTopic("cli"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
	err = cl.ProduceSync(pctx, &kgo.Record{Value: []byte("hi")}).FirstErr()
	pcancel()
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}

	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fakekafka did not stop after cancellation")
	}
}

// TestBrokerConfigFlag: --broker-config (repeatable) and
// FAKEKAFKA_BROKER_CONFIG (one per line) set Config.BrokerConfigs.
func TestBrokerConfigFlag(t *testing.T) {
	o, err := parseFlags([]string{"--broker-config", "group.consumer.min.session.timeout.ms=2000", "--broker-config", "log.cleanup.policy=compact,delete"},
		env(map[string]string{"FAKEKAFKA_BROKER_CONFIG": "log.retention.hours=1\ngroup.share.min.record.lock.duration.ms=1000"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"group.consumer.min.session.timeout.ms": "2000", "log.cleanup.policy": "compact,delete",
		"log.retention.hours": "1", "group.share.min.record.lock.duration.ms": "1000"}
	if !maps.Equal(o.cfg.BrokerConfigs, want) {
		t.Fatalf("BrokerConfigs %v, want %v", o.cfg.BrokerConfigs, want)
	}
	if _, err := parseFlags([]string{"--broker-config", "no-equals"}, env(nil), io.Discard); err == nil {
		t.Fatal("--broker-config without = was taken")
	}
}
