package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnAnswersAsKafka: details of transactional answers that the
// reference corpus compared with Kafka 4.4 (compat/reference): a
// verify-only AddPartitionsToTxn (v4+) answers TRANSACTION_ABORTABLE for a
// partition outside the open transaction, and DescribeTransactions of an
// unknown id answers zeros beside TRANSACTIONAL_ID_NOT_FOUND.
func TestTxnAnswersAsKafka(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("va", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newClient(t, c, kgo.TransactionalID("verify"), kgo.DefaultProduceTopic("va"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("x"), Partition: 0}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var open TransactionState
	for _, ts := range c.Transactions() {
		if ts.TransactionalID == "verify" {
			open = ts
		}
	}

	cl := newClient(t, c)
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 5
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "verify", open.ProducerID, open.ProducerEpoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = "va", []int32{0, 1}
	tx.Topics = append(tx.Topics, tt)
	req.Transactions = append(req.Transactions, tx)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int32]int16{}
	for _, rt := range resp.Transactions {
		for _, rtt := range rt.Topics {
			for _, rp := range rtt.Partitions {
				codes[rp.Partition] = rp.ErrorCode
			}
		}
	}
	if resp.ErrorCode != 0 || codes[0] != 0 || codes[1] != kerr.TransactionAbortable.Code {
		t.Fatalf("verify-only: %v, partitions %v: want 0 for the added partition and TRANSACTION_ABORTABLE for the other", errorName(resp.ErrorCode), codes)
	}
	if err := p.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{"nobody"}
	dr, err := d.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if s := dr.TransactionStates[0]; s.ErrorCode != kerr.TransactionalIDNotFound.Code || s.ProducerID != 0 || s.ProducerEpoch != 0 || s.StartTimestamp != 0 {
		t.Fatalf("unknown id: %v producer %d epoch %d start %d, want TRANSACTIONAL_ID_NOT_FOUND and zeros", errorName(s.ErrorCode), s.ProducerID, s.ProducerEpoch, s.StartTimestamp)
	}
}
