package reference

import (
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConfigCatalogueCurrent regenerates configs/catalog_gen.go from the
// Kafka jars this package runs and fails if it differs from the committed
// one.
func TestConfigCatalogueCurrent(t *testing.T) {
	if !enabled() {
		t.Skip("needs Java and Maven: set FAKEKAFKA_REFERENCE=1 (scripts/reference.sh)")
	}
	out, err := exec.Command("bash", "../../scripts/gen-configs.sh", "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("configs/catalog_gen.go is not what scripts/gen-configs.sh makes from Kafka's jars (run it): %v\n%s", err, out)
	}
}

// describeDiffAllowed are the configs whose description may differ
// between the reference cluster and fakekafka, and why. Everything else of
// a broker, a topic and a group is compared field by field: name, value,
// source, read-only, sensitive, type, synonyms and documentation.
var describeDiffAllowed = map[string]string{
	// Set in the reference nodes' server.properties and not modelled by
	// fakekafka (a single process has no listeners per node, log dirs or
	// a separate KRaft controller). NewFake passes the rest of
	// KafkaSettings as Config.BrokerConfigs.
	"advertised.listeners":           "the reference node's listener and port",
	"listeners":                      "the reference node's listener and port",
	"controller.listener.names":      "KRaft controller settings of the reference nodes",
	"controller.quorum.voters":       "KRaft controller settings of the reference nodes",
	"inter.broker.listener.name":     "the reference node's listener",
	"listener.security.protocol.map": "the reference node's listeners",
	"log.dirs":                       "the reference node's data directory",
	"process.roles":                  "the reference nodes are broker-only",
}

// describeAll describes a resource with synonyms and documentation and
// returns each config's line and documentation by name.
func (r *run) describeAll(typ kmsg.ConfigResourceType, name string, to int32) (map[string]string, map[string]string) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	req.Resources = append(req.Resources, rr)
	resp := r.do(to, req).(*kmsg.DescribeConfigsResponse)
	lines, docs := map[string]string{}, map[string]string{}
	res := resp.Resources[0]
	if res.ErrorCode != 0 {
		r.Fatalf("%s: describe %v %q: %s", r.tg.Name(), typ, name, errName(res.ErrorCode))
	}
	for _, c := range res.Configs {
		lines[c.Name] = configLine(c)
		docs[c.Name] = deref(c.Documentation)
	}
	return lines, docs
}

// TestDescribeConfigsMatchKafka describes a broker, the cluster-wide
// broker defaults, a topic with configs and a group with configs on both
// clusters and compares every config field by field.
func TestDescribeConfigsMatchKafka(t *testing.T) {
	tgs := targets(t)
	type described struct{ lines, docs map[string]string }
	got := map[string][]described{}
	resources := []struct {
		key  string
		typ  kmsg.ConfigResourceType
		name string
	}{
		{"broker 1", kmsg.ConfigResourceTypeBroker, "1"},
		{"broker default", kmsg.ConfigResourceTypeBroker, ""},
		{"topic", kmsg.ConfigResourceTypeTopic, "dcfg"},
		{"group", kmsg.ConfigResourceTypeGroupConfig, "dcfg-group"},
	}
	for _, tg := range tgs {
		r := newRun(t, tg)
		r.create("dcfg", map[string]string{"retention.ms": "1000", "cleanup.policy": "compact,delete", "segment.jitter.ms": "5"})
		for _, c := range []alterCase{
			{typ: kmsg.ConfigResourceTypeGroupConfig, resource: "dcfg-group", ops: []alterOp{set("consumer.session.timeout.ms", "50000"), set("share.auto.offset.reset", "earliest")}},
			{typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("log.retention.ms", "7200000"), set("message.max.bytes", "2000000")}},
			{typ: kmsg.ConfigResourceTypeBroker, resource: "1", ops: []alterOp{set("log.cleaner.delete.retention.ms", "1000")}},
		} {
			if out := r.alterOutcome(c); out != "NONE" {
				t.Fatalf("%s: %v %q: %s", tg.Name(), c.typ, c.resource, out)
			}
		}
		if _, ok := tg.(KafkaTarget); ok {
			r.describeBrief(kmsg.ConfigResourceTypeBroker, "", 1, nil) // waits for the changes to arrive
		}
		for _, res := range resources {
			lines, docs := r.describeAll(res.typ, res.name, 1)
			got[res.key] = append(got[res.key], described{lines, docs})
		}
		// Undo the broker changes for the scenarios after this one.
		for _, c := range []alterCase{
			{typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{del("log.retention.ms"), del("message.max.bytes")}},
			{typ: kmsg.ConfigResourceTypeBroker, resource: "1", ops: []alterOp{del("log.cleaner.delete.retention.ms")}},
		} {
			r.alterOutcome(c)
		}
	}
	if len(tgs) < 2 {
		return
	}
	for _, res := range resources {
		k, f := got[res.key][0], got[res.key][1]
		names := map[string]bool{}
		for n := range k.lines {
			names[n] = true
		}
		for n := range f.lines {
			names[n] = true
		}
		var sorted []string
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		var diffs []string
		for _, n := range sorted {
			if _, ok := describeDiffAllowed[n]; ok {
				continue
			}
			kl, kok := k.lines[n]
			fl, fok := f.lines[n]
			switch {
			case !kok:
				diffs = append(diffs, "only fakekafka: "+fl)
			case !fok:
				diffs = append(diffs, "only Kafka:     "+kl)
			case kl != fl:
				diffs = append(diffs, "Kafka:     "+kl+"\n    fakekafka: "+fl)
			case k.docs[n] != f.docs[n]:
				diffs = append(diffs, n+": documentation differs")
			}
		}
		if len(diffs) > 0 {
			t.Errorf("%s: %d configs differ:\n    %s", res.key, len(diffs), strings.Join(diffs, "\n    "))
		}
	}
}
