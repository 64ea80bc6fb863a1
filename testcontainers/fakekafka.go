// Package fakekafka runs a fakekafka cluster (a Kafka test double with real
// replication: several brokers, ISR, high watermarks, failover) in a
// container with testcontainers-go:
//
//	ctr, err := fakekafka.Run(ctx, "", fakekafka.WithBrokers(3))
//	defer testcontainers.TerminateContainer(ctr)
//	brokers, err := ctr.Brokers(ctx) // host:port of each broker, by broker id
//
// An empty image is the fakekafka version this module was released with,
// built into a local image on first use and kept (Image); or pass an image
// of your own, or one BuildImage built from a checkout.
//
// Each broker has two listeners, as Kafka's listeners/advertised.listeners:
// EXTERNAL, published to the host and advertised with the mapped host ports
// (set over the control API after every start, so a restarted container
// with new ports is still reachable), and INTERNAL, for containers on a
// shared network, advertised as the network alias (WithNetworkAlias).
//
// The package depends on testcontainers-go and the standard library only.
// Control() returns a typed client of the cluster's HTTP control API:
// crash and restart brokers, pause replicas, set the ISR, elect leaders,
// inject Kafka errors.
package fakekafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Ports and listener names of the image (image/Dockerfile).
const (
	// ExternalPort is broker 1's EXTERNAL port in the container; broker n
	// listens on ExternalPort+n-1.
	ExternalPort = 9092
	// InternalPort is broker 1's INTERNAL port; broker n listens on
	// InternalPort+n-1.
	InternalPort = 29092
	// ControlPort serves the HTTP control API, /healthz and /readyz.
	ControlPort = 8080
	// SchemaRegistryPort serves the schema registry (Confluent Schema
	// Registry's REST API).
	SchemaRegistryPort = 8081

	External = "EXTERNAL"
	Internal = "INTERNAL"
)

// Container is a running fakekafka cluster.
type Container struct {
	testcontainers.Container
	opts options
}

type options struct {
	brokers        int
	clusterID      string
	alias          string
	advertisedHost string
	autoCreate     *bool
	topics         []string
	minISR         int
	replicationF   int
	partitions     int
	dataVolume     string
}

// Option is an option of Run beyond testcontainers' own customizers.
type Option func(*options) error

// Customize makes an Option a testcontainers.ContainerCustomizer; Run
// applies it to the request itself.
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithBrokers sets the number of brokers (ids 1..n). Default 3.
func WithBrokers(n int) Option {
	return func(o *options) error {
		if n < 1 || n > 100 {
			return fmt.Errorf("fakekafka: WithBrokers(%d): want 1-100", n)
		}
		o.brokers = n
		return nil
	}
}

// WithClusterID sets the cluster id reported in Metadata.
func WithClusterID(id string) Option {
	return func(o *options) error {
		if id == "" {
			return errors.New("fakekafka: WithClusterID: empty id")
		}
		o.clusterID = id
		return nil
	}
}

// WithNetworkAlias advertises the INTERNAL listener as alias:port on every
// network the container joins (add one with testcontainers' network
// package), so other containers on it reach every broker through
// NetworkBrokers. Run fails if the container has no network.
func WithNetworkAlias(alias string) Option {
	return func(o *options) error {
		if alias == "" || strings.ContainsAny(alias, ":/, ") {
			return fmt.Errorf("fakekafka: WithNetworkAlias(%q): not a host name", alias)
		}
		o.alias = alias
		return nil
	}
}

// WithAdvertisedHost advertises the EXTERNAL listener with this host and
// the mapped ports, instead of the Docker host testcontainers reports.
func WithAdvertisedHost(host string) Option {
	return func(o *options) error {
		if host == "" {
			return errors.New("fakekafka: WithAdvertisedHost: empty host")
		}
		o.advertisedHost = host
		return nil
	}
}

// WithAutoCreateTopics sets auto.create.topics.enable (default true).
func WithAutoCreateTopics(on bool) Option {
	return func(o *options) error {
		o.autoCreate = &on
		return nil
	}
}

// WithTopics creates topics at start, each "NAME", "NAME:PARTITIONS" or
// "NAME:PARTITIONS:REPLICATION_FACTOR".
func WithTopics(topics ...string) Option {
	return func(o *options) error {
		for _, t := range topics {
			if t == "" || strings.Contains(t, ",") {
				return fmt.Errorf("fakekafka: WithTopics: bad topic %q", t)
			}
		}
		o.topics = append(o.topics, topics...)
		return nil
	}
}

// WithMinInsyncReplicas sets min.insync.replicas for new topics.
func WithMinInsyncReplicas(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("fakekafka: WithMinInsyncReplicas(%d): want at least 1", n)
		}
		o.minISR = n
		return nil
	}
}

