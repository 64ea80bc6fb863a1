// Package server is a fakekafka cluster: brokers on their own TCP ports
// speaking the Kafka protocol, topics whose partitions are real replicated
// logs (package replication), the controller's elections, the replica
// fetchers that move data between brokers, and the Go and HTTP control
// surfaces.
//
// Start one in a test:
//
//	c := server.NewTestCluster(t, server.Config{MinInsyncReplicas: 2})
//	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/fakekafka/fakekafka/share"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/delegation"
	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/fakekafka/fakekafka/principal"
	"github.com/fakekafka/fakekafka/quota"
)

// Cluster is a running fakekafka cluster.
type Cluster struct {
	cfg Config
	log *slog.Logger

	brokers  []*broker // index id-1
	fetchers []*fetcher

	topicsMu sync.Mutex             // serialises topic creation and deletion
	topics   atomic.Pointer[topics] // copy-on-write: lock-free lookups

	nextProducerID atomic.Int64

	data *dataDir // Config.DataDir's persistence (persist.go), else nil

	// partitionListeners hear of every partition change, in order
	// (partition_change.go); fixed before the first partition exists.
	partitionListeners partitionListeners

	coord *coordinator.Runtime[*groupShard] // the group coordinators (group_coordinator.go)
	txn   txnCoordinators                   // the transaction coordinators (txn_coordinator.go)
	sc    shareCoordinators                 // the share coordinators (share_coordinator.go)

	// shares are the share partitions this cluster's leaders keep and the
	// brokers' share sessions (share_partitions.go, share_sessions.go);
	// sharePersister is the share coordinator as those leaders see it.
	shares         shareState
	sharePersister share.Persister

	events *eventLog // the event ring (events.go)

	quorumView quorumView    // what DescribeQuorum remembers (describe_quorum.go)
	features   featureLevels // what UpdateFeatures changed (update_features.go)
	// acls are the authorizer's bindings, read lock-free; aclMu serialises
	// changes (acls.go).
	aclMu sync.Mutex
	acls  atomic.Pointer[authorizer.Set]

	quotas quotaState          // client quotas and their sensors (quotas.go)
	tls    *tlsSetup           // nil without SSL and SASL_SSL listeners (tls.go)
	users  *saslUsers          // the SASL users (security.go)
	sr     *schemaRegistry     // nil without Config.SchemaRegistry (schema_registry.go)
	tokens *delegation.Manager // delegation tokens, nil when disabled (delegation_token.go)
	// issuer is the built-in OAuth issuer (oauth_issuer.go), oauth how
	// signed OAUTHBEARER tokens are validated (oauth_jwks.go); nil when off.
	issuer      *oauthIssuer
	oauth       *oauthValidation
	jwksRefresh *job
	// sslMapper maps client certificates to principals (principal_mapping.go).
	sslMapper *principal.SSLMapper
	denials   denialLog // the newest authorization denials (denials.go)

	// isrChecks and checkpoints are the periodic jobs on the cluster's
	// clock (periodic.go); lastCheckpoint is used only by checkpoints.
	isrChecks, checkpoints *job
	retention, compaction  *job // log_retention.go, log_compaction.go
	producerExpiry         *job // producer_expiry.go
	offsetExpiry           *job // offset_expiry.go
	tokenSweep             *job // delegation_token.go, nil with tokens disabled
	expiringOffsets        offsetExpiryRuns
	lastCheckpoint         time.Time

	// configMu serialises config changes (alter_configs.go); brokerCfg holds
	// the broker configs in force, replaced whole on every change.
	configMu  sync.Mutex
	brokerCfg atomic.Pointer[brokerSettings]
	// groupCfgs holds every group's configs (group_configs.go), replaced
	// whole on every change; staticBroker the broker configs the cluster
	// started with (config_static.go); loggers each broker's logger levels
	// (broker_loggers.go, under configMu).
	groupCfgs    atomic.Pointer[groupConfigs]
	staticBroker map[string]string
	loggers      map[int32]map[string]string

	// ctlMu serialises the controller's cluster-wide actions (broker stop
	// and start, fencing). Produce and fetch never take it.
	ctlMu sync.Mutex

	// chaos is the active chaos run (chaos.go), nil when none: the one
	// atomic load recording costs when off. chaosMu serialises start and
	// stop; chaosLast is the last run, for its report.
	chaos     atomic.Pointer[chaosRun]
	chaosMu   sync.Mutex
	chaosLast *chaosRun
	// produceListener hears of every batch Produce appends (produce.go):
	// the active chaos run, else nil, the one atomic load it costs then.
	produceListener atomic.Pointer[produceListener]

	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// topics is an immutable snapshot of the topic table.
type topics struct {
	byName map[string]*topic
	byID   map[[16]byte]*topic
}

// NewCluster starts a cluster and returns once every broker listens.
func NewCluster(cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, log: cfg.Logger, closing: make(chan struct{})}
	c.txn.wake = make(chan struct{}, 1)
	c.newCoordinators()
	c.newShareCoordinators()
	c.sharePersister = c.newSharePersister() // the share coordinator, as share partitions' leaders see it
	c.events = newEventLog(cfg.EventBuffer)
	c.topics.Store(&topics{byName: map[string]*topic{}, byID: map[[16]byte]*topic{}})
	c.nextProducerID.Store(1000)
	c.staticBroker = staticBrokerConfigs(&c.cfg)
	c.loggers = map[int32]map[string]string{}
	c.brokerCfg.Store(c.resolveBrokerSettings(nil, nil))
	c.groupCfgs.Store(resolveGroupConfigs(c.brokerSettings(), nil))
	c.quotas.cfg.Store(&quota.Config{})
	c.acls.Store(&authorizer.Set{SuperUsers: cfg.SuperUsers, AllowEveryoneIfNoACL: cfg.AllowEveryoneIfNoACLFound})
	if c.tls, c.users, err = newSecurity(cfg); err != nil {
		return nil, err
	}
	c.tokens = newTokens(&c.cfg)
	if cfg.OAuth.Issuer != nil {
		if c.issuer, err = newOAuthIssuer(*cfg.OAuth.Issuer); err != nil {
			return nil, err
		}
	}
	if c.oauth, err = c.newOAuthValidation(); err != nil {
		return nil, err
	}
	c.sslMapper = newSSLMapper(cfg)

	for i := range cfg.Brokers {
		b := &broker{c: c, id: int32(i + 1), conns: map[*conn]struct{}{}, sessions: fetchsession.NewCache(cfg.fetchSessionCacheSlots())}
		c.brokers = append(c.brokers, b)
		for li, l := range cfg.Listeners {
			bl, err := openListener(b, li, l, i)
			if err != nil {
				c.closeListeners()
				return nil, err
			}
			b.listeners = append(b.listeners, bl)
		}
		b.up.Store(true)
		c.fetchers = append(c.fetchers, newFetcher(c, b.id))
	}
	// Partition changes reach the disk log first, so that nothing that
	// depends on a record is answered before it is written.
	if cfg.DataDir != "" {
		c.onPartitionChange(anyChange, &persistence{})
	}
	c.onPartitionChange(anyChange, &partitionEventsListener{c})
	c.onPartitionChange(waitedFields, &waitersListener{})
	c.onPartitionChange(fetchedFields, &followersListener{})
	c.onPartitionChange(movedEpoch, &coordinatorLeaderListener{c})
	if err := c.openDataDir(); err != nil {
		c.closeListeners()
		return nil, err
	}
	for _, f := range c.fetchers {
		c.wg.Add(1)
		go f.run()
		f.polls = c.every(c.idleFetchInterval, f.pollAll)
	}
	c.isrChecks = c.every(c.isrCheckInterval, c.checkISRs)
	c.lastCheckpoint = c.now()
	c.checkpoints = c.every(c.checkpointInterval, c.checkpoint)
	c.retention = c.everyAfter(max(c.cfg.LogInitialTaskDelay, 0), c.retentionCheckInterval, c.checkRetention)
	c.producerExpiry = c.every(c.producerExpiryInterval, c.expireProducers)
	c.offsetExpiry = c.every(c.offsetsRetentionCheckInterval, c.expireOffsets)
	c.compaction = c.every(c.cleanerBackoff, c.cleanLogs)
	if c.tokens != nil {
		c.tokenSweep = c.every(c.tokenExpiryCheckInterval, c.sweepTokens)
	}
	for _, b := range c.brokers {
		for _, bl := range b.listeners {
			c.wg.Add(1)
			go b.serve(bl, bl.ln)
		}
	}
	c.wg.Add(2)
	go c.txnLoop(c.cfg.Clock.NewTimer(c.cfg.TransactionAbortTimedOutInterval))
	go c.runHWEvents()
	if err := c.startSchemaRegistry(); err != nil {
		c.Close()
		return nil, err
	}
	c.log.Info("cluster started", "brokers", c.Bootstrap())
	if cfg.Chaos != nil {
		if _, err := c.StartChaos(*cfg.Chaos); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// NewTestCluster starts a cluster for tb and closes it in tb.Cleanup.
// Failure to start fails the test.
func NewTestCluster(tb testing.TB, cfg Config) *Cluster {
	tb.Helper()
	c, err := NewCluster(cfg)
	if err != nil {
		tb.Fatalf("fakekafka: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Bootstrap returns every broker's advertised host:port on the first
// listener, broker 1 first.
func (c *Cluster) Bootstrap() []string {
	out := make([]string, len(c.brokers))
	for i, b := range c.brokers {
		out[i] = b.addr()
	}
	return out
}

// Close stops every broker, closes every connection and waits for all of
// the cluster's goroutines to end.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		if run := c.chaos.Load(); run != nil {
			run.cancel()
		}
		c.ctlMu.Lock()
		close(c.closing)
		for _, b := range c.brokers {
			b.closeConns()
			if b.fence != nil {
				b.fence.Stop()
			}
		}
		c.ctlMu.Unlock()
		c.stopSchemaRegistry()
		for _, f := range c.fetchers {
			f.polls.stop()
		}
		c.isrChecks.stop()
		c.checkpoints.stop()
		c.retention.stop()
		c.producerExpiry.stop()
		c.offsetExpiry.stop()
		c.compaction.stop()
		if c.tokenSweep != nil {
			c.tokenSweep.stop()
		}
		if c.jwksRefresh != nil {
			c.jwksRefresh.stop()
		}
		c.wg.Wait()
		c.flushData(true)
	})
	return nil
}

func (c *Cluster) closeListeners() {
	for _, b := range c.brokers {
		for _, bl := range b.listeners {
			bl.ln.Close()
		}
	}
}

func (c *Cluster) broker(id int32) *broker {
	if id < 1 || int(id) > len(c.brokers) {
		return nil
	}
	return c.brokers[id-1]
}

// controller is the broker id reported as controller: the lowest live one.
func (c *Cluster) controller() int32 {
	for _, b := range c.brokers {
		if b.up.Load() {
			return b.id
		}
	}
	return -1
}

func (c *Cluster) topic(name string) *topic { return c.topics.Load().byName[name] }

func (c *Cluster) topicByID(id [16]byte) *topic { return c.topics.Load().byID[id] }

// partition looks up one partition, or nil.
func (c *Cluster) partition(topicName string, index int32) *partition {
	t := c.topic(topicName)
	if t == nil || index < 0 || int(index) >= len(t.partitions()) {
		return nil
	}
	return t.partitions()[index]
}

func newTopicID() [16]byte {
	var id [16]byte
	for id == ([16]byte{}) {
		rand.Read(id[:])
	}
	return id
}

// checkISRs is the leaders' periodic ISR shrink check, run every half
// replica.lag.time.max.ms as Kafka does.
func (c *Cluster) checkISRs() {
	now := c.now()
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.mu.Lock()
			p.mutate(func() {
				if out := p.st.MaybeShrinkISR(now); len(out) > 0 {
					c.log.Info("ISR shrink", "topic", t.name, "partition", p.index, "removed", out, "isr", p.st.ISR())
				}
			})
			p.mu.Unlock()
		}
	}
}

