// Command fakekafka runs a fakekafka cluster: several brokers speaking the
// Kafka protocol on consecutive ports, with real replication, plus the HTTP
// control API.
//
//	fakekafka --brokers 3 --listen 127.0.0.1:9092 --control 127.0.0.1:9099
//	fakekafka --listeners EXTERNAL://0.0.0.0:9092,INTERNAL://:19092 \
//	    --advertised-listeners EXTERNAL://localhost:9092 \
//	    --listener-security-protocol-map EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT
//	fakekafka --schema-registry 127.0.0.1:8081   # the schema registry (the default; "" turns it off)
//	fakekafka healthcheck              # exit 0 once GET /readyz answers 200
//	fakekafka probe kafka:19092        # Metadata, then dial every advertised broker
//
// Every flag can also be set through an environment variable named after it:
// FAKEKAFKA_ plus the flag in upper case with dashes as underscores (for
// example FAKEKAFKA_MIN_INSYNC_REPLICAS=2). A flag on the command line wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/control"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// durationMs parses Kafka-style milliseconds ("30000") or a Go duration ("30s").
type durationMs struct{ d *time.Duration }

func (v durationMs) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

// durationMin parses Kafka-style minutes ("10080") or a Go duration ("168h").
type durationMin struct{ d *time.Duration }

func (v durationMin) String() string { return durationMs(v).String() }

func (v durationMin) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return fmt.Errorf("must be positive, got %q", s)
		}
		*v.d = time.Duration(n) * time.Minute
		return nil
	}
	return durationMs(v).Set(s)
}

func (v durationMs) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*v.d = time.Duration(n) * time.Millisecond
	} else if d, err := time.ParseDuration(s); err == nil {
		*v.d = d
	} else {
		return fmt.Errorf("want milliseconds or a duration such as 30s, got %q", s)
	}
	if *v.d <= 0 {
		return fmt.Errorf("must be positive, got %q", s)
	}
	return nil
}

// options are the parsed flags.
type options struct {
	cfg            server.Config
	control        string
	schemaRegistry string
	autoCreate     bool
	logLevel       string

	listeners, advertisedListeners, protocolMap string
	topics                                      string
	clock                                       string
	chaos                                       *chaos.Spec
	version                                     bool
}

