package matrix

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	kafkago "github.com/segmentio/kafka-go"
	kafkagoscram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The SecureRoundTrip of each Go client and kcat: the same produce, then
// consume, with the library's own TLS and SASL settings.

func tlsFromCA(file string) (*tls.Config, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", file)
	}
	return &tls.Config{RootCAs: pool}, nil
}

func (FranzGo) SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error) {
	tc, err := tlsFromCA(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	auth := scram.Auth{User: cfg.User, Pass: cfg.Password, IsToken: cfg.TokenAuth}
	mech := auth.AsSha256Mechanism()
	if cfg.Mechanism == "SCRAM-SHA-512" {
		mech = auth.AsSha512Mechanism()
	}
	cl, err := kgo.NewClient(append(kgoBase(cfg.Bootstrap, cfg.ClientID), kgo.DialTLSConfig(tc), kgo.SASL(mech),
		kgo.DefaultProduceTopic(cfg.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {0: kgo.NewOffset().At(0)}}))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	// franz-go retries a record through failed connections, authentication
	// included, until its delivery timeout (none by default); an
	// application checks its credentials up front with Ping.
	if err := cl.Ping(ctx); err != nil {
		return nil, err
	}
	for _, r := range records {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(r.Key), Value: []byte(r.Value)}).FirstErr(); err != nil {
			return nil, err
		}
	}
	var got []Record
	for len(got) < len(records) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return got, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, Record{Partition: r.Partition, Offset: r.Offset, Key: string(r.Key), Value: string(r.Value)})
		})
	}
	return got, nil
}

func (Sarama) SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error) {
	tc, err := tlsFromCA(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	sc := saramaBase(cfg.ClientID)
	sc.Producer.RequiredAcks = sarama.WaitForAll
	sc.Producer.Return.Successes = true
	sc.Producer.Partitioner = sarama.NewManualPartitioner
	sc.Net.TLS.Enable, sc.Net.TLS.Config = true, tc
	sc.Net.SASL.Enable, sc.Net.SASL.Version = true, sarama.SASLHandshakeV1
	sc.Net.SASL.Mechanism = sarama.SASLMechanism(cfg.Mechanism)
	sc.Net.SASL.User, sc.Net.SASL.Password = cfg.User, cfg.Password
	mech := scram.Auth.AsSha256Mechanism
	if cfg.Mechanism == "SCRAM-SHA-512" {
		mech = scram.Auth.AsSha512Mechanism
	}
	sc.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &SaramaSCRAM{Mech: mech} }
	prod, err := sarama.NewSyncProducer(cfg.Bootstrap, sc)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	for _, r := range records {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: cfg.Topic, Partition: 0, Key: sarama.StringEncoder(r.Key), Value: sarama.StringEncoder(r.Value)}); err != nil {
			return nil, err
		}
	}
	cons, err := sarama.NewConsumer(cfg.Bootstrap, sc)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(cfg.Topic, 0, 0)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	var got []Record
	for len(got) < len(records) {
		select {
		case m := <-pc.Messages():
			got = append(got, Record{Partition: m.Partition, Offset: m.Offset, Key: string(m.Key), Value: string(m.Value)})
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
	return got, nil
}

func (KafkaGo) SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error) {
	tc, err := tlsFromCA(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	algo := kafkagoscram.SHA256
	if cfg.Mechanism == "SCRAM-SHA-512" {
		algo = kafkagoscram.SHA512
	}
	mech, err := kafkagoscram.Mechanism(algo, cfg.User, cfg.Password)
	if err != nil {
		return nil, err
	}
	tr := kafkaGoTransport(cfg.ClientID)
	tr.TLS, tr.SASL = tc, mech
	w := &kafkago.Writer{Addr: kafkago.TCP(cfg.Bootstrap...), Topic: cfg.Topic, Transport: tr, RequiredAcks: kafkago.RequireAll,
		Balancer: kafkaGoPartition0{}, BatchTimeout: time.Millisecond}
	defer w.Close()
	for _, r := range records {
		if err := w.WriteMessages(ctx, kafkago.Message{Key: []byte(r.Key), Value: []byte(r.Value)}); err != nil {
			return nil, err
		}
	}
	rd := kafkago.NewReader(kafkago.ReaderConfig{Brokers: cfg.Bootstrap, Topic: cfg.Topic, Partition: 0, MaxWait: 100 * time.Millisecond,
		Dialer: &kafkago.Dialer{ClientID: cfg.ClientID, Timeout: 10 * time.Second, TLS: tc, SASLMechanism: mech}})
	defer rd.Close()
	var got []Record
	for len(got) < len(records) {
		m, err := rd.ReadMessage(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, Record{Partition: int32(m.Partition), Offset: m.Offset, Key: string(m.Key), Value: string(m.Value)})
	}
	return got, nil
}

// kafkaGoPartition0 sends every message to partition 0.
type kafkaGoPartition0 struct{}

func (kafkaGoPartition0) Balance(kafkago.Message, ...int) int { return 0 }

func confluentSecure(cfg SecurityConfig) kafka.ConfigMap {
	cm := confluentBase(cfg.Bootstrap, cfg.ClientID)
	cm["security.protocol"] = "SASL_SSL"
	cm["sasl.mechanisms"] = cfg.Mechanism
	if cfg.Mechanism == "OAUTHBEARER" {
		// librdkafka's own OIDC client: the client credentials grant.
		cm["sasl.oauthbearer.method"] = "oidc"
		cm["sasl.oauthbearer.client.id"], cm["sasl.oauthbearer.client.secret"] = cfg.User, cfg.Password
		cm["sasl.oauthbearer.token.endpoint.url"] = cfg.TokenEndpointURL
		if cfg.Scope != "" {
			cm["sasl.oauthbearer.scope"] = cfg.Scope
		}
	} else {
		cm["sasl.username"], cm["sasl.password"] = cfg.User, cfg.Password
	}
	cm["ssl.ca.location"] = cfg.CAFile
	return cm
}

func (Confluent) SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error) {
	pcm := confluentSecure(cfg)
	pcm["acks"] = "all"
	p, err := kafka.NewProducer(&pcm)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	go func() {
		for range p.Logs() {
		}
	}()
	topic := cfg.Topic
	for _, r := range records {
		ch := make(chan kafka.Event, 1)
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Key: []byte(r.Key), Value: []byte(r.Value)}, ch); err != nil {
			return nil, err
		}
		select {
		case e := <-ch:
			if m := e.(*kafka.Message); m.TopicPartition.Error != nil {
				return nil, m.TopicPartition.Error
			}
		case e := <-p.Events():
			// librdkafka reports a failed authentication as an error
			// event and keeps the record queued, retrying.
			if ke, ok := e.(kafka.Error); ok && ke.Code() == kafka.ErrAuthentication {
				return nil, ke
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ccm := confluentSecure(cfg)
	ccm["group.id"] = cfg.ClientID
	c, err := kafka.NewConsumer(&ccm)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	go func() {
		for range c.Logs() {
		}
	}()
	if err := c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: 0}}); err != nil {
		return nil, err
	}
	var got []Record
	for len(got) < len(records) {
		if ctx.Err() != nil {
			return got, ctx.Err()
		}
		m, err := c.ReadMessage(100 * time.Millisecond)
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrTimedOut {
			continue
		} else if err != nil {
			return got, err
		}
		got = append(got, Record{Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset), Key: string(m.Key), Value: string(m.Value)})
	}
	return got, nil
}

