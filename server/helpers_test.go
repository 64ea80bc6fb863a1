package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The helpers shared with control's tests (internal/testkit).
var (
	waitFor            = testkit.WaitFor
	testContext        = testkit.Context
	newClient          = testkit.NewClient
	scMust             = testkit.Must
	evLine             = testkit.EventLine
	containsEvent      = testkit.ContainsEvent
	txnLine            = testkit.TxnLine
	runTxn             = testkit.RunTxn
	firstRequestErr    = testkit.FirstRequestErr
	rawJoinRequest     = testkit.JoinRequest
	mustJoin           = testkit.MustJoin
	wantCode           = testkit.WantCode
	consumerMetadata   = testkit.ConsumerMetadata
	consumerAssignment = testkit.ConsumerAssignment
)

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

// waitTxnComplete waits until the coordinator has written id's markers:
// EndTxn answers once PrepareCommit (or PrepareAbort) is written, and the
// Complete state follows when every marker is in.
func waitTxnComplete(t *testing.T, c *Cluster, id string) {
	t.Helper()
	waitFor(t, 10*time.Second, id+"'s markers written", func() bool {
		for _, tx := range c.Transactions() {
			if tx.TransactionalID == id {
				return tx.State == "CompleteCommit" || tx.State == "CompleteAbort"
			}
		}
		return false
	})
}