func parseFlags(args []string, getenv func(string) string, help io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("fakekafka", flag.ContinueOnError)
	// An error becomes one line in run; --help prints printHelp to help.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the flag package calls it on every error too
	fs.IntVar(&o.cfg.Brokers, "brokers", 3, "number of brokers (ids 1..N)")
	fs.StringVar(&o.cfg.Listen, "listen", "127.0.0.1:9092", "first broker's HOST:PORT; the others take the next ports (port 0: any free ports)")
	fs.StringVar(&o.cfg.AdvertisedHost, "advertise", "", "host advertised to clients")
	fs.StringVar(&o.listeners, "listeners", "", "Kafka-style listeners NAME://HOST:PORT,... (each the first broker's; the others take the next ports); replaces --listen")
	fs.StringVar(&o.advertisedListeners, "advertised-listeners", "", "NAME://HOST:PORT,... advertised per listener (the others take the next ports; port 0: the bound port)")
	fs.StringVar(&o.protocolMap, "listener-security-protocol-map", "", "NAME:PROTOCOL,... for listeners not named after their protocol (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)")
	fs.StringVar(&o.cfg.TLSDir, "tls-dir", "", "TLS files of SSL and SASL_SSL listeners: server.pem and server.key if there, else a generated CA and server certificate, written there as ca.pem (and ca.key, client.pem, client.key)")
	fs.StringVar(&o.cfg.TLSClientAuth, "tls-client-auth", "none", "ssl.client.auth of SSL listeners: none, requested or required (the principal is User:<subject DN>)")
	fs.StringVar(&o.cfg.SSLPrincipalMappingRules, "ssl-principal-mapping-rules", "", "ssl.principal.mapping.rules: how a client certificate's subject DN becomes the principal, e.g. RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT")
	fs.StringVar(&o.cfg.SASLKerberosPrincipalToLocalRules, "sasl-kerberos-principal-to-local-rules", "", "sasl.kerberos.principal.to.local.rules: checked and described only (Kafka applies it to GSSAPI, which fakekafka lacks)")
	fs.Var(saslUsers{&o.cfg.SASLUsers}, "sasl-user", "NAME:PASSWORD of a SASL user, for every mechanism (repeatable; FAKEKAFKA_SASL_USERS=a:x,b:y)")
	fs.Func("sasl-enabled-mechanisms", "sasl.enabled.mechanisms: comma-separated, of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER", func(v string) error {
		o.cfg.SASLMechanisms = strings.Split(v, ",")
		for _, m := range o.cfg.SASLMechanisms {
			if !slices.Contains(sasl.Mechanisms, m) {
				return fmt.Errorf("unknown mechanism %q (want some of %s)", m, strings.Join(sasl.Mechanisms, ","))
			}
		}
		return nil
	})
	fs.Var(durationMs{&o.cfg.SASLSessionLifetime}, "sasl-session-lifetime", "connections.max.reauth.ms: SASL sessions expire after it unless re-authenticated")
	fs.StringVar(&o.cfg.DelegationTokenSecretKey, "delegation-token-secret-key", "", "delegation.token.secret.key: enables delegation tokens (KIP-48), whose HMACs it keys")
	fs.Var(durationMs{&o.cfg.DelegationTokenMaxLifetime}, "delegation-token-max-lifetime", "delegation.token.max.lifetime.ms: no delegation token lives longer")
	fs.Var(durationMs{&o.cfg.DelegationTokenExpiryTime}, "delegation-token-expiry-time", "delegation.token.expiry.time.ms: a token expires after it unless renewed")
	fs.Var(durationMs{&o.cfg.DelegationTokenExpiryCheckInterval}, "delegation-token-expiry-check-interval", "delegation.token.expiry.check.interval.ms: how often expired tokens are removed")
	var oauth oauthFlags
	oauth.register(fs, &o.cfg.OAuth)
	fs.StringVar(&o.cfg.AwaitAdvertised, "await-advertised", "", "listener whose advertised addresses must be set (PUT /v1/listeners/NAME) before GET /readyz answers 200")
	fs.StringVar(&o.topics, "topics", "", "topics to create at start: NAME[:PARTITIONS[:REPLICATION_FACTOR]],... (num-partitions and default-replication-factor when left out)")
	fs.StringVar(&o.control, "control", "127.0.0.1:9099", "HOST:PORT of the HTTP control API; empty disables it")
	fs.StringVar(&o.schemaRegistry, "schema-registry", "127.0.0.1:8081", "HOST:PORT of the schema registry (Confluent's REST API, stored in _schemas; port 0: any free port); empty disables it")
	fs.IntVar(&o.cfg.DefaultReplicationFactor, "default-replication-factor", 0, "default.replication.factor for new topics")
	fs.IntVar(&o.cfg.MinInsyncReplicas, "min-insync-replicas", 1, "min.insync.replicas for new topics")
	fs.IntVar(&o.cfg.NumPartitions, "num-partitions", 1, "num.partitions for new topics")
	fs.Var(brokerConfigs{&o.cfg.BrokerConfigs}, "broker-config", "NAME=VALUE: any Kafka broker config, as in server.properties (repeatable; e.g. group.consumer.min.session.timeout.ms=2000)")
	fs.BoolVar(&o.autoCreate, "auto-create-topics", true, "auto.create.topics.enable")
	o.cfg.ReplicaLagTimeMax = 30 * time.Second
	fs.Var(durationMs{&o.cfg.ReplicaLagTimeMax}, "replica-lag-time-max", "replica.lag.time.max.ms: milliseconds or a duration")
	fs.Var(durationMs{&o.cfg.ReplicaFetchWaitMax}, "replica-fetch-wait-max", "replica.fetch.wait.max.ms: how often an idle follower fetches")
	fs.BoolVar(&o.cfg.UncleanLeaderElection, "unclean-leader-election", false, "unclean.leader.election.enable")
	fs.BoolVar(&o.cfg.LegacyMinISR, "legacy-min-isr", false, "let the HW advance below min.insync.replicas, as Kafka did before 3.7")
	fs.BoolVar(&o.cfg.LegacyHWTruncation, "legacy-hw-truncation", false, "new followers truncate to their HW, as before Kafka 0.11 (KIP-101)")
	fs.Var(durationMs{&o.cfg.BrokerSessionTimeout}, "broker-session-timeout", "broker.session.timeout.ms: how long before the controller fences a crashed broker")
	fs.StringVar(&o.cfg.Timing, "timing", server.TimingFast, "fast (a crashed broker is fenced at once, no initial rebalance delay) or kafka (Kafka 4.4's broker.session.timeout.ms 9s and group.initial.rebalance.delay.ms 3s where not set)")
	o.cfg.HWCheckpointInterval = 5 * time.Second
	fs.Var(durationMs{&o.cfg.HWCheckpointInterval}, "hw-checkpoint-interval", "replica.high.watermark.checkpoint.interval.ms")
	fs.Int64Var(&o.cfg.FlushMessages, "log-flush-interval-messages", 0, "log.flush.interval.messages: a power loss loses what was not flushed")
	fs.Var(durationMs{&o.cfg.FlushInterval}, "log-flush-interval", "log.flush.interval.ms")
	fs.StringVar(&o.cfg.DataDir, "data-dir", "", "keep topics, logs, offsets, groups and transactions in this directory across restarts")
	fs.Var(durationMs{&o.cfg.RetentionCheckInterval}, "log-retention-check-interval", "log.retention.check.interval.ms")
	fs.Var(durationMs{&o.cfg.ProducerIDExpiration}, "producer-id-expiration", "producer.id.expiration.ms: how long an idle idempotent producer's state is kept")
	fs.Var(durationMs{&o.cfg.ProducerIDExpirationCheckInterval}, "producer-id-expiration-check-interval", "producer.id.expiration.check.interval.ms")
	fs.Var(durationMin{&o.cfg.OffsetsRetention}, "offsets-retention-minutes", "offsets.retention.minutes: committed offsets of an Empty group (or simple commits) are kept this long (minutes or a duration)")
	fs.Var(durationMs{&o.cfg.OffsetsRetentionCheckInterval}, "offsets-retention-check-interval", "offsets.retention.check.interval.ms: how often expired offsets are removed")
	fs.StringVar(&o.cfg.ConsumerGroupMigrationPolicy, "group-consumer-migration-policy", "bidirectional", "group.consumer.migration.policy: bidirectional, upgrade, downgrade or disabled (groups moving between the classic and the KIP-848 protocol)")
	fs.Var(durationMs{&o.cfg.CleanerBackoff}, "log-cleaner-backoff", "log.cleaner.backoff.ms: how often the log cleaner looks for work")
	fs.IntVar(&o.cfg.TransactionStatePartitions, "transaction-state-log-num-partitions", 50, "transaction.state.log.num.partitions: __transaction_state partitions")
	fs.IntVar(&o.cfg.ShareStatePartitions, "share-coordinator-state-topic-num-partitions", 50, "share.coordinator.state.topic.num.partitions: __share_group_state partitions")
	fs.Var(durationMs{&o.cfg.TransactionMaxTimeout}, "transaction-max-timeout", "transaction.max.timeout.ms")
	fs.Var(durationMs{&o.cfg.TransactionAbortTimedOutInterval}, "transaction-abort-timed-out-transaction-cleanup-interval", "how often coordinators abort transactions past their timeout")
	fs.Var(durationMs{&o.cfg.TransactionalIDExpiration}, "transactional-id-expiration", "transactional.id.expiration.ms")
	fs.IntVar(&o.cfg.TransactionVersion, "transaction-version", 2, "finalized transaction.version feature: 2 (KIP-890), 1, or -1 (none)")
	msgMax := fs.Int("message-max-bytes", 1048588, "message.max.bytes")
	reqMax := fs.Int("socket-request-max-bytes", 100<<20, "socket.request.max.bytes")
	fs.StringVar(&o.cfg.ClusterID, "cluster-id", "fakekafka", "cluster id reported in Metadata")
	fs.BoolVar(&o.cfg.LogRequests, "log-requests", false, "log one line per request")
	fs.StringVar(&o.logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.BoolVar(&o.cfg.Authorizer, "authorizer", false, "turn on ACLs (Kafka's StandardAuthorizer): requests are checked against CreateAcls bindings")
	fs.Var(superUsers{&o.cfg.SuperUsers}, "super-user", "super.users principal allowed everything, e.g. User:admin (repeatable, or ;-separated)")
	fs.BoolVar(&o.cfg.AllowEveryoneIfNoACLFound, "allow-everyone-if-no-acl-found", false, "allow.everyone.if.no.acl.found: a resource without ACLs is open to all")
	fs.IntVar(&o.cfg.QuotaWindowNum, "quota-window-num", 11, "quota.window.num: samples a client quota's rate is measured over")
	o.cfg.QuotaWindowSize = time.Second
	fs.Var(durationMs{&o.cfg.QuotaWindowSize}, "quota-window-size", "quota.window.size.seconds as a duration")
	fs.StringVar(&o.clock, "clock", "real", "real (the wall clock, which POST /v1/clock/advance can jump ahead) or manual (time moves only when advanced)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	chaosSpec := fs.String("chaos", "", "run a chaos schedule from the start: PRESET[,key=value...] (gentle, rough, network; e.g. rough,seed=42,duration=60s) or a JSON spec file")

	// Environment first, so the command line overrides it.
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "FAKEKAFKA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && envErr == nil && f.Name != "version" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", name, v, err)
			}
		}
	})
	if v := getenv("FAKEKAFKA_SASL_USERS"); v != "" && envErr == nil {
		if err := fs.Set("sasl-user", v); err != nil {
			envErr = fmt.Errorf("FAKEKAFKA_SASL_USERS=%q: %v", v, err)
		}
	}
	if envErr != nil {
		return nil, envErr
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(help, fs)
			return nil, err
		}
		return nil, flagError(err)
	}
	if o.version {
		return o, nil
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v (see fakekafka --help; subcommands: ctl, healthcheck, probe)", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := oauth.apply(set, &o.cfg.OAuth); err != nil {
		return nil, err
	}
	if o.listeners != "" {
		if set["listen"] {
			return nil, fmt.Errorf("--listen and --listeners exclude each other")
		}
		ls, err := buildListeners(o.listeners, o.advertisedListeners, o.protocolMap)
		if err != nil {
			return nil, err
		}
		o.cfg.Listeners = ls
	} else if o.advertisedListeners != "" || o.protocolMap != "" {
		return nil, fmt.Errorf("--advertised-listeners and --listener-security-protocol-map need --listeners")
	}
	if *msgMax <= 0 || *msgMax > 1<<30 {
		return nil, fmt.Errorf("--message-max-bytes must be between 1 and %d", 1<<30)
	}
	if *reqMax <= 0 || *reqMax > 1<<30 {
		return nil, fmt.Errorf("--socket-request-max-bytes must be between 1 and %d", 1<<30)
	}
	o.cfg.MessageMaxBytes, o.cfg.MaxRequestBytes = int32(*msgMax), int32(*reqMax)
	o.cfg.AutoCreateTopics = &o.autoCreate
	for name, v := range map[string]int{"brokers": o.cfg.Brokers, "min-insync-replicas": o.cfg.MinInsyncReplicas, "num-partitions": o.cfg.NumPartitions} {
		if v < 1 {
			return nil, fmt.Errorf("--%s must be at least 1, got %d", name, v)
		}
	}
	if o.cfg.FlushMessages < 0 {
		return nil, fmt.Errorf("--log-flush-interval-messages must not be negative")
	}
	switch o.cfg.TLSClientAuth {
	case server.TLSClientAuthNone, server.TLSClientAuthRequested, server.TLSClientAuthRequired:
	default:
		return nil, fmt.Errorf("--tls-client-auth must be none, requested or required, got %q", o.cfg.TLSClientAuth)
	}
	if o.cfg.Timing != server.TimingFast && o.cfg.Timing != server.TimingKafka {
		return nil, fmt.Errorf("--timing must be fast or kafka, got %q", o.cfg.Timing)
	}
	switch o.clock {
	case "real":
	case "manual":
		o.cfg.Clock = clock.NewManual(time.Time{})
	default:
		return nil, fmt.Errorf("--clock must be real or manual, got %q", o.clock)
	}
	if o.cfg.DefaultReplicationFactor < 0 {
		return nil, fmt.Errorf("--default-replication-factor must be at least 1")
	}
	if o.schemaRegistry != "" {
		o.cfg.SchemaRegistry = &server.SchemaRegistryConfig{Listen: o.schemaRegistry}
	}
	if *chaosSpec != "" {
		spec, err := loadChaosSpec(*chaosSpec)
		if err != nil {
			return nil, fmt.Errorf("--chaos: %v", err)
		}
		o.chaos = &spec
	}
	return o, nil
}