func (c *Cluster) isrCheckInterval() time.Duration {
	lag := c.brokerSettings().lagTimeMax
	for _, t := range c.topics.Load().byName {
		lag = min(lag, t.cfg().lagTimeMax)
	}
	return max(lag/2, time.Millisecond)
}

// ErrUnknownPartition is returned (wrapped) by the control methods for a
// topic or partition the cluster does not have.
var ErrUnknownPartition = errors.New("unknown topic or partition")

var errUnknownPartition = ErrUnknownPartition

func (c *Cluster) mustPartition(topicName string, index int32) (*partition, error) {
	p := c.partition(topicName, index)
	if p == nil {
		return nil, fmt.Errorf("%w: %s/%d", errUnknownPartition, topicName, index)
	}
	return p, nil
}

// PauseReplica stops the follower on broker from fetching topic/partition.
// It stays in the ISR until replica.lag.time.max.ms passes without it
// catching up, exactly as a stuck follower in Kafka. A broker that holds no
// replica yet may be paused ahead, to stall the replica a reassignment
// will add there.
func (c *Cluster) PauseReplica(topicName string, index, broker int32) error {
	return c.setPaused(topicName, index, broker, true)
}

// ResumeReplica lets a paused follower fetch again.
func (c *Cluster) ResumeReplica(topicName string, index, broker int32) error {
	return c.setPaused(topicName, index, broker, false)
}

