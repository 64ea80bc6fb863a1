package matrix

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMatrixJavaWireKeys drives the Java Admin (kafka-clients 4.4) over
// the API versions and keys fakekafka answers as Kafka 4.4 does:
// listConsumerGroupOffsets (OffsetFetch v10, topics by id) of offsets a
// franz-go group committed with OffsetCommit v10, describeConsumerGroups of
// that classic group and of an unknown one (DescribeGroups v6),
// deleteConsumerGroups (DeleteGroups v3), describeDelegationToken
// (tokens off), describeFeatures and updateFeatures (validate-only, above
// the supported range, then a real transaction.version downgrade that the
// next describeFeatures shows). It runs when MATRIX_CLIENTS selects
// kafka-clients (CI's "langs" step); an adapter that is not built fails it
// unless MATRIX_SKIP_ABSENT is set.
func TestMatrixJavaWireKeys(t *testing.T) {
	requireJavaCell(t)
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("wire", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("wire"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 6 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("java-wire"), kgo.ConsumeTopics("wire"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	for got := 0; got < 6; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.CloseAllowingRebalance()

	cfg := newAdapterConfig(c.Bootstrap(), "wire-keys")
	cfg.Group = "java-wire"
	lines := runAdapter(t, ctx, KafkaClients, "wire-keys", cfg)
	supported := []any{"eligible.leader.replicas.version", "group.version", "kraft.version", "metadata.version",
		"share.version", "streams.version", "transaction.version"}
	finalized := func(tv float64) map[string]any {
		return map[string]any{"group.version": 1.0, "metadata.version": 33.0, "share.version": 2.0, "streams.version": 1.0, "transaction.version": tv}
	}
	want := []map[string]any{
		{"type": "offsets", "offsets": map[string]any{"wire-0": 3.0, "wire-1": 3.0}},
		{"type": "group", "group": "java-wire", "error": "", "state": "Empty", "groupType": "Classic"},
		{"type": "group", "group": "no-such-group", "error": "GroupIdNotFoundException"},
		{"type": "deleted", "groups": map[string]any{"java-wire": "", "no-such-group": "GroupIdNotFoundException"}},
		{"type": "tokens", "error": "UnsupportedByAuthenticationException"},
		{"type": "features", "finalized": finalized(2), "supported": supported, "epoch": 1.0},
		{"type": "featureUpdate", "validateOnly": "", "aboveMax": "InvalidUpdateVersionException", "downgrade": ""},
		{"type": "features", "finalized": finalized(1), "supported": supported, "epoch": 2.0},
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("adapter answered\n%v\nwant\n%v", lines, want)
	}
}
