package matrix

import (
	"context"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// TestMatrixJavaGroupConfigs drives the Java Admin client's
// incrementalAlterConfigs and describeConfigs on a GROUP resource, as
// kafka-configs --entity-type groups does: a value outside the broker's
// bounds is refused with Kafka's message, a valid one is described with its
// source and synonyms, and the group's members follow it. It runs when
// MATRIX_CLIENTS selects kafka-clients (CI's "langs" step).
func TestMatrixJavaGroupConfigs(t *testing.T) {
	requireJavaCell(t)
	c := server.NewTestCluster(t, server.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	str := func(s string) *string { return &s }

	alterErr, _, err := KafkaClients.Configs(ctx, c.Bootstrap(), "GROUP", "java-cfg",
		[]ConfigOp{{Name: "consumer.session.timeout.ms", Value: str("10000"), Op: "SET"}})
	if err != nil {
		t.Fatal(err)
	}
	if alterErr == nil || alterErr.Name != "InvalidConfigurationException" || alterErr.Message != "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive." {
		t.Errorf("out of the broker's bounds: %+v, want InvalidConfigurationException with Kafka's message", alterErr)
	}

	alterErr, described, err := KafkaClients.Configs(ctx, c.Bootstrap(), "GROUP", "java-cfg",
		[]ConfigOp{{Name: "consumer.session.timeout.ms", Value: str("50000"), Op: "SET"}, {Name: "share.auto.offset.reset", Value: str("earliest"), Op: "SET"}})
	if err != nil || alterErr != nil {
		t.Fatalf("alter: %v %+v", err, alterErr)
	}
	byName := map[string]DescribedConfig{}
	for _, d := range described {
		byName[d.Name] = d
	}
	if s := byName["consumer.session.timeout.ms"]; s.Value == nil || *s.Value != "50000" || s.Source != "DYNAMIC_GROUP_CONFIG" || s.ConfigType != "INT" || !s.Documented ||
		len(s.Synonyms) != 2 || s.Synonyms[1] != "group.consumer.session.timeout.ms=45000(DEFAULT_CONFIG)" {
		t.Errorf("consumer.session.timeout.ms: %+v", s)
	}
	if h := byName["consumer.heartbeat.interval.ms"]; h.Value == nil || *h.Value != "5000" || h.Source != "DEFAULT_CONFIG" {
		t.Errorf("consumer.heartbeat.interval.ms: %+v", h)
	}
	if got := c.GroupConfigs("java-cfg"); got["consumer.session.timeout.ms"] != "50000" || got["share.auto.offset.reset"] != "earliest" {
		t.Errorf("the cluster's configs of the group: %v", got)
	}

	alterErr, described, err = KafkaClients.Configs(ctx, c.Bootstrap(), "GROUP", "java-cfg",
		[]ConfigOp{{Name: "consumer.session.timeout.ms", Op: "DELETE"}})
	if err != nil || alterErr != nil {
		t.Fatalf("delete: %v %+v", err, alterErr)
	}
	for _, d := range described {
		if d.Name == "consumer.session.timeout.ms" && (d.Value == nil || *d.Value != "45000" || d.Source != "DEFAULT_CONFIG") {
			t.Errorf("after DELETE: %+v", d)
		}
	}
}