// createTopics creates the topics of --topics:
// NAME[:PARTITIONS[:REPLICATION_FACTOR]],...
func createTopics(c *server.Cluster, spec string) error {
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.Split(item, ":")
		if len(parts) > 3 || parts[0] == "" {
			return fmt.Errorf("%q is not NAME[:PARTITIONS[:REPLICATION_FACTOR]]", item)
		}
		partitions, rf := int64(-1), int64(-1)
		var err error
		if len(parts) > 1 {
			if partitions, err = strconv.ParseInt(parts[1], 10, 32); err != nil || partitions < 1 {
				return fmt.Errorf("%q: partitions must be a positive number", item)
			}
		}
		if len(parts) > 2 {
			if rf, err = strconv.ParseInt(parts[2], 10, 16); err != nil || rf < 1 {
				return fmt.Errorf("%q: replication factor must be a positive number", item)
			}
		}
		if _, ok := c.Partition(parts[0], 0); ok {
			continue // restored from --data-dir
		}
		if err := c.CreateTopic(parts[0], int32(partitions), int16(rf), nil); err != nil {
			return fmt.Errorf("%s: %v", parts[0], err)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return runHealthcheck(ctx, args[1:], getenv, stdout, stderr)
		case "probe":
			return runProbe(ctx, args[1:], getenv, stdout, stderr)
		case "ctl":
			return runCtl(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	o, err := parseFlags(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "fakekafka: %v\n", err)
		return 2
	}
	if o.version {
		fmt.Fprintln(stdout, versionText(debug.ReadBuildInfo()))
		return 0
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(stderr, "fakekafka: --log-level: %v\n", err)
		return 2
	}
	if o.cfg.LogRequests && level > slog.LevelInfo {
		level = slog.LevelInfo
	}
	o.cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	c, err := server.NewCluster(o.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "fakekafka: %v\n", err)
		return 1
	}
	defer c.Close()
	if err := createTopics(c, o.topics); err != nil {
		fmt.Fprintf(stderr, "fakekafka: --topics: %v\n", err)
		return 2
	}

	controlURL := "off"
	var srv *http.Server
	if o.control != "" {
		ln, err := net.Listen("tcp", o.control)
		if err != nil {
			fmt.Fprintf(stderr, "fakekafka: control listener: %v\n", err)
			return 1
		}
		srv = &http.Server{Handler: control.Handler(c), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		controlURL = "http://" + ln.Addr().String()
	}
	registryURL := "off"
	if u := c.SchemaRegistryURL(); u != "" {
		registryURL = u
	}
	if ok, why := c.Ready(); ok {
		fmt.Fprintf(stdout, "fakekafka ready: bootstrap=%s control=%s schema-registry=%s\n", strings.Join(c.Bootstrap(), ","), controlURL, registryURL)
	} else {
		fmt.Fprintf(stdout, "fakekafka started, not ready: %s; control=%s schema-registry=%s\n", why, controlURL, registryURL)
	}
	if o.chaos != nil {
		if err := startChaos(c, *o.chaos, stdout); err != nil {
			fmt.Fprintf(stderr, "fakekafka: --chaos: %v\n", err)
			return 2
		}
	}

	<-ctx.Done()
	fmt.Fprintln(stderr, "fakekafka: shutting down")
	if o.chaos != nil {
		stopChaos(c, stderr)
	}
	c.Close() // ends open event streams, which Shutdown would wait for
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}
	return 0
}

// superUsers is --super-user: repeatable, each value a ;-separated list as
// Kafka's super.users (principals may hold commas, e.g. certificate names).
type superUsers struct{ list *[]string }

func (s superUsers) String() string {
	if s.list == nil {
		return ""
	}
	return strings.Join(*s.list, ";")
}

func (s superUsers) Set(v string) error {
	for _, p := range strings.Split(v, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.Contains(p, ":") {
			return fmt.Errorf("%q is not a principal TYPE:NAME such as User:admin", p)
		}
		*s.list = append(*s.list, p)
	}
	return nil
}
