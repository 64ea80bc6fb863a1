package compat

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/fakekafka/fakekafka/server"
)

// anonACL grants User:ANONYMOUS (every PLAINTEXT client) op on a topic.
func anonACL(topic string, op authorizer.Operation) authorizer.ACL {
	return authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: topic, Pattern: authorizer.PatternLiteral,
		Principal: "User:ANONYMOUS", Host: "*", Operation: op, Permission: authorizer.PermissionAllow}
}

// TestSaramaACLs: sarama's producer gets TOPIC_AUTHORIZATION_FAILED
// without WRITE and succeeds once it is granted; its admin client lists
// only the topics it may describe and cannot create one without CREATE.
func TestSaramaACLs(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, Authorizer: true})
	for _, name := range []string{"t", "secret"} {
		if err := c.CreateTopic(name, 1, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateACLs(anonACL("t", authorizer.OpDescribe)); err != nil {
		t.Fatal(err)
	}
	cfg := saramaConfig(sarama.WaitForLocal)
	cfg.Producer.Retry.Max = 0
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "t", Value: sarama.StringEncoder("v")}); !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
		t.Fatalf("sarama produce without WRITE: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if err := c.CreateACLs(anonACL("t", authorizer.OpWrite)); err != nil {
		t.Fatal(err)
	}
	if _, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "t", Value: sarama.StringEncoder("v")}); err != nil || off != 0 {
		t.Fatalf("sarama produce with WRITE: offset %d, %v", off, err)
	}

	adm, err := sarama.NewClusterAdmin(c.Bootstrap(), saramaConfig(sarama.WaitForLocal))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	topics, err := adm.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := topics["secret"]; ok || len(topics) != 1 {
		t.Fatalf("sarama ListTopics: %v, want only t", topics)
	}
	err = adm.CreateTopic("new", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false)
	if !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
		t.Fatalf("sarama CreateTopic without CREATE: %v", err)
	}
}

// TestSaramaThrottle: a Produce from sarama's client id under a
// producer_byte_rate comes back with Kafka's throttle time.
func TestSaramaThrottle(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	cfg := saramaConfig(sarama.WaitForLocal)
	cfg.ClientID = "sarama-slow"
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("sarama-slow")}, quota.Op{Key: quota.ProducerByteRate, Value: 1000}); err != nil {
		t.Fatal(err)
	}
	client, err := sarama.NewClient(c.Bootstrap(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	b, err := client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	req := &sarama.ProduceRequest{RequiredAcks: sarama.WaitForLocal, Timeout: 5000, Version: 7}
	req.AddBatch("t", 0, &sarama.RecordBatch{Version: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		Records: []*sarama.Record{{Value: make([]byte, 30000)}}})
	resp, err := b.Produce(req)
	if err != nil {
		t.Fatal(err)
	}
	if blk := resp.GetBlock("t", 0); blk == nil || blk.Err != sarama.ErrNoError {
		t.Fatalf("produce: %+v", blk)
	}
	// 30 kB into a fresh 10 s window is 3 kB/s against 1 kB/s: about 20 s.
	if resp.ThrottleTime < 19_000_000_000 || resp.ThrottleTime > 21_000_000_000 {
		t.Fatalf("throttle %v, want about 20s", resp.ThrottleTime)
	}
}
