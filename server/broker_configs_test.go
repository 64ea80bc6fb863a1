package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// incAlter sends one IncrementalAlterConfigs resource to broker id.
func incAlter(t *testing.T, c *Cluster, id int32, typ kmsg.ConfigResourceType, name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = typ, name, ops
	req.Resources = append(req.Resources, rr)
	r := callHandler[*kmsg.IncrementalAlterConfigsResponse](t, c, id, req).Resources[0]
	msg := ""
	if r.ErrorMessage != nil {
		msg = *r.ErrorMessage
	}
	return r.ErrorCode, msg
}

// describeOn describes names of a resource on broker id, with synonyms.
func describeOn(t *testing.T, c *Cluster, id int32, typ kmsg.ConfigResourceType, name string, names ...string) kmsg.DescribeConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
	req.Resources = append(req.Resources, rr)
	return callHandler[*kmsg.DescribeConfigsResponse](t, c, id, req).Resources[0]
}

// TestPerBrokerConfigs: a broker's own configs (its id) and the cluster-wide
// defaults ("") are apart, with Kafka's sources and answers (compared with
// Kafka 4.4 by compat/reference's TestConfigAlters).
func TestPerBrokerConfigs(t *testing.T) {
	c := NewTestCluster(t, Config{})
	broker := kmsg.ConfigResourceTypeBroker
	if code, msg := incAlter(t, c, 1, broker, "", groupSet("min.insync.replicas", "2")); code != 0 {
		t.Fatalf("default: %v %s", errorName(code), msg)
	}
	if code, msg := incAlter(t, c, 1, broker, "1", groupSet("min.insync.replicas", "1")); code != 0 {
		t.Fatalf("broker 1: %v %s", errorName(code), msg)
	}
	r := describeOn(t, c, 1, broker, "1", "min.insync.replicas")
	if len(r.Configs) != 1 {
		t.Fatalf("described %+v", r)
	}
	got := r.Configs[0]
	if *got.Value != "1" || got.Source != kmsg.ConfigSourceDynamicBrokerConfig || len(got.ConfigSynonyms) != 3 ||
		got.ConfigSynonyms[1].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || got.ConfigSynonyms[2].Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("broker 1's min.insync.replicas: %+v", got)
	}
	if got := describeOn(t, c, 2, broker, "2", "min.insync.replicas").Configs[0]; *got.Value != "2" || got.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("broker 2's min.insync.replicas: %+v", got)
	}
	// fakekafka acts on the cluster-wide default.
	if bs := c.brokerSettings(); bs.minISR != 2 {
		t.Errorf("min.insync.replicas in force %d, want the default's 2", bs.minISR)
	}

	for _, tc := range []struct {
		name string
		to   int32
		res  string
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		code int16
		msg  string
	}{
		{"read-only", 1, "", groupSet("num.partitions", "3"), kerr.InvalidRequest.Code, "Cannot update these configs dynamically: [num.partitions]"},
		{"bad value", 1, "", groupSet("message.max.bytes", "-1"), kerr.InvalidRequest.Code, "Invalid value -1 for configuration message.max.bytes: Value must be at least 0"},
		{"another broker", 1, "2", groupSet("log.cleaner.min.compaction.lag.ms", "2"), kerr.InvalidRequest.Code, "Unexpected broker id, expected 1, but received 2"},
		{"not an id", 1, "x", groupSet("log.cleaner.min.compaction.lag.ms", "2"), kerr.InvalidRequest.Code, "Node id must be an integer, but it is: x"},
		{"unknown name", 1, "", groupSet("no.such.config", "1"), 0, ""},
		{"delete what is not set", 1, "", groupDelete("other.config"), 0, ""},
	} {
		if code, msg := incAlter(t, c, tc.to, broker, tc.res, tc.op); code != tc.code || msg != tc.msg {
			t.Errorf("%s: %v %q, want %v %q", tc.name, errorName(code), msg, errorName(tc.code), tc.msg)
		}
	}
	// A name Kafka does not know is described as it describes it: perhaps a
	// password, so sensitive and null.
	r = describeOn(t, c, 1, broker, "", "no.such.config")
	if len(r.Configs) != 1 || r.Configs[0].Value != nil || !r.Configs[0].IsSensitive || !r.Configs[0].ReadOnly ||
		r.Configs[0].ConfigType != kmsg.ConfigTypeUnknown || r.Configs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("unknown name described as %+v", r.Configs)
	}
	if r := describeOn(t, c, 1, broker, "3"); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("describe broker 3 on broker 1: %v, want INVALID_REQUEST", errorName(r.ErrorCode))
	}
}

// TestBrokerLoggers sets, describes and deletes log levels of the
// BROKER_LOGGER resource with Kafka's answers.
func TestBrokerLoggers(t *testing.T) {
	c := NewTestCluster(t, Config{})
	logger := kmsg.ConfigResourceTypeBrokerLogger
	for _, tc := range []struct {
		name string
		res  string
		op   kmsg.IncrementalAlterConfigsRequestResourceConfig
		code int16
		msg  string
	}{
		{"bad level", "1", groupSet("kafka.server", "LOUD"), kerr.InvalidConfig.Code,
			"Cannot set the log level of kafka.server to LOUD as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{"delete root", "1", groupDelete("root"), kerr.InvalidRequest.Code, "Removing the log level of the root logger is not allowed"},
		{"another broker", "2", groupSet("kafka", "INFO"), kerr.InvalidRequest.Code, "Unexpected node id. Expected 1, but received 2"},
		{"append", "1", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "kafka", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("INFO")},
			kerr.InvalidRequest.Code, "APPEND operation is not allowed for the BROKER_LOGGER resource"},
		{"set", "1", groupSet("kafka.server", "DEBUG"), 0, ""},
	} {
		if code, msg := incAlter(t, c, 1, logger, tc.res, tc.op); code != tc.code || msg != tc.msg {
			t.Errorf("%s: %v %q, want %v %q", tc.name, errorName(code), msg, errorName(tc.code), tc.msg)
		}
	}
	levels := func() map[string]string {
		out := map[string]string{}
		for _, cfg := range describeOn(t, c, 1, logger, "1").Configs {
			out[cfg.Name] = *cfg.Value
			if cfg.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig {
				t.Errorf("%s: source %v", cfg.Name, cfg.Source)
			}
		}
		return out
	}
	if got := levels(); got["kafka.server"] != "DEBUG" || got["root"] != "INFO" {
		t.Errorf("levels after SET: %v", got)
	}
	if code, _ := incAlter(t, c, 1, logger, "1", groupDelete("kafka.server")); code != 0 {
		t.Fatalf("delete: %v", errorName(code))
	}
	if got := levels(); got["kafka.server"] != "INFO" {
		t.Errorf("after DELETE kafka.server is %q, want the root's INFO", got["kafka.server"])
	}
	if got := describeOn(t, c, 2, logger, "2").Configs; len(got) != 1 || got[0].Name != "root" {
		t.Errorf("broker 2's loggers: %+v, want the root alone (levels are per broker)", got)
	}
}
