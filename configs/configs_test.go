package configs

import "testing"

// The catalogue is Kafka 4.4's: sizes, and every synonym names a broker
// config that exists.
func TestCatalogue(t *testing.T) {
	if n := len(Broker.Described()); n < 330 {
		t.Errorf("%d broker configs described, Kafka 4.4 describes about 350", n)
	}
	if n := len(Topic.Described()); n < 35 {
		t.Errorf("%d topic configs described, Kafka 4.4 about 38", n)
	}
	for _, c := range []*Catalog{Topic, Group} {
		for _, d := range c.Defs() {
			if d.BrokerSynonym != "" {
				if _, ok := Broker.Lookup(d.BrokerSynonym); !ok {
					t.Errorf("%s: broker synonym %s is no broker config", d.Name, d.BrokerSynonym)
				}
			}
			for _, f := range d.BrokerChain {
				if _, ok := Broker.Lookup(f.Name); !ok || f.Factor < 1 {
					t.Errorf("%s: fallback %+v", d.Name, f)
				}
			}
		}
	}
	if d, ok := Broker.Lookup("log.retention.ms"); !ok || d.Default != nil || len(d.Synonyms) != 3 || d.Synonyms[2] != "log.retention.hours" || d.Mode != ClusterWide {
		t.Errorf("log.retention.ms: %+v", d)
	}
	if d, _ := Broker.Lookup("num.partitions"); d.Mode != ReadOnly || !d.Static {
		t.Errorf("num.partitions: %+v", d)
	}
	if d, _ := Group.Lookup("consumer.session.timeout.ms"); d.BrokerSynonym != "group.consumer.session.timeout.ms" || d.Type != Int {
		t.Errorf("consumer.session.timeout.ms: %+v", d)
	}
	for _, d := range Broker.Defs() {
		if d.Default != nil {
			if err := d.Check(*d.Default); err != nil && d.Name != "node.id" {
				t.Errorf("%s: Kafka's default %q fails its own check: %v", d.Name, *d.Default, err)
			}
		}
	}
}

// Check answers with Kafka's ConfigException messages (compared with
// Kafka 4.4 itself by compat/reference's TestConfigAlters).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		cat         *Catalog
		name, value string
		want        string
	}{
		{Topic, "min.insync.replicas", "0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{Topic, "min.insync.replicas", "abc", "Invalid value abc for configuration min.insync.replicas: Not a number of type INT"},
		{Topic, "min.insync.replicas", " 2 ", ""},
		{Topic, "message.timestamp.type", "Foo", "Invalid value Foo for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"},
		{Topic, "cleanup.policy", "compact,nope", "Invalid value nope for configuration cleanup.policy: String must be one of: compact, delete"},
		{Topic, "cleanup.policy", "compact,compact", ""},
		{Topic, "cleanup.policy", "", ""},
		{Topic, "compression.gzip.level", "10", "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"},
		{Topic, "compression.gzip.level", "-1", ""},
		{Topic, "unclean.leader.election.enable", "TRUE", ""},
		{Topic, "unclean.leader.election.enable", "yes", "Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false"},
		{Topic, "min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"},
		{Topic, "segment.bytes", "100", "Invalid value 100 for configuration segment.bytes: Value must be at least 1048576"},
		{Topic, "leader.replication.throttled.replicas", "0:1,1:2", ""},
		{Topic, "leader.replication.throttled.replicas", "*", ""},
		{Group, "share.delivery.count.limit", "1", "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"},
		{Group, "share.auto.offset.reset", "by_duration:PT1H", ""},
		{Group, "share.auto.offset.reset", "bogus", "Invalid value bogus for configuration share.auto.offset.reset: Invalid value `bogus` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."},
		{Group, "share.isolation.level", "foo", "Invalid value foo for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted"},
		{Broker, "message.max.bytes", "-1", "Invalid value -1 for configuration message.max.bytes: Value must be at least 0"},
	} {
		d, ok := tc.cat.Lookup(tc.name)
		if !ok {
			t.Errorf("%s: unknown", tc.name)
			continue
		}
		got := ""
		if err := d.Check(tc.value); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s=%q: %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestCanonical(t *testing.T) {
	d, _ := Topic.Lookup("min.cleanable.dirty.ratio")
	b, _ := Topic.Lookup("unclean.leader.election.enable")
	l, _ := Topic.Lookup("cleanup.policy")
	for _, tc := range []struct {
		d         *Def
		in, canon string
	}{
		{d, "1", "1.0"}, {d, "0.25", "0.25"}, {d, "1e-5", "1.0E-5"}, {b, "TRUE", "true"}, {l, " compact , delete ", "compact,delete"},
	} {
		if got := tc.d.Canonical(tc.in); got != tc.canon {
			t.Errorf("%s %q: %q, want %q", tc.d.Name, tc.in, got, tc.canon)
		}
	}
	if JavaDouble(12345678) != "1.2345678E7" || JavaDouble(0.5) != "0.5" {
		t.Errorf("JavaDouble: %s %s", JavaDouble(12345678), JavaDouble(0.5))
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]int64{"PT1H": 3600000, "P1D": 86400000, "PT1.5S": 1500, "pt10m": 600000, "-PT1S": -1000, "P1DT2H": 93600000} {
		if got, err := ParseISODuration(in); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1H", "PT1X"} {
		if _, err := ParseISODuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
