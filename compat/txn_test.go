package compat

import (
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func saramaTxnConfig(id string) *sarama.Config {
	cfg := saramaConfig(sarama.WaitForAll)
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = id
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	return cfg
}

// saramaReadCommitted reads n messages of topic/0 with sarama at
// read_committed.
func saramaReadCommitted(t *testing.T, c *server.Cluster, topic string, n int) []string {
	t.Helper()
	cons, err := sarama.NewConsumer(c.Bootstrap(), saramaTxnConfig(""))
	scMust(t, err)
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	scMust(t, err)
	defer pc.Close()
	var out []string
	timeout := time.After(20 * time.Second)
	for len(out) < n {
		select {
		case m := <-pc.Messages():
			out = append(out, string(m.Value))
		case err := <-pc.Errors():
			t.Fatalf("consume %s: %v", topic, err)
		case <-timeout:
			t.Fatalf("consumed %v, want %d messages", out, n)
		}
	}
	return out
}

// TestSaramaTransactions: sarama's transactional producer (transaction
// version 1: EndTxn below v5) commits and aborts, and a consume-transform-
// produce step commits its input offset in the transaction
// (AddOffsetsToTxn + TxnOffsetCommit). sarama and franz-go read_committed
// consumers see exactly the committed records, franz-go read_uncommitted
// all of them.
func TestSaramaTransactions(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{TransactionStatePartitions: 3})
	scMust(t, c.CreateTopic("stx", 1, 3, nil))
	scMust(t, c.CreateTopic("stx-in", 1, 3, nil))

	prod, err := sarama.NewSyncProducer(c.Bootstrap(), saramaTxnConfig("sarama-tx"))
	scMust(t, err)
	defer prod.Close()
	send := func(commit bool, values ...string) {
		t.Helper()
		scMust(t, prod.BeginTxn())
		for _, v := range values {
			scSend(t, prod, "stx", v)
		}
		if commit {
			scMust(t, prod.CommitTxn())
		} else {
			scMust(t, prod.AbortTxn())
		}
	}
	send(true, "c1", "c2")
	send(false, "a1")
	send(true, "c3")

	if got := saramaReadCommitted(t, c, "stx", 3); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("sarama read_committed: %v", got)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumeTopics("stx"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	scMust(t, err)
	defer cl.Close()
	var all []string
	ctx := t.Context()
	for len(all) < 4 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_uncommitted: %v", all)
		}
		fs.EachRecord(func(r *kgo.Record) { all = append(all, string(r.Value)) })
	}
	if !slices.Equal(all, []string{"c1", "c2", "a1", "c3"}) {
		t.Fatalf("franz-go read_uncommitted: %v", all)
	}

	// Consume-transform-produce: one input record, its output and its
	// offset in one transaction.
	plain, err := sarama.NewSyncProducer(c.Bootstrap(), saramaConfig(sarama.WaitForAll))
	scMust(t, err)
	defer plain.Close()
	scSend(t, plain, "stx-in", "in1")
	in := scConsume(t, c, "stx-in", 0, 1)[0]
	scMust(t, prod.BeginTxn())
	scSend(t, prod, "stx", "out-"+string(in.Value))
	scMust(t, prod.AddMessageToTxn(in, "sarama-etl", nil))
	scMust(t, prod.CommitTxn())
	if got := saramaReadCommitted(t, c, "stx", 4); got[3] != "out-in1" {
		t.Fatalf("read_committed after the transform: %v", got)
	}
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, "sarama-etl")
	scMust(t, err)
	if o, ok := offs.Lookup("stx-in", 0); !ok || o.At != 1 {
		t.Fatalf("committed input offset: %+v, want 1", o)
	}
	for _, ts := range c.Transactions() {
		if ts.TransactionalID == "sarama-tx" && ts.TransactionVersion != 1 {
			t.Fatalf("sarama's transaction: %+v, want transaction version 1", ts)
		}
	}
}