// WithDefaultReplicationFactor sets default.replication.factor.
func WithDefaultReplicationFactor(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("fakekafka: WithDefaultReplicationFactor(%d): want at least 1", n)
		}
		o.replicationF = n
		return nil
	}
}

// WithNumPartitions sets num.partitions for new topics.
func WithNumPartitions(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("fakekafka: WithNumPartitions(%d): want at least 1", n)
		}
		o.partitions = n
		return nil
	}
}

// DataDir is where WithDataVolume mounts its volume in the container.
const DataDir = "/data"

// WithDataVolume keeps the cluster's topics, records, committed offsets,
// groups and transactions in the Docker volume name (created when it does
// not exist), mounted at DataDir: a container started later with the same
// volume carries on where this one stopped. Stop the container (SIGTERM)
// rather than kill it to write the last HW checkpoint; acknowledged acks=all
// records survive a kill too. The module never removes the volume.
func WithDataVolume(name string) Option {
	return func(o *options) error {
		if name == "" || strings.ContainsAny(name, "/:") {
			return fmt.Errorf("fakekafka: WithDataVolume(%q): want a volume name", name)
		}
		o.dataVolume = name
		return nil
	}
}

// Any other setting of the binary is an environment variable
// (FAKEKAFKA_REPLICA_LAG_TIME_MAX, ...): pass testcontainers.WithEnv.

// Run starts a fakekafka container from img and returns once every broker
// answers on its mapped host ports. img must exist locally (BuildImage
// builds one from a checkout); Run never pulls an image that is present.
// With img "", Run uses the image of the fakekafka version this module was
// released with, and builds it on first use (Image): go get of this module
// is all a test needs.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	if img == "" {
		var err error
		if img, err = Image(ctx, "", nil); err != nil {
			return nil, err
		}
	}
	o := options{brokers: 3}
	for _, opt := range opts {
		if opt, ok := opt.(Option); ok {
			if err := opt(&o); err != nil {
				return nil, err
			}
		}
	}
	env := map[string]string{
		"FAKEKAFKA_BROKERS":          strconv.Itoa(o.brokers),
		"FAKEKAFKA_AWAIT_ADVERTISED": External,
	}
	if o.alias != "" {
		env["FAKEKAFKA_ADVERTISED_LISTENERS"] = fmt.Sprintf("%s://localhost:%d,%s://%s:%d", External, ExternalPort, Internal, o.alias, InternalPort)
	}
	if o.clusterID != "" {
		env["FAKEKAFKA_CLUSTER_ID"] = o.clusterID
	}
	if o.autoCreate != nil {
		env["FAKEKAFKA_AUTO_CREATE_TOPICS"] = strconv.FormatBool(*o.autoCreate)
	}
	if len(o.topics) > 0 {
		env["FAKEKAFKA_TOPICS"] = strings.Join(o.topics, ",")
	}
	for name, v := range map[string]int{"FAKEKAFKA_MIN_INSYNC_REPLICAS": o.minISR, "FAKEKAFKA_DEFAULT_REPLICATION_FACTOR": o.replicationF, "FAKEKAFKA_NUM_PARTITIONS": o.partitions} {
		if v != 0 {
			env[name] = strconv.Itoa(v)
		}
	}
	var mounts testcontainers.ContainerMounts
	if o.dataVolume != "" {
		env["FAKEKAFKA_DATA_DIR"] = DataDir
		mounts = append(mounts, testcontainers.VolumeMount(o.dataVolume, DataDir))
	}
	ports := []string{fmt.Sprintf("%d/tcp", ControlPort), fmt.Sprintf("%d/tcp", SchemaRegistryPort)}
	for i := range o.brokers {
		ports = append(ports, fmt.Sprintf("%d/tcp", ExternalPort+i))
	}

	c := &Container{opts: o}
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        img,
			Env:          env,
			ExposedPorts: ports,
			Mounts:       mounts,
			// The image has a HEALTHCHECK too; this wait reads the same
			// /readyz, which answers 200 once advertiseHook has run.
			WaitingFor: wait.ForHTTP("/readyz").WithPort(fmt.Sprintf("%d/tcp", ControlPort)).
				WithStartupTimeout(30 * time.Second).WithPollInterval(20 * time.Millisecond),
			LifecycleHooks: []testcontainers.ContainerLifecycleHooks{{
				PostStarts: []testcontainers.ContainerHook{c.advertiseHook},
			}},
			// fakekafka keeps everything in memory (or in the data volume):
			// a read-only root file system proves it writes nothing else.
			HostConfigModifier: func(hc *container.HostConfig) { hc.ReadonlyRootfs = true },
		},
		Started: true,
	}
	for _, opt := range opts {
		if _, ok := opt.(Option); ok {
			continue
		}
		if err := opt.Customize(&req); err != nil {
			return nil, fmt.Errorf("fakekafka: customize: %w", err)
		}
	}
	if o.alias != "" {
		if len(req.Networks) == 0 {
			return nil, fmt.Errorf("fakekafka: WithNetworkAlias(%q) needs a network: add network.WithNetwork", o.alias)
		}
		if req.NetworkAliases == nil {
			req.NetworkAliases = map[string][]string{}
		}
		for _, nw := range req.Networks {
			if !containsString(req.NetworkAliases[nw], o.alias) {
				req.NetworkAliases[nw] = append(req.NetworkAliases[nw], o.alias)
			}
		}
	}

	ctr, err := testcontainers.GenericContainer(ctx, req)
	if ctr != nil {
		c.Container = ctr
	}
	if err != nil {
		if ctr == nil {
			return nil, fmt.Errorf("fakekafka: %w", err)
		}
		return c, fmt.Errorf("fakekafka: %w", err)
	}
	return c, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// advertiseHook runs after every start (the first and every restart, when
