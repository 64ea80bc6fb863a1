package reference

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"syscall"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The secured reference cluster that the ACL table (acl_table_test.go)
// runs on: one broker and one controller, a SASL_PLAINTEXT client listener
// with PLAIN users, Kafka's StandardAuthorizer and super users. One broker
// keeps it fast and puts every group and transaction coordinator on the
// broker the table talks to. Brokers reach the controller (and themselves,
// INTERNAL) over PLAINTEXT, as User:ANONYMOUS, which is therefore a super
// user too: no client connects there.

// SecureUsers are the PLAIN users of both secured clusters; each password
// is the name with "-secret".
var SecureUsers = []string{"admin", "alice", "bob", "carol", "dave"}

// SecureSuperUsers is super.users of both secured clusters.
var SecureSuperUsers = []string{"User:admin", "User:ANONYMOUS"}

const standardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// secureSettings replace KafkaSettings on the one-broker cluster.
var secureSettings = map[string]string{
	"default.replication.factor":                       "1",
	"offsets.topic.replication.factor":                 "1",
	"transaction.state.log.replication.factor":         "1",
	"transaction.state.log.min.isr":                    "1",
	"share.coordinator.state.topic.replication.factor": "1",
}

func password(user string) string { return user + "-secret" }

// StartSecureKafka starts the secured reference cluster.
func StartSecureKafka() (*Kafka, error) { return startKafka(1, true, nil) }

// secureProps are a node's listener and authorizer settings.
func (k *Kafka) secureProps(node int32) []string {
	common := []string{
		"authorizer.class.name=" + standardAuthorizer,
		"super.users=" + strings.Join(SecureSuperUsers, ";"),
	}
	if node == ControllerID {
		return append(common, "process.roles=controller",
			"listener.security.protocol.map=CONTROLLER:PLAINTEXT",
			fmt.Sprintf("listeners=CONTROLLER://127.0.0.1:%d", k.ports[node]))
	}
	var jaas strings.Builder
	jaas.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
	for _, u := range SecureUsers {
		fmt.Fprintf(&jaas, " user_%s=%q", u, password(u))
	}
	jaas.WriteString(";")
	addrs := fmt.Sprintf("SASL_PLAINTEXT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d", k.ports[node], k.internal[node])
	return append(common, "process.roles=broker",
		"listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners="+addrs, "advertised.listeners="+addrs, "inter.broker.listener.name=INTERNAL",
		"sasl.enabled.mechanisms=PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config="+jaas.String())
}

// RestartWith adds key=value to every node's server.properties and restarts
// them one by one, the controller first (on the same ports and data): for a
// static setting such as allow.everyone.if.no.acl.found, which the
// controller's authorizer needs too (it authorizes what brokers forward).
func (k *Kafka) RestartWith(key, value string) error {
	k.mu.Lock()
	if k.extra == nil {
		k.extra = map[string]string{}
	}
	k.extra[key] = value
	k.mu.Unlock()
	nodes := []int32{ControllerID}
	for i := 1; i <= k.brokers; i++ {
		nodes = append(nodes, int32(i))
	}
	for _, n := range nodes {
		if err := k.stop(n, syscall.SIGTERM, 60*time.Second); err != nil {
			return err
		}
		if err := k.writeProps(n); err != nil {
			return err
		}
		if err := k.launch(n); err != nil {
			return err
		}
	}
	return k.waitReady(60 * time.Second)
}

// readyAddr is where waitReady asks a broker for Metadata: the client
// listener, or on the secured cluster the PLAINTEXT inter-broker one.
func (k *Kafka) readyAddr(id int32) string {
	if k.secure {
		return fmt.Sprintf("127.0.0.1:%d", k.internal[id])
	}
	return k.Addr(id)
}

// NewSecureFake starts fakekafka configured as the secured reference
// cluster: one broker, a SASL_PLAINTEXT listener with the same PLAIN users,
// the authorizer and the same super users; allowEveryone is
// allow.everyone.if.no.acl.found.
func NewSecureFake(allowEveryone bool) (*Fake, error) {
	users := map[string]string{}
	for _, u := range SecureUsers {
		users[u] = password(u)
	}
	configs := maps.Clone(KafkaSettings)
	maps.Copy(configs, secureSettings)
	c, err := server.NewCluster(server.Config{
		Brokers:                       1,
		Listeners:                     []server.Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
		SASLUsers:                     users,
		SASLMechanisms:                []string{"PLAIN"},
		Authorizer:                    true,
		SuperUsers:                    SecureSuperUsers,
		AllowEveryoneIfNoACLFound:     allowEveryone,
		DefaultReplicationFactor:      1,
		MinInsyncReplicas:             1,
		NumPartitions:                 1,
		ReplicaLagTimeMax:             replicaLagTimeMax,
		BrokerSessionTimeout:          sessionTimeout,
		OffsetsTopicPartitions:        3,
		OffsetsTopicReplicationFactor: 1,
		TransactionStatePartitions:    3,
		BrokerConfigs:                 configs,
	})
	if err != nil {
		return nil, err
	}
	return &Fake{Cluster: c}, nil
}

// LoginPlain authenticates the connection as user with SASL/PLAIN
// (SaslHandshake v1, then SaslAuthenticate v2).
func (c *Conn) LoginPlain(ctx context.Context, user string) error {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	resp, err := c.Do(ctx, hs)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode); err != nil {
		return fmt.Errorf("SaslHandshake: %w", err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(2)
	auth.SASLAuthBytes = []byte("\x00" + user + "\x00" + password(user))
	resp, err = c.Do(ctx, auth)
	if err != nil {
		return err
	}
	if r := resp.(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
		return fmt.Errorf("SaslAuthenticate as %s: %w (%v)", user, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	return nil
}
