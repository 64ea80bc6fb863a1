package matrix

import (
	"context"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What the Go clients do between a transaction's records and its end:
// send txn.Offsets to the transaction, then run txn.BeforeEnd.

// kgoTxnOffsets sends the offsets with AddOffsetsToTxn and TxnOffsetCommit
// at the client's producer id and epoch: franz-go's own API sends offsets
// only from a GroupTransactSession, a member of the group.
func kgoTxnOffsets(ctx context.Context, cl *kgo.Client, txnID string, txn Txn) error {
	if o := txn.Offsets; o != nil {
		id, epoch, err := cl.ProducerID(ctx)
		if err != nil {
			return err
		}
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID, id, epoch, o.Group
		addResp, err := add.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
			return err
		}
		commit := kmsg.NewPtrTxnOffsetCommitRequest()
		commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = txnID, o.Group, id, epoch
		commit.Generation = -1 // not a member: a group with no generation
		// From v6 the topic goes by id (Kafka 4.2+): look it up, as a
		// client does from its metadata.
		meta := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(o.Topic)
		meta.Topics = append(meta.Topics, mt)
		metaResp, err := meta.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		t := kmsg.NewTxnOffsetCommitRequestTopic()
		t.Topic = o.Topic
		if len(metaResp.Topics) == 1 {
			t.TopicID = metaResp.Topics[0].TopicID
		}
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = o.Partition, o.Offset, -1
		t.Partitions = append(t.Partitions, p)
		commit.Topics = append(commit.Topics, t)
		commitResp, err := commit.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		for _, t := range commitResp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return err
				}
			}
		}
	}
	return beforeEnd(txn)
}

func saramaTxnOffsets(prod sarama.SyncProducer, txn Txn) error {
	if o := txn.Offsets; o != nil {
		offsets := map[string][]*sarama.PartitionOffsetMetadata{o.Topic: {{Partition: o.Partition, Offset: o.Offset}}}
		if err := prod.AddOffsetsToTxn(offsets, o.Group); err != nil {
			return err
		}
	}
	return beforeEnd(txn)
}

// confluentTxnOffsets sends the offsets with the group metadata of a
// consumer that never joined (generation -1), as librdkafka's API needs one.
func confluentTxnOffsets(ctx context.Context, p *kafka.Producer, txn Txn) error {
	if o := txn.Offsets; o != nil {
		md, err := kafka.NewTestConsumerGroupMetadata(o.Group)
		if err != nil {
			return err
		}
		topic := o.Topic
		tp := kafka.TopicPartition{Topic: &topic, Partition: o.Partition, Offset: kafka.Offset(o.Offset)}
		if err := p.SendOffsetsToTransaction(ctx, []kafka.TopicPartition{tp}, md); err != nil {
			return err
		}
	}
	return beforeEnd(txn)
}

func beforeEnd(txn Txn) error {
	if txn.BeforeEnd == nil {
		return nil
	}
	return txn.BeforeEnd()
}