func (Kcat) SecureRoundTrip(ctx context.Context, cfg SecurityConfig, records []Record) ([]Record, error) {
	path, err := kcatPath()
	if err != nil {
		return nil, err
	}
	args := append(kcatBase(cfg.Bootstrap, cfg.ClientID), "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms="+cfg.Mechanism,
		"-X", "sasl.username="+cfg.User, "-X", "sasl.password="+cfg.Password, "-X", "ssl.ca.location="+cfg.CAFile, "-t", cfg.Topic, "-p", "0")
	var in strings.Builder
	for _, r := range records {
		in.WriteString(r.Key + "\t" + r.Value + "\n")
	}
	prod := exec.CommandContext(ctx, path, append(args, "-P", "-K", "\t", "-X", "acks=all")...)
	prod.Stdin = strings.NewReader(in.String())
	if out, err := prod.CombinedOutput(); err != nil {
		return nil, &kcatError{text: kcatFirstError(string(out), fmt.Sprintf("kcat -P: %v: %s", err, out))}
	}
	cons := exec.CommandContext(ctx, path, append(args, "-C", "-o", "beginning", "-c", fmt.Sprint(len(records)), "-f", "%o\t%k\t%s\n")...)
	out, err := cons.Output()
	if err != nil {
		return nil, &kcatError{text: fmt.Sprintf("kcat -C: %v", err)}
	}
	var got []Record
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			return got, fmt.Errorf("kcat printed %q", line)
		}
		var off int64
		fmt.Sscan(f[0], &off)
		got = append(got, Record{Offset: off, Key: f[1], Value: f[2]})
	}
	return got, nil
}

// kcatBrokerSuffix is where a "% ERROR: " line's own text ends and the
// broker's address and details begin.
var kcatBrokerSuffix = regexp.MustCompile(`: [a-z_]+://.*$`)

// kcatFirstError is the text of the first "% ERROR: " line of kcat's
// output without the broker's address ("Local: Authentication failure"),
// or otherwise if there is none.
func kcatFirstError(out, otherwise string) string {
	for _, line := range strings.Split(out, "\n") {
		if text, ok := strings.CutPrefix(line, "% ERROR: "); ok {
			return kcatBrokerSuffix.ReplaceAllString(text, "")
		}
	}
	return otherwise
}
