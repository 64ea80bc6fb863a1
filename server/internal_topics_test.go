package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupAndTxn consumes three records of topic in a new group and commits,
// then commits a transaction of one record to it, as the reference
// scenario internal-topics-and-auto-creation does.
func groupAndTxn(t *testing.T, c *Cluster, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	prod := newClient(t, c, kgo.DefaultProduceTopic(topic))
	for i := range 3 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "a%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := newClient(t, c, kgo.ConsumerGroup(topic+"-group"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	for n := 0; n < 3; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: the group read %d of 3 records", topic, n)
		}
		n += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("%s: commit: %v", topic, err)
	}
	txn := newClient(t, c, kgo.TransactionalID(topic+"-txn"), kgo.DefaultProduceTopic(topic))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("t")}).FirstErr(); err != nil {
		t.Fatalf("%s: transactional produce: %v", topic, err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("%s: commit transaction: %v", topic, err)
	}
}

// TestDeleteInternalTopics: DeleteTopics of __consumer_offsets and
// __transaction_state succeeds, as in Kafka 4.4 (a clean-up that deletes
// every topic does it); the coordinators resign, and the next group and
// transaction find them again on topics created anew, empty.
func TestDeleteInternalTopics(t *testing.T) {
	c := NewTestCluster(t, Config{TransactionStatePartitions: 3})
	for _, topic := range []string{"before", "after"} {
		if err := c.CreateTopic(topic, 1, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	groupAndTxn(t, c, "before")
	adm := kadm.NewClient(newClient(t, c))
	ctx := testContext(t)
	oldOffsets := c.topic(offsetsTopic).id
	resps, err := adm.DeleteTopics(ctx, offsetsTopic, txnStateTopic)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			t.Fatalf("delete %s: %v", r.Topic, r.Err)
		}
	}
	if c.topic(offsetsTopic) != nil || c.topic(txnStateTopic) != nil {
		t.Fatal("an internal topic is still there")
	}
	groupAndTxn(t, c, "after")
	if o := c.topic(offsetsTopic); o == nil || o.id == oldOffsets || c.topic(txnStateTopic) == nil {
		t.Fatal("the internal topics were not created anew")
	}
	// The old group's commits went with the old topic.
	offs, err := adm.FetchOffsets(ctx, "before-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("before", 0); ok && o.At >= 0 {
		t.Fatalf("the deleted topic's commit is still there: %+v", o)
	}
}
