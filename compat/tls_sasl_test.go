package compat

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/compat/matrix"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// secured is a cluster with SASL_PLAINTEXT, SASL_SSL and SSL listeners, the
// user alice and its TLS files (ca.pem, client.pem, client.key) in dir.
func secured(t *testing.T, clientAuth string) (c *server.Cluster, dir string) {
	dir = t.TempDir()
	c = server.NewTestCluster(t, server.Config{
		Listeners: []server.Listener{
			{Name: "PLAINTEXT", Listen: "127.0.0.1:0"},
			{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"},
			{Name: "SASL_SSL", Listen: "127.0.0.1:0"},
			{Name: "SSL", Listen: "127.0.0.1:0"},
		},
		SASLUsers:     map[string]string{"alice": "alice-secret"},
		TLSDir:        dir,
		TLSClientAuth: clientAuth,
	})
	return c, dir
}

func listenerAddrs(t *testing.T, c *server.Cluster, name string) []string {
	for _, l := range c.Listeners() {
		if l.Name == name {
			var out []string
			for _, b := range l.Brokers {
				out = append(out, b.Advertised)
			}
			return out
		}
	}
	t.Fatalf("no listener %s", name)
	return nil
}

// authenticated waits for the broker's client_authenticated event.
func authenticated(t *testing.T, c *server.Cluster, mech, principal string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Reason == mech && e.Detail == principal
	}); err != nil {
		t.Fatalf("no client_authenticated event for %s %s", mech, principal)
	}
}

type tokenProvider string

func (p tokenProvider) Token() (*sarama.AccessToken, error) {
	return &sarama.AccessToken{Token: string(p)}, nil
}

func unsecuredJWS(sub string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(`{"alg":"none"}`)) + "." + e([]byte(fmt.Sprintf(`{"sub":%q,"exp":%d}`, sub, time.Now().Add(time.Hour).Unix()))) + "."
}

// saramaRoundTrip produces 10 records to topic and consumes them back.
func saramaRoundTrip(t *testing.T, addrs []string, cfg *sarama.Config, topic string) error {
	prod, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		return err
	}
	defer prod.Close()
	for i := range 10 {
		if _, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil || off != int64(i) {
			return fmt.Errorf("send %d: offset %d, %v", i, off, err)
		}
	}
	cons, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		return err
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return err
	}
	defer pc.Close()
	for i := range 10 {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(i) || string(m.Value) != fmt.Sprint(i) {
				return fmt.Errorf("consumed offset %d value %q, want %d", m.Offset, m.Value, i)
			}
		case <-time.After(20 * time.Second):
			return fmt.Errorf("record %d not consumed", i)
		}
	}
	return nil
}

func TestSaramaSASL(t *testing.T) {
	c, _ := secured(t, "")
	cases := []struct {
		name, listener, mech, user, pass string
		version                          int16
		principal                        string
	}{
		{"PLAIN v0", "SASL_PLAINTEXT", sarama.SASLTypePlaintext, "alice", "alice-secret", sarama.SASLHandshakeV0, "User:alice"},
		{"PLAIN v1", "SASL_PLAINTEXT", sarama.SASLTypePlaintext, "alice", "alice-secret", sarama.SASLHandshakeV1, "User:alice"},
		{"SCRAM-SHA-256 v0", "SASL_PLAINTEXT", sarama.SASLTypeSCRAMSHA256, "alice", "alice-secret", sarama.SASLHandshakeV0, "User:alice"},
		{"SCRAM-SHA-512 v1", "SASL_PLAINTEXT", sarama.SASLTypeSCRAMSHA512, "alice", "alice-secret", sarama.SASLHandshakeV1, "User:alice"},
		{"OAUTHBEARER", "SASL_PLAINTEXT", sarama.SASLTypeOAuth, "", "", sarama.SASLHandshakeV1, "User:olga"},
		{"SASL_SSL SCRAM-SHA-512", "SASL_SSL", sarama.SASLTypeSCRAMSHA512, "alice", "alice-secret", sarama.SASLHandshakeV1, "User:alice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := saramaConfig(sarama.WaitForAll)
			cfg.Net.SASL.Enable = true
			cfg.Net.SASL.Mechanism = sarama.SASLMechanism(tc.mech)
			cfg.Net.SASL.Version = tc.version
			cfg.ApiVersionsRequest = tc.version != sarama.SASLHandshakeV0 // sarama's rule for the v0 flow
			cfg.Net.SASL.User, cfg.Net.SASL.Password = tc.user, tc.pass
			switch tc.mech {
			case sarama.SASLTypeSCRAMSHA256:
				cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &matrix.SaramaSCRAM{Mech: scram.Auth.AsSha256Mechanism} }
			case sarama.SASLTypeSCRAMSHA512:
				cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &matrix.SaramaSCRAM{Mech: scram.Auth.AsSha512Mechanism} }
			case sarama.SASLTypeOAuth:
				cfg.Net.SASL.TokenProvider = tokenProvider(unsecuredJWS("olga"))
			}
			if tc.listener == "SASL_SSL" {
				cfg.Net.TLS.Enable = true
				cfg.Net.TLS.Config = c.ClientTLSConfig()
			}
			topic := "sarama-" + strings.NewReplacer(" ", "-", "_", "-").Replace(strings.ToLower(tc.name))
			if err := saramaRoundTrip(t, listenerAddrs(t, c, tc.listener), cfg, topic); err != nil {
				t.Fatal(err)
			}
			authenticated(t, c, tc.mech, tc.principal)
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		cfg := saramaConfig(sarama.WaitForAll)
		cfg.Net.SASL.Enable, cfg.Net.SASL.Version = true, sarama.SASLHandshakeV1
		cfg.Net.SASL.User, cfg.Net.SASL.Password = "alice", "wrong"
		cfg.Metadata.Retry.Max = 0
		_, err := sarama.NewClient(listenerAddrs(t, c, "SASL_PLAINTEXT"), cfg)
		if !errors.Is(err, sarama.ErrSASLAuthenticationFailed) {
			t.Fatalf("err %v, want ErrSASLAuthenticationFailed", err)
		}
	})
}

