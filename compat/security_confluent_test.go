package compat

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/fakekafka/fakekafka/server"
)

// TestConfluentACLs: librdkafka's producer gets TOPIC_AUTHORIZATION_FAILED
// in its delivery report without WRITE, and its admin client cannot create
// a topic without CREATE.
func TestConfluentACLs(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true})
	scMust(t, c.CreateTopic("t", 1, 1, nil))
	scMust(t, c.CreateACLs(anonACL("t", authorizer.OpDescribe)))
	cfg := kafka.ConfigMap{"bootstrap.servers": strings.Join(c.Bootstrap(), ","), "log_level": 3, "go.logs.channel.enable": true,
		"message.send.max.retries": 0}
	p, err := kafka.NewProducer(&cfg)
	scMust(t, err)
	defer p.Close()
	go func() {
		for range p.Logs() {
		}
	}()
	topic := "t"
	report := make(chan kafka.Event, 1)
	scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte("v")}, report))
	select {
	case ev := <-report:
		m := ev.(*kafka.Message)
		if ke, ok := m.TopicPartition.Error.(kafka.Error); !ok || ke.Code() != kafka.ErrTopicAuthorizationFailed {
			t.Fatalf("librdkafka produce without WRITE: %v, want TOPIC_AUTHORIZATION_FAILED", m.TopicPartition.Error)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery report")
	}

	adm, err := kafka.NewAdminClientFromProducer(p)
	scMust(t, err)
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := adm.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: "new", NumPartitions: 1, ReplicationFactor: 1}})
	scMust(t, err)
	if len(res) != 1 || res[0].Error.Code() != kafka.ErrTopicAuthorizationFailed {
		t.Fatalf("librdkafka CreateTopics without CREATE: %+v", res)
	}
}

// TestConfluentThrottle: librdkafka under a producer_byte_rate reports the
// broker's throttle in its statistics (brokers.*.throttle) and delivers
// every message.
func TestConfluentThrottle(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, QuotaWindowSize: 50 * time.Millisecond})
	scMust(t, c.CreateTopic("t", 1, 1, nil))
	scMust(t, c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("rdkafka-slow")}, quota.Op{Key: quota.ProducerByteRate, Value: 100_000}))
	cfg := kafka.ConfigMap{"bootstrap.servers": strings.Join(c.Bootstrap(), ","), "client.id": "rdkafka-slow", "log_level": 3,
		"go.logs.channel.enable": true, "statistics.interval.ms": 100, "linger.ms": 5, "compression.type": "none"}
	p, err := kafka.NewProducer(&cfg)
	scMust(t, err)
	defer p.Close()
	go func() {
		for range p.Logs() {
		}
	}()
	throttled := make(chan int, 1)
	delivered := make(chan error, 200)
	go func() {
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *kafka.Stats:
				var st struct {
					Brokers map[string]struct {
						Throttle struct {
							Max int `json:"max"`
						} `json:"throttle"`
					} `json:"brokers"`
				}
				if json.Unmarshal([]byte(e.String()), &st) == nil {
					for _, b := range st.Brokers {
						if b.Throttle.Max > 0 {
							select {
							case throttled <- b.Throttle.Max:
							default:
							}
						}
					}
				}
			case *kafka.Message:
				delivered <- e.TopicPartition.Error
			}
		}
	}()
	topic := "t"
	const n = 150
	for i := 0; i < n; i++ {
		scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: make([]byte, 1000)}, nil))
	}
	for i := 0; i < n; i++ {
		select {
		case err := <-delivered:
			scMust(t, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d delivered", i, n)
		}
	}
	select {
	case ms := <-throttled:
		t.Logf("librdkafka saw a throttle of up to %d ms", ms)
	case <-time.After(30 * time.Second):
		t.Fatal("librdkafka's statistics never showed a throttle")
	}
}