// Docker maps new host ports): it tells the cluster the EXTERNAL addresses
// clients on the host must use. The wait strategy then waits for /readyz.
func (c *Container) advertiseHook(ctx context.Context, ctr testcontainers.Container) error {
	if c.Container == nil {
		c.Container = ctr
	}
	addrs, err := c.Brokers(ctx)
	if err != nil {
		return err
	}
	body := map[string]string{}
	for i, a := range addrs {
		body[strconv.Itoa(i+1)] = a
	}
	cc, err := c.Control(ctx)
	if err != nil {
		return err
	}
	// The process may not listen yet when Docker's port mapping already
	// accepts: retry until the control API answers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = cc.setAdvertised(ctx, External, body)
		var apiErr *APIError
		if err == nil || errors.As(err, &apiErr) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // retry interval, not synchronisation
		}
	}
	if err != nil {
		return fmt.Errorf("fakekafka: advertising %v: %w", addrs, err)
	}
	return nil
}

// Brokers returns every broker's EXTERNAL address on the host, broker 1
// first: the host testcontainers reports (or WithAdvertisedHost) and the
// mapped ports, which change when the container restarts.
func (c *Container) Brokers(ctx context.Context) ([]string, error) {
	host := c.opts.advertisedHost
	if host == "" {
		h, err := c.Host(ctx)
		if err != nil {
			return nil, fmt.Errorf("fakekafka: host: %w", err)
		}
		host = h
	}
	out := make([]string, c.opts.brokers)
	for i := range out {
		p, err := c.MappedPort(ctx, fmt.Sprintf("%d/tcp", ExternalPort+i))
		if err != nil {
			return nil, fmt.Errorf("fakekafka: broker %d: %w", i+1, err)
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(int(p.Num())))
	}
	return out, nil
}

// NetworkBrokers returns every broker's INTERNAL address for containers on
// the container's network (alias:port, broker 1 first). It needs
// WithNetworkAlias.
func (c *Container) NetworkBrokers() ([]string, error) {
	if c.opts.alias == "" {
		return nil, errors.New("fakekafka: NetworkBrokers needs WithNetworkAlias")
	}
	out := make([]string, c.opts.brokers)
	for i := range out {
		out[i] = net.JoinHostPort(c.opts.alias, strconv.Itoa(InternalPort+i))
	}
	return out, nil
}

// ControlURL returns the base URL of the control API on the host, e.g.
// http://127.0.0.1:32771.
func (c *Container) ControlURL(ctx context.Context) (string, error) {
	u, err := c.PortEndpoint(ctx, fmt.Sprintf("%d/tcp", ControlPort), "http")
	if err != nil {
		return "", fmt.Errorf("fakekafka: control port: %w", err)
	}
	return u, nil
}

// SchemaRegistryURL returns the base URL of the schema registry on the
// host, e.g. http://127.0.0.1:32772: what a Confluent serialiser's
// schema.registry.url takes. Its content is in the cluster's _schemas
// topic.
func (c *Container) SchemaRegistryURL(ctx context.Context) (string, error) {
	u, err := c.PortEndpoint(ctx, fmt.Sprintf("%d/tcp", SchemaRegistryPort), "http")
	if err != nil {
		return "", fmt.Errorf("fakekafka: schema registry port: %w", err)
	}
	return u, nil
}

// Control returns a client of the control API at its current host port.
// Get a new one after a restart.
func (c *Container) Control(ctx context.Context) (*Control, error) {
	u, err := c.ControlURL(ctx)
	if err != nil {
		return nil, err
	}
	return NewControl(u, &http.Client{Timeout: 30 * time.Second}), nil
}
