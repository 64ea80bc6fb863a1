//go:build cgo

package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

func init() { newRdkafkaTarget = func() Target { return rdkafkaTarget{} } }

// librdkafka's mock cluster (through confluent-kafka-go), in this process:
// 3 brokers; topics are created at rf=3 through the mock's own API (it does
// not serve CreateTopics, so kadm cannot), which it reports but does not
// replicate.
type rdkafkaTarget struct{}

func (rdkafkaTarget) Name() string { return "librdkafka-mock" }
func (rdkafkaTarget) Caps() Caps   { return Caps{Brokers: 3, RF3: true, Stores: true} }

type rdkafkaInstance struct{ mc *kafka.MockCluster }

func (rdkafkaTarget) Start(ctx context.Context, topics []TopicSpec) (Instance, error) {
	mc, err := kafka.NewMockCluster(3)
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		if err := mc.CreateTopic(t.Name, int(t.Partitions), 3); err != nil {
			mc.Close()
			return nil, fmt.Errorf("create topic %s: %w", t.Name, err)
		}
	}
	return rdkafkaInstance{mc}, nil
}

// ClientOpts caps ApiVersions at v2: the mock answers v3 and v4 with a
// body franz-go cannot parse instead of Kafka's v0 UNSUPPORTED_VERSION.
func (rdkafkaTarget) ClientOpts() []kgo.Opt {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(18, 2)
	return []kgo.Opt{kgo.MaxVersions(vs)}
}

func (i rdkafkaInstance) Bootstrap() []string { return strings.Split(i.mc.BootstrapServers(), ",") }
func (i rdkafkaInstance) Close()              { i.mc.Close() }
