package server

// The schema registry inside the cluster (package schemaregistry,
// docs/schema-registry.md): Confluent Schema Registry's REST API on its
// own HTTP listener, started with the cluster and closed with it, its
// content in the _schemas topic (schema_store.go). With SASL on, the API
// takes HTTP basic auth with the cluster's SASL users, as a registry set
// up with the same users as its Kafka cluster would.

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/schemaregistry"
)

// SchemaRegistryConfig runs a schema registry in the cluster: Confluent
// Schema Registry's REST API (what its clients and serialisers use), its
// content kept in the replicated, compacted _schemas topic.
type SchemaRegistryConfig struct {
	// Listen is the registry's HTTP HOST:PORT. Default "127.0.0.1:0": a
	// free port, which SchemaRegistryURL reports.
	Listen string
}

// schemaRegistry is the running registry.
type schemaRegistry struct {
	store    *schemaStore
	registry *schemaregistry.Registry
	srv      *http.Server
	url      string
}

// startSchemaRegistry creates _schemas (or checks it), loads it on its
// leader and starts the HTTP listener.
func (c *Cluster) startSchemaRegistry() error {
	cfg := c.cfg.SchemaRegistry
	if cfg == nil {
		return nil
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	store := c.newSchemaStore()
	if _, err := store.shard(); err != nil {
		return fmt.Errorf("schema registry: %v", err)
	}
	// Confluent's store writes a NOOP at start to find the end of the
	// log, and reads up to it; a failure leaves it for the first write.
	store.mu.Lock()
	err := store.findEnd(context.Background())
	store.mu.Unlock()
	if err != nil {
		c.log.Warn("schema registry: NOOP at start failed", "error", err)
	}
	store.State() // loads it on the leader
	opts := schemaregistry.Options{Logger: c.log}
	if c.saslOn() {
		opts.Authenticate = c.basicAuth
	}
	reg := schemaregistry.New(store, opts)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("schema registry listener: %v", err)
	}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelInfo)} // the cluster's log, not stderr
	c.sr = &schemaRegistry{store: store, registry: reg, srv: srv, url: "http://" + ln.Addr().String()}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		srv.Serve(ln)
	}()
	c.log.Info("schema registry started", "url", c.sr.url, "topic", schemasTopic, "auth", opts.Authenticate != nil)
	return nil
}

// stopSchemaRegistry closes the listener and waits for the requests in
// flight, which the closed cluster ends (a write waiting on _schemas
// gives up at c.closing).
func (c *Cluster) stopSchemaRegistry() {
	if c.sr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.sr.srv.Shutdown(ctx); err != nil {
		c.sr.srv.Close()
	}
}

// SchemaRegistryURL is the registry's base URL ("http://127.0.0.1:8081"),
// "" when Config.SchemaRegistry is nil.
func (c *Cluster) SchemaRegistryURL() string {
	if c.sr == nil {
		return ""
	}
	return c.sr.url
}

// SchemaRegistry is the running registry, nil when Config.SchemaRegistry
// is nil.
func (c *Cluster) SchemaRegistry() *schemaregistry.Registry {
	if c.sr == nil {
		return nil
	}
	return c.sr.registry
}

// saslOn says whether the cluster authenticates with SASL: a SASL
// listener, or SASL users configured.
func (c *Cluster) saslOn() bool {
	if len(c.cfg.SASLUsers) > 0 {
		return true
	}
	for _, l := range c.cfg.Listeners {
		if strings.HasPrefix(l.SecurityProtocol, "SASL_") {
			return true
		}
	}
	return false
}

// basicAuth checks the registry's HTTP basic credentials against the SASL
// users: a PLAIN password, or a SCRAM credential (a user made with
// AlterUserScramCredentials has only that) derived from password.
func (c *Cluster) basicAuth(user, password string) bool {
	if pw, ok := c.users.Password(user); ok && subtle.ConstantTimeCompare([]byte(pw), []byte(password)) == 1 {
		return true
	}
	for _, mech := range sasl.ScramMechanisms {
		cred, ok := c.users.Scram(mech, user)
		if !ok {
			continue
		}
		got, err := sasl.NewScramCredential(mech, password, cred.Salt, cred.Iterations)
		if err == nil && subtle.ConstantTimeCompare(got.StoredKey, cred.StoredKey) == 1 {
			return true
		}
	}
	return false
}
