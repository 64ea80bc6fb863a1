package server

import (
	"context"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitFor polls cond until it holds or timeout passes, then fails the test.
// Tests wait on conditions, never on sleeps.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
}

// newClient returns a franz-go client on c, closed at the end of the test.
func newClient(t testing.TB, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawProduce is a Produce request of one plain record to topic/0, for the
// acks and timeouts no client library lets a test set exactly.
func rawProduce(t testing.TB, topic string, acks int16, timeoutMillis int32, value string) *kmsg.ProduceRequest {
	t.Helper()
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
		[]protocol.Record{{Value: []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	return produceBatchRequest(topic, acks, timeoutMillis, batch)
}

// produceBatchRequest is a Produce request of batch to topic/0.
func produceBatchRequest(topic string, acks int16, timeoutMillis int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, timeoutMillis
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// topicState picks topic name out of a snapshot (empty if it is not there).
func topicState(s ClusterState, name string) TopicState {
	for _, t := range s.Topics {
		if t.Name == name {
			return t
		}
	}
	return TopicState{}
}