// TestConfluentSASLSSL: librdkafka through confluent-kafka-go, SCRAM over
// TLS with the CA file the cluster wrote.
func TestConfluentSASLSSL(t *testing.T) {
	c, dir := secured(t, "")
	base := kafka.ConfigMap{
		"bootstrap.servers": strings.Join(listenerAddrs(t, c, "SASL_SSL"), ","),
		"security.protocol": "SASL_SSL",
		"sasl.mechanisms":   "SCRAM-SHA-256",
		"sasl.username":     "alice",
		"sasl.password":     "alice-secret",
		"ssl.ca.location":   filepath.Join(dir, "ca.pem"),
		"log_level":         3,
	}
	pcfg := kafka.ConfigMap{"acks": "all"}
	for k, v := range base {
		pcfg[k] = v
	}
	p, err := kafka.NewProducer(&pcfg)
	scMust(t, err)
	defer p.Close()
	topic := "confluent-sasl-ssl"
	for i := range 5 {
		ch := make(chan kafka.Event, 1)
		scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(fmt.Sprint(i))}, ch))
		select {
		case e := <-ch:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil || int64(m.TopicPartition.Offset) != int64(i) {
				t.Fatalf("delivery %d: %v at %v", i, m.TopicPartition.Error, m.TopicPartition.Offset)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("delivery %d timed out", i)
		}
	}
	authenticated(t, c, "SCRAM-SHA-256", "User:alice")
	ccfg := kafka.ConfigMap{"group.id": "confluent-sasl", "auto.offset.reset": "earliest"}
	for k, v := range base {
		ccfg[k] = v
	}
	cons, err := kafka.NewConsumer(&ccfg)
	scMust(t, err)
	defer cons.Close()
	scMust(t, cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}))
	for i := 0; i < 5; {
		m, err := cons.ReadMessage(30 * time.Second)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if int64(m.TopicPartition.Offset) != int64(i) || string(m.Value) != fmt.Sprint(i) {
			t.Fatalf("consumed offset %v value %q, want %d", m.TopicPartition.Offset, m.Value, i)
		}
		i++
	}

	// A wrong password: librdkafka reports an authentication error.
	bad := kafka.ConfigMap{}
	for k, v := range base {
		bad[k] = v
	}
	bad["sasl.password"] = "wrong"
	bp, err := kafka.NewProducer(&bad)
	scMust(t, err)
	defer bp.Close()
	deadline := time.After(30 * time.Second)
	for authErr := false; !authErr; {
		select {
		case e := <-bp.Events():
			if ke, ok := e.(kafka.Error); ok {
				authErr = ke.Code() == kafka.ErrAuthentication && strings.Contains(ke.String(), "invalid credentials with SASL mechanism SCRAM")
			}
		case <-deadline:
			t.Fatal("no authentication error for a wrong password")
		}
	}
}

// TestKcatSASLSSLAndMutualTLS: kcat (librdkafka) with SASL_SSL, then with
// the client certificate the cluster wrote, whose subject becomes the
// principal.
func TestKcatSASLSSLAndMutualTLS(t *testing.T) {
	c, dir := secured(t, server.TLSClientAuthRequired)
	ca := filepath.Join(dir, "ca.pem")
	sasl := []string{"-b", strings.Join(listenerAddrs(t, c, "SASL_SSL"), ","), "-X", "security.protocol=SASL_SSL",
		"-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X", "ssl.ca.location=" + ca}
	kcat(t, "one\ntwo\nthree\n", append(sasl, "-P", "-t", "kcat-sasl", "-p", "0")...)
	if got := kcat(t, "", append(sasl, "-C", "-t", "kcat-sasl", "-p", "0", "-o", "beginning", "-c", "3", "-f", "%o:%s\n")...); got != "0:one\n1:two\n2:three\n" {
		t.Fatalf("kcat over SASL_SSL consumed %q", got)
	}
	authenticated(t, c, "SCRAM-SHA-512", "User:alice")

	if _, err := os.Stat(filepath.Join(dir, "client.pem")); err != nil {
		t.Fatal(err)
	}
	mtls := []string{"-b", strings.Join(listenerAddrs(t, c, "SSL"), ","), "-X", "security.protocol=SSL", "-X", "ssl.ca.location=" + ca,
		"-X", "ssl.certificate.location=" + filepath.Join(dir, "client.pem"), "-X", "ssl.key.location=" + filepath.Join(dir, "client.key")}
	if got := kcat(t, "", append(mtls, "-C", "-t", "kcat-sasl", "-p", "0", "-o", "beginning", "-c", "3", "-f", "%s,")...); got != "one,two,three," {
		t.Fatalf("kcat over SSL consumed %q", got)
	}
	authenticated(t, c, "SSL", "User:CN=client")
}
