package server

import (
	"fmt"
	grp "github.com/fakekafka/fakekafka/group"
	"log/slog"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

// Config describes a cluster. The zero value is a usable three-broker
// cluster on loopback with Kafka's defaults; set only what a test needs.
type Config struct {
	// Brokers is the number of brokers, with ids 1..Brokers. Default 3.
	Brokers int
	// Listen is the first broker's address. With port 0 (the default,
	// "127.0.0.1:0") every broker takes a free port; with a fixed port the
	// others take the next ports.
	Listen string
	// AdvertisedHost is the host clients are told to connect to. Default:
	// the listen host.
	AdvertisedHost string
	// Listeners replaces Listen (which it makes ignored) with several named
	// listeners per broker (Kafka's listeners and advertised.listeners). Clients connected on a
	// listener are told that listener's addresses. AdvertisedHost is the
	// default advertised host of those on a wildcard address.
	Listeners []Listener
	// AwaitAdvertised names a listener whose advertised addresses must be
	// set at runtime (SetAdvertised, PUT /v1/listeners/{name}) before the
	// cluster reports ready (Ready, GET /readyz): a container learns its
	// published ports only after it started.
	AwaitAdvertised string

	// TLSDir holds the TLS material of SSL and SASL_SSL listeners:
	// server.pem and server.key if present, else the cluster makes a CA and
	// a server certificate and writes ca.pem (and ca.key, client.pem,
	// client.key) there (tls.go). Empty: made in memory (TLSCA).
	TLSDir string
	// TLSClientAuth is ssl.client.auth of SSL listeners: "none" (the
	// default), "requested" or "required".
	TLSClientAuth string
	// SSLPrincipalMappingRules is ssl.principal.mapping.rules: how the
	// subject of a client certificate on an SSL listener (RFC 2253, as
	// "CN=alice,OU=eng,O=acme") becomes the principal's name, e.g.
	// "RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT". Rules are tried in order; a
	// certificate no rule maps is refused, as Kafka refuses it. Empty:
	// Kafka's default, DEFAULT (the whole DN). Bad rules fail the start.
	SSLPrincipalMappingRules string
	// SASLKerberosPrincipalToLocalRules is
	// sasl.kerberos.principal.to.local.rules. Kafka applies it only to
	// GSSAPI logins, which fakekafka does not offer, so it is checked
	// (bad rules fail the start) and described, and maps nothing.
	SASLKerberosPrincipalToLocalRules string
	// SASLUsers are the users of SASL listeners, name to password, with
	// credentials for every mechanism (PLAIN and SCRAM).
	SASLUsers map[string]string
	// SASLMechanisms is sasl.enabled.mechanisms: what SaslHandshake accepts,
	// in the order it lists them. Default: PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512, OAUTHBEARER.
	SASLMechanisms []string
	// SASLSessionLifetime is connections.max.reauth.ms (KIP-368): an
	// authenticated SASL session lasts this long (or until its OAUTHBEARER
	// token expires, if sooner) and the broker closes a connection that
	// did not re-authenticate in time. Default 0: sessions do not expire.
	SASLSessionLifetime time.Duration
	// DelegationTokenSecretKey is delegation.token.secret.key: with it,
	// delegation tokens (KIP-48) are enabled and their HMACs are
	// HmacSHA512 keyed with it; empty (the default), every token request
	// is answered DELEGATION_TOKEN_AUTH_DISABLED, as Kafka without a key.
	DelegationTokenSecretKey string
	// DelegationTokenMaxLifetime is delegation.token.max.lifetime.ms: no
	// token lives longer, however renewed. Default 7 days.
	DelegationTokenMaxLifetime time.Duration
	// DelegationTokenExpiryTime is delegation.token.expiry.time.ms: a new
	// token expires after it unless renewed, and a renewal extends it by
	// at most this much. Default 1 day.
	DelegationTokenExpiryTime time.Duration
	// DelegationTokenExpiryCheckInterval is
	// delegation.token.expiry.check.interval.ms: how often, on the cluster
	// clock, tokens past their expiry are removed. Default 1 hour.
	DelegationTokenExpiryCheckInterval time.Duration
	// OAuth is how OAUTHBEARER tokens are validated (the
	// sasl.oauthbearer.* configs: a JWKS, expected issuer and audience,
	// claim names, clock skew) and the built-in test issuer
	// (config_oauth.go). The zero value accepts unsecured tokens only.
	OAuth OAuthConfig

	// DefaultReplicationFactor is default.replication.factor for topics
	// created without one. Default min(3, Brokers).
	DefaultReplicationFactor int
	// MinInsyncReplicas is min.insync.replicas for new topics. Default 1.
	MinInsyncReplicas int
	// NumPartitions is num.partitions for new topics. Default 1.
	NumPartitions int
	// AutoCreateTopics is auto.create.topics.enable. Nil means true.
	AutoCreateTopics *bool
	// ReplicaLagTimeMax is replica.lag.time.max.ms. Default 30s.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms: how long a caught-up
	// follower's fetch waits at the leader before it returns empty and the
	// follower fetches again. These empty fetches are what keep an idle
	// follower in the ISR. Default min(500ms, ReplicaLagTimeMax); it may not
	// exceed ReplicaLagTimeMax (Kafka refuses that too).
	ReplicaFetchWaitMax time.Duration
	// UncleanLeaderElection is unclean.leader.election.enable. Default false.
	UncleanLeaderElection bool
	// LegacyMinISR lets the HW advance while the ISR is below
	// min.insync.replicas, as Kafka did before 3.7.
	LegacyMinISR bool
	// BrokerSessionTimeout is how long the controller takes to notice a
	// crashed broker (Kafka's broker.session.timeout.ms) before it fences it
	// out of the ISR and moves its leaderships. Default 0: at once (9 s
	// with Timing "kafka").
	BrokerSessionTimeout time.Duration
	// Timing is "fast" (the default: the settings Kafka's defaults would
	// make tests wait for, broker.session.timeout.ms and
	// group.initial.rebalance.delay.ms, are 0) or "kafka": those left zero
	// get Kafka 4.4's defaults, so a crashed broker's partitions stay
	// unavailable for 9 s of the cluster's clock as in production
	// (config_timing.go, docs/failures.md).
	Timing string
	// HWCheckpointInterval is replica.high.watermark.checkpoint.interval.ms:
	// a restarted replica comes back with the HW of the last checkpoint.
	// Default 5s.
	HWCheckpointInterval time.Duration
	// FlushMessages is log.flush.interval.messages: a replica's log is
	// flushed (its recovery point advances) every this many records. Default
	// 0: never, like Kafka's page-cache default, so a power loss loses
	// everything since the last clean shutdown.
	FlushMessages int64
	// FlushInterval is log.flush.interval.ms: every replica is flushed this
	// often. Default 0: never.
	FlushInterval time.Duration
	// RetentionCheckInterval is log.retention.check.interval.ms: how often
	// retention.ms and retention.bytes delete old segments, on the cluster's
	// clock. Default 5 minutes, as in Kafka.
	RetentionCheckInterval time.Duration
	// LogInitialTaskDelay is log.initial.task.delay.ms: the first retention
	// check runs this long after the cluster starts, later ones every
	// RetentionCheckInterval (Kafka's LogManager schedules its retention
	// task so). Default 30 s, as in Kafka; negative: at start.
	LogInitialTaskDelay time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms: a replica forgets
	// an idempotent producer whose last batch is older, unless it has a
	// transaction open there (replication.ExpireProducers). Default 1 day.
	// ProducerIDExpirationCheckInterval is
	// producer.id.expiration.check.interval.ms, how often that is checked
	// on the cluster's clock. Default 10 minutes.
	ProducerIDExpiration              time.Duration
	ProducerIDExpirationCheckInterval time.Duration
	// DataDir keeps topics, configs, logs, HW checkpoints and with them
	// group and transaction state in this directory across restarts of the
	// whole process (persist.go). Empty: everything stays in memory.
	DataDir string
	// CleanerBackoff is log.cleaner.backoff.ms: how often the log cleaner
	// looks for compacted partitions to clean, on the cluster's clock.
	// Default 15 s, as in Kafka.
	CleanerBackoff time.Duration
	// LegacyHWTruncation makes a replica that becomes a follower truncate to
	// its own HW, as Kafka did before 0.11, instead of by leader epoch
	// (KIP-101). It reproduces both data-loss scenarios of KIP-101.
	LegacyHWTruncation bool
	// OffsetsTopicPartitions is offsets.topic.num.partitions: the number of
	// __consumer_offsets partitions, hence of group coordinator shards.
	// Default 3 (Kafka's 50 is needlessly many for a test).
	OffsetsTopicPartitions int
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor.
	// Default min(3, Brokers).
	OffsetsTopicReplicationFactor int
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms: how
	// long the first rebalance of an empty group waits for more members.
	// Default 0 (Kafka's 3 s only slows tests down; Timing "kafka" sets it).
	GroupInitialRebalanceDelay time.Duration
	// OffsetsRetention is offsets.retention.minutes: how long committed
	// offsets are kept once their group is Empty (or, for simple commits,
	// after the commit) (offset_expiry.go). Default 7 days, Kafka's.
	// OffsetsRetentionCheckInterval is
	// offsets.retention.check.interval.ms, how often that is checked on
	// the cluster's clock. Default 10 minutes.
	OffsetsRetention              time.Duration
	OffsetsRetentionCheckInterval time.Duration
	// GroupMinSessionTimeout and GroupMaxSessionTimeout bound the session
	// timeouts members may ask for (group.min/max.session.timeout.ms).
	// Defaults 6 s and 30 min, Kafka's.
	GroupMinSessionTimeout time.Duration
	GroupMaxSessionTimeout time.Duration
	// ConsumerGroupHeartbeatInterval is group.consumer.heartbeat.interval.ms,
	// the heartbeat interval KIP-848 members are told to keep. Default 5 s.
	ConsumerGroupHeartbeatInterval time.Duration
	// ConsumerGroupSessionTimeout is group.consumer.session.timeout.ms.
	// Default 45 s.
	ConsumerGroupSessionTimeout time.Duration
	// ConsumerGroupMigrationPolicy is group.consumer.migration.policy:
	// whether classic groups turn consumer groups when a KIP-848 member
	// joins ("upgrade"), consumer groups turn classic when their last
	// KIP-848 member leaves ("downgrade"), both ("bidirectional", the
	// default, Kafka's since 4.0) or neither ("disabled", which also
	// keeps classic members out of consumer groups).
	ConsumerGroupMigrationPolicy string
	// StreamsGroupHeartbeatInterval, StreamsGroupSessionTimeout,
	// StreamsGroupInitialRebalanceDelay and StreamsGroupNumStandbyReplicas
	// are the broker's streams group defaults (group.streams.heartbeat.
	// interval.ms, .session.timeout.ms, .initial.rebalance.delay.ms and
	// .num.standby.replicas). Zero is Kafka's default (5 s, 45 s, 3 s, 0);
	// a negative delay is none.
	StreamsGroupHeartbeatInterval     time.Duration
	StreamsGroupSessionTimeout        time.Duration
	StreamsGroupInitialRebalanceDelay time.Duration
	StreamsGroupNumStandbyReplicas    int32
	// ShareGroupMaxShareSessions is group.share.max.share.sessions, the
	// share sessions one broker keeps. Default 2000, Kafka's.
	ShareGroupMaxShareSessions int
	// ShareGroupMaxSize is group.share.max.size, the members one share
	// group may have. Default 200, Kafka's.
	ShareGroupMaxSize int
	// TransactionStatePartitions is transaction.state.log.num.partitions:
	// the number of __transaction_state partitions, hence of transaction
	// coordinator shards. Default 50, Kafka's; tests may lower it.
	TransactionStatePartitions int
	// TransactionStateReplicationFactor is
	// transaction.state.log.replication.factor. Default min(3, Brokers).
	TransactionStateReplicationFactor int
	// ShareStatePartitions is share.coordinator.state.topic.num.partitions:
	// the number of __share_group_state partitions, hence of share
	// coordinator shards. Default 50, Kafka's; tests may lower it.
	ShareStatePartitions int
	// ShareStateReplicationFactor is
	// share.coordinator.state.topic.replication.factor. Default min(3,
	// Brokers); the topic's min.insync.replicas is
	// share.coordinator.state.topic.min.isr, 2, capped by it.
	ShareStateReplicationFactor int
	// ShareSnapshotUpdateRecordsPerSnapshot is
	// share.coordinator.snapshot.update.records.per.snapshot: how many
	// ShareUpdate records a share partition gets between two ShareSnapshot
	// records. 0 means Kafka's default, 500; a negative value means
	// Kafka's 0 (every write a snapshot). At most 500, as Kafka allows.
	ShareSnapshotUpdateRecordsPerSnapshot int
	// TransactionMaxTimeout is transaction.max.timeout.ms, the largest
	// transaction.timeout.ms a producer may ask for. Default 15 min.
	TransactionMaxTimeout time.Duration
	// TransactionAbortTimedOutInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms: how often
	// coordinators abort transactions past their timeout. Default 10 s.
	TransactionAbortTimedOutInterval time.Duration
	// TransactionalIDExpiration is transactional.id.expiration.ms: an idle
	// transactional id is forgotten after it. Default 7 days.
	TransactionalIDExpiration time.Duration

	// TransactionVersion is the finalized level of the transaction.version
	// feature advertised in ApiVersions: 2 (the default) lets clients that
	// know KIP-890 run transaction version 2 (epoch bump per transaction,
	// implicit AddPartitionsToTxn); 1 or -1 (none advertised) keeps every
	// client on version 1. Older clients use version 1 either way.
	TransactionVersion int

	// BrokerConfigs sets any of Kafka's broker configs by name, as
	// server.properties does (group.consumer.min.session.timeout.ms,
	// group.share.min.record.lock.duration.ms, log.retention.hours, ...):
	// checked against Kafka 4.4's catalogue (package configs) and described
	// as STATIC_BROKER_CONFIG. Those fakekafka acts on take effect (see
	// docs/configs.md): an entry sets the typed field of the same config.
	BrokerConfigs map[string]string
	// FetchSessionCacheSlots is max.incremental.fetch.session.cache.slots:
	// how many Fetch sessions (KIP-227) each broker keeps, split over 8
	// shards as in Kafka (so fewer than 8 means none). Default 1000; a
	// negative value means 0, no sessions (every fetch is then full).
	FetchSessionCacheSlots int

	// MessageMaxBytes is message.max.bytes, the largest record batch a
	// Produce may carry. Default 1048588.
	MessageMaxBytes int32
	// MaxRequestBytes is socket.request.max.bytes. Default 100 MiB.
	MaxRequestBytes int32

	// ClusterID is reported in Metadata. Default "fakekafka".
	ClusterID string
	// Logger receives the cluster's logs. Default: discard below Warn.
	Logger *slog.Logger
	// LogRequests logs one line per request at Info.
	LogRequests bool
	// Clock is the cluster's clock: every timer, deadline and timestamp
	// decision reads it. Default clock.New(), the wall clock. With
	// clock.NewManual time moves only in Cluster.AdvanceClock (or the
	// clock's own Advance). Clusters may share one.
	Clock *clock.Clock
	// Authorizer turns on Kafka's StandardAuthorizer (acls.go): every
	// request is checked against the ACLs (CreateAcls, Cluster.CreateACLs)
	// for the connection's principal.
	Authorizer bool
	// SuperUsers are super.users ("User:admin"): allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found: a
	// resource no ACL names is open to everyone. Default false, Kafka's.
	AllowEveryoneIfNoACLFound bool

	// QuotaWindowNum and QuotaWindowSize are quota.window.num and
	// quota.window.size.seconds: client quota rates are measured over this
	// many samples of this length. Defaults 11 and 1 s, Kafka's.
	QuotaWindowNum  int
	QuotaWindowSize time.Duration

	// EventBuffer is how many events the ring keeps (Cluster.Events, GET
	// /v1/events). Default DefaultEventBuffer.
	EventBuffer int
	// Chaos starts a chaos run (Cluster.StartChaos) as soon as the cluster
	// is up.
	Chaos *chaos.Spec

	// SchemaRegistry runs a schema registry (Confluent's REST API) in the
	// cluster, stored in the _schemas topic (docs/schema-registry.md); nil:
	// none.
	SchemaRegistry *SchemaRegistryConfig
}

const defaultMessageMaxBytes = 1048588

// defaultReplicaFetchWaitMax is Kafka's replica.fetch.wait.max.ms default.
const defaultReplicaFetchWaitMax = 500 * time.Millisecond

func (c Config) withDefaults() (Config, error) {
	if err := c.applyBrokerConfigs(); err != nil {
		return c, err
	}
	if err := c.applyTiming(); err != nil {
		return c, err
	}
	if c.Brokers == 0 {
		c.Brokers = 3
	}
	if c.Brokers < 1 || c.Brokers > 1000 {
		return c, fmt.Errorf("brokers must be between 1 and 1000, got %d", c.Brokers)
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	ls, err := c.resolveListeners()
	if err != nil {
		return c, err
	}
	c.Listeners = ls
	if err := c.checkSecurity(); err != nil {
		return c, err
	}
	if c.OAuth, err = c.OAuth.withDefaults(); err != nil {
		return c, err
	}
	if err := c.checkPrincipalRules(); err != nil {
		return c, err
	}
	if c.AwaitAdvertised != "" && !slices.ContainsFunc(ls, func(l Listener) bool { return l.Name == c.AwaitAdvertised }) {
		return c, fmt.Errorf("await advertised: no listener named %q", c.AwaitAdvertised)
	}
	if c.DefaultReplicationFactor == 0 {
		c.DefaultReplicationFactor = min(3, c.Brokers)
	}
	if c.DefaultReplicationFactor < 1 || c.DefaultReplicationFactor > c.Brokers {
		return c, fmt.Errorf("default replication factor %d must be between 1 and the number of brokers (%d)", c.DefaultReplicationFactor, c.Brokers)
	}
	if c.MinInsyncReplicas == 0 {
		c.MinInsyncReplicas = 1
	}
	if c.MinInsyncReplicas < 1 {
		return c, fmt.Errorf("min.insync.replicas must be at least 1, got %d", c.MinInsyncReplicas)
	}
	if c.NumPartitions == 0 {
		c.NumPartitions = 1
	}
	if c.NumPartitions < 1 {
		return c, fmt.Errorf("num.partitions must be at least 1, got %d", c.NumPartitions)
	}
	if c.AutoCreateTopics == nil {
		t := true
		c.AutoCreateTopics = &t
	}
	if c.ReplicaLagTimeMax == 0 {
		c.ReplicaLagTimeMax = replication.DefaultReplicaLagTimeMax
	}
	if c.ReplicaLagTimeMax < 0 {
		return c, fmt.Errorf("replica.lag.time.max.ms must be positive, got %v", c.ReplicaLagTimeMax)
	}
	if c.ReplicaFetchWaitMax == 0 {
		c.ReplicaFetchWaitMax = min(defaultReplicaFetchWaitMax, c.ReplicaLagTimeMax)
	}
	if c.ReplicaFetchWaitMax < 0 || c.ReplicaFetchWaitMax > c.ReplicaLagTimeMax {
		return c, fmt.Errorf("replica.fetch.wait.max.ms (%v) must be positive and at most replica.lag.time.max.ms (%v)", c.ReplicaFetchWaitMax, c.ReplicaLagTimeMax)
	}
	if c.BrokerSessionTimeout < 0 || c.FlushInterval < 0 || c.FlushMessages < 0 || c.HWCheckpointInterval < 0 {
		return c, fmt.Errorf("broker session timeout, flush settings and HW checkpoint interval must not be negative")
	}
	if c.OffsetsTopicPartitions == 0 {
		c.OffsetsTopicPartitions = 3
	}
	if c.OffsetsTopicReplicationFactor == 0 {
		c.OffsetsTopicReplicationFactor = min(3, c.Brokers)
	}
	if c.ConsumerGroupHeartbeatInterval == 0 {
		c.ConsumerGroupHeartbeatInterval = 5 * time.Second
	}
	if c.ConsumerGroupSessionTimeout == 0 {
		c.ConsumerGroupSessionTimeout = 45 * time.Second
	}
	policy, err := grp.ParseMigrationPolicy(c.ConsumerGroupMigrationPolicy)
	if err != nil {
		return c, err
	}
	c.ConsumerGroupMigrationPolicy = string(policy)
	if c.GroupMinSessionTimeout == 0 {
		c.GroupMinSessionTimeout = 6 * time.Second
	}
	if c.GroupMaxSessionTimeout == 0 {
		c.GroupMaxSessionTimeout = 30 * time.Minute
	}
	if c.OffsetsTopicPartitions < 1 || c.OffsetsTopicPartitions > 1000 || c.OffsetsTopicReplicationFactor < 1 || c.OffsetsTopicReplicationFactor > c.Brokers {
		return c, fmt.Errorf("offsets topic: %d partitions (1-1000) and replication factor %d (1-%d)", c.OffsetsTopicPartitions, c.OffsetsTopicReplicationFactor, c.Brokers)
	}
	if c.GroupInitialRebalanceDelay < 0 || c.GroupMinSessionTimeout < 0 || c.GroupMaxSessionTimeout < c.GroupMinSessionTimeout {
		return c, fmt.Errorf("group timeouts: the initial rebalance delay must not be negative and the max session timeout not below the min")
	}
	if c.HWCheckpointInterval == 0 {
		c.HWCheckpointInterval = 5 * time.Second
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.LogInitialTaskDelay == 0 {
		c.LogInitialTaskDelay = 30 * time.Second
	}
	if c.OffsetsRetention == 0 {
		c.OffsetsRetention = 7 * 24 * time.Hour
	}
	if c.OffsetsRetentionCheckInterval == 0 {
		c.OffsetsRetentionCheckInterval = 10 * time.Minute
	}
	if c.OffsetsRetention < 0 || c.OffsetsRetentionCheckInterval < 0 {
		return c, fmt.Errorf("offsets.retention.minutes and its check interval must not be negative")
	}
	if c.ProducerIDExpiration == 0 {
		c.ProducerIDExpiration = 24 * time.Hour
	}
	if c.ProducerIDExpirationCheckInterval == 0 {
		c.ProducerIDExpirationCheckInterval = 10 * time.Minute
	}
	if c.ProducerIDExpiration < 0 || c.ProducerIDExpirationCheckInterval < 0 {
		return c, fmt.Errorf("producer.id.expiration.ms and its check interval must not be negative")
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
	if c.TransactionStatePartitions == 0 {
		c.TransactionStatePartitions = 50
	}
	if c.TransactionStateReplicationFactor == 0 {
		c.TransactionStateReplicationFactor = min(3, c.Brokers)
	}
	if c.TransactionStatePartitions < 1 || c.TransactionStatePartitions > 1000 || c.TransactionStateReplicationFactor < 1 || c.TransactionStateReplicationFactor > c.Brokers {
		return c, fmt.Errorf("transaction state topic: %d partitions (1-1000) and replication factor %d (1-%d)", c.TransactionStatePartitions, c.TransactionStateReplicationFactor, c.Brokers)
	}
	if c.ShareStatePartitions == 0 {
		c.ShareStatePartitions = 50
	}
	if c.ShareStateReplicationFactor == 0 {
		c.ShareStateReplicationFactor = min(3, c.Brokers)
	}
	if c.ShareStatePartitions < 1 || c.ShareStatePartitions > 1000 || c.ShareStateReplicationFactor < 1 || c.ShareStateReplicationFactor > c.Brokers {
		return c, fmt.Errorf("share state topic: %d partitions (1-1000) and replication factor %d (1-%d)", c.ShareStatePartitions, c.ShareStateReplicationFactor, c.Brokers)
	}
	switch {
	case c.ShareSnapshotUpdateRecordsPerSnapshot == 0:
		c.ShareSnapshotUpdateRecordsPerSnapshot = 500
	case c.ShareSnapshotUpdateRecordsPerSnapshot > 500:
		return c, fmt.Errorf("share.coordinator.snapshot.update.records.per.snapshot must be at most 500, got %d", c.ShareSnapshotUpdateRecordsPerSnapshot)
	}
	if c.TransactionVersion == 0 {
		c.TransactionVersion = 2
	}
	if c.TransactionVersion < -1 || c.TransactionVersion > 2 {
		return c, fmt.Errorf("transaction.version must be -1 (none), 1 or 2, got %d", c.TransactionVersion)
	}
	if c.TransactionMaxTimeout == 0 {
		c.TransactionMaxTimeout = 15 * time.Minute
	}
	if c.TransactionAbortTimedOutInterval == 0 {
		c.TransactionAbortTimedOutInterval = 10 * time.Second
	}
	if c.TransactionalIDExpiration == 0 {
		c.TransactionalIDExpiration = 7 * 24 * time.Hour
	}
	if c.TransactionMaxTimeout < 0 || c.TransactionAbortTimedOutInterval < 0 || c.TransactionalIDExpiration < 0 {
		return c, fmt.Errorf("transaction timeouts must not be negative")
	}
	if c.MessageMaxBytes == 0 {
		c.MessageMaxBytes = defaultMessageMaxBytes
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = protocol.DefaultMaxRequestBytes
	}
	if c.ClusterID == "" {
		c.ClusterID = "fakekafka"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.New()
	}
	if c.QuotaWindowNum == 0 {
		c.QuotaWindowNum = 11
	}
	if c.QuotaWindowSize == 0 {
		c.QuotaWindowSize = time.Second
	}
	if c.QuotaWindowNum < 2 || c.QuotaWindowSize < time.Millisecond {
		return c, fmt.Errorf("quota window: at least 2 samples of at least 1ms, got %d of %v", c.QuotaWindowNum, c.QuotaWindowSize)
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	if c.EventBuffer < 1 {
		return c, fmt.Errorf("event buffer must be at least 1, got %d", c.EventBuffer)
	}
	return c, nil
}
