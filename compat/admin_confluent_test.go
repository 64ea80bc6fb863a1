package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/server"
)

// TestConfluentAdminAndTelemetry: librdkafka's AdminClient adds partitions
// (validate-only first, then for real, and a shrink refused) and describes
// them; a producer with telemetry debugging on (librdkafka speaks KIP-714)
// logs no warning or error about telemetry, since fakekafka, like a Kafka
// broker without a client-metrics plugin, does not advertise it.
func TestConfluentAdminAndTelemetry(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	scMust(t, c.CreateTopic("cadm", 1, 3, nil))
	bootstrap := strings.Join(c.Bootstrap(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	adm, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap})
	scMust(t, err)
	defer adm.Close()
	spec := []kafka.PartitionsSpecification{{Topic: "cadm", IncreaseTo: 3}}
	res, err := adm.CreatePartitions(ctx, spec, kafka.SetAdminValidateOnly(true))
	if err != nil || res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("validate only: %v %+v", err, res)
	}
	if ps := scPartitionCount(c, "cadm"); ps != 1 {
		t.Fatalf("validate only created partitions: %d", ps)
	}
	res, err = adm.CreatePartitions(ctx, spec)
	if err != nil || res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("create partitions: %v %+v", err, res)
	}
	res, err = adm.CreatePartitions(ctx, []kafka.PartitionsSpecification{{Topic: "cadm", IncreaseTo: 2}})
	if err != nil || res[0].Error.Code() != kafka.ErrInvalidPartitions {
		t.Fatalf("shrink: %v %+v, want INVALID_PARTITIONS", err, res)
	}
	desc, err := adm.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames([]string{"cadm"}))
	if err != nil || len(desc.TopicDescriptions) != 1 || len(desc.TopicDescriptions[0].Partitions) != 3 {
		t.Fatalf("describe: %v %+v", err, desc)
	}
	for _, p := range desc.TopicDescriptions[0].Partitions {
		if p.Leader == nil || len(p.Replicas) != 3 || len(p.Isr) != 3 {
			t.Errorf("partition %d: leader %v, %d replicas, %d in sync", p.Partition, p.Leader, len(p.Replicas), len(p.Isr))
		}
	}

	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "debug": "telemetry",
		"go.logs.channel.enable": true, "enable.metrics.push": true})
	scMust(t, err)
	var bad []string
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		for l := range p.Logs() {
			if l.Level <= 4 { // syslog warning and worse
				bad = append(bad, l.String())
			}
		}
	}()
	go func() {
		for range p.Events() {
		}
	}()
	topic := "cadm"
	for i := range 10 {
		scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: int32(i % 3)}, Value: []byte("x")}, nil))
	}
	if left := p.Flush(30000); left != 0 {
		t.Fatalf("%d messages not delivered", left)
	}
	p.Close()
	<-logsDone
	if len(bad) > 0 {
		t.Fatalf("librdkafka logged warnings or errors: %q", bad)
	}
}

func scPartitionCount(c *server.Cluster, topic string) int {
	for _, ts := range c.State().Topics {
		if ts.Name == topic {
			return len(ts.Partitions)
		}
	}
	return 0
}