// ReplicaPaused reports whether broker's replica of topic/partition is
// paused, including a pause set ahead of the replica a reassignment will
// give the broker.
func (c *Cluster) ReplicaPaused(topic string, partition, broker int32) bool {
	p := c.partition(topic, partition)
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.isPaused(broker)
}

func (c *Cluster) setPaused(topicName string, index, broker int32, paused bool) error {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return err
	}
	if c.broker(broker) == nil {
		return fmt.Errorf("%w: no broker %d", errUnknownBroker, broker)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// A broker without a replica yet may be paused ahead: the pause holds
	// the replica a reassignment gives it (reassign.go).
	was := p.isPaused(broker)
	if paused {
		if !was {
			x := p.extras()
			x.paused = append(x.paused, broker)
		}
	} else {
		if was {
			x := p.extras()
			x.paused = slices.DeleteFunc(x.paused, func(id int32) bool { return id == broker })
		}
		c.fetcherFor(broker).mark(p)
	}
	if was != paused {
		t := EventReplicaResumed
		if paused {
			t = EventReplicaPaused
		}
		c.emit(t, func(e *Event) { e.Topic, e.Partition, e.Broker = topicName, index, broker })
	}
	return nil
}

// SetISR sets the ISR of topic/partition now, as the controller would
// after an AlterPartition. The leader always stays in. A follower that is
// still fetching and caught up rejoins on its next fetch, as in Kafka, so
// pause it first to keep it out.
func (c *Cluster) SetISR(topicName string, index int32, isr []int32) error {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range isr {
		if p.st.Replica(id) == nil {
			return fmt.Errorf("broker %d has no replica of %s/%d", id, topicName, index)
		}
	}
	p.mutate(func() { p.st.SetISR(isr, c.now()) })
	return nil
}

func (c *Cluster) fetcherFor(broker int32) *fetcher { return c.fetchers[broker-1] }

// CreateTopic creates a topic the way CreateTopics does; -1 for partitions
// or replicationFactor takes the cluster default. configs are topic configs
// such as "min.insync.replicas".
func (c *Cluster) CreateTopic(name string, partitions int32, replicationFactor int16, configs map[string]string) error {
	_, kerr, msg := c.createTopic(topicSpec{name: name, partitions: partitions, rf: replicationFactor, configs: maps.Clone(configs), goAPI: true}, false)
	return kafkaError(kerr, msg)
}
