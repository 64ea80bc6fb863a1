package matrix

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process drives a client in another language through a small adapter
// program under clients/, one run of it per operation:
//
//	<argv...> version|produce|consume|group|metadata|transact
//
// Its first line of input is the operation's settings (adapterConfig, JSON);
// then, for produce, one JSON record per line until end of input; for
// consume and group, end of input says stop (a group member leaves). It
// answers JSON lines (adapterLine) on standard output. clients/README.md
// describes the protocol for adapter writers.
type Process struct {
	name string
	// dir is the adapter's directory, relative to this package.
	dir string
	// argv is the command line in dir, without the operation. Its first
	// element, when relative, is a file of dir that a build or install
	// makes (a venv's python, a built binary).
	argv []string
	// need is a file of dir that exists once the adapter is installed.
	need string
	// install is what makes need (scripts/matrix-clients.sh's argument).
	install string

	version *processVersion
}

type processVersion struct {
	once sync.Once
	v    string
}

func newProcess(name, dir, need, install string, argv ...string) Process {
	return Process{name: name, dir: dir, argv: argv, need: need, install: install, version: &processVersion{}}
}

func (p Process) Name() string { return p.name }

// Available reports why the adapter cannot run, if it cannot: its
// toolchain or its installed packages are missing.
func (p Process) Available() error {
	if _, err := os.Stat(filepath.Join(p.dir, p.need)); err != nil {
		return fmt.Errorf("%s is not installed (%s missing): bash scripts/matrix-clients.sh %s", p.name, filepath.Join(p.dir, p.need), p.install)
	}
	if !strings.Contains(p.argv[0], "/") {
		if _, err := exec.LookPath(p.argv[0]); err != nil {
			return fmt.Errorf("%s needs %s on the PATH", p.name, p.argv[0])
		}
	}
	return nil
}

func (p Process) Version() string {
	p.version.once.Do(func() {
		p.version.v = "not installed"
		if p.Available() != nil {
			return
		}
		// Tried three times: the table's version row is checked, and one
		// slow start on a loaded machine should not fail the run.
		for try := 0; try < 3; try++ {
			v, err := p.askVersion()
			if err == nil {
				p.version.v = v
				return
			}
			msg, _, _ := strings.Cut(err.Error(), "\n")
			p.version.v = "version failed: " + msg
		}
	})
	return p.version.v
}

func (p Process) askVersion() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v string
	_, err := p.run(ctx, "version", adapterConfig{}, nil, func(l adapterLine) {
		if l.Type == "version" {
			v = l.Version
		}
	})
	if err == nil && v == "" {
		err = errors.New("no version line")
	}
	return v, err
}

// Compressions: every adapter produces with all of Kafka's codecs or says
// which it cannot with notSupported.
func (p Process) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

// adapterConfig is an adapter's first line of input. Every field is sent;
// an operation reads the ones it needs.
type adapterConfig struct {
	Bootstrap string `json:"bootstrap"`
	ClientID  string `json:"clientId"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// produce
	Acks              int    `json:"acks"`
	Codec             string `json:"codec"`
	Idempotent        bool   `json:"idempotent"`
	Retries           int    `json:"retries"`           // -1: the client's default
	DeliveryTimeoutMs int    `json:"deliveryTimeoutMs"` // 0: the client's default
	// consume
	Offset        int64 `json:"offset"`
	ReadCommitted bool  `json:"readCommitted"` // isolation.level=read_committed
	// transact
	TransactionalID string `json:"transactionalId"`
	// group
	Group               string `json:"group"`
	SessionTimeoutMs    int    `json:"sessionTimeoutMs"`
	HeartbeatIntervalMs int    `json:"heartbeatIntervalMs"`
	CommitIntervalMs    int    `json:"commitIntervalMs"`
	// Settings are extra consumer settings (the Java adapter's).
	Settings map[string]string `json:"settings,omitempty"`
	// metadata
	Topics []string `json:"topics"`
	// configs (process_configs.go)
	ResourceType string     `json:"resourceType"`
	ResourceName string     `json:"resourceName"`
	ConfigOps    []ConfigOp `json:"configOps"`
	// every client: the matrix's shortened timings
	BackoffMs   int `json:"backoffMs"`
	FetchWaitMs int `json:"fetchWaitMs"`
	// every client: PLAINTEXT, or SASL_SSL with a SASL mechanism and the
	// PEM file of the CA to trust (adapterSecurity); the Java adapter also
	// SSL with a client certificate and its key (PEM files)
	SecurityProtocol string `json:"securityProtocol"`
	SASLMechanism    string `json:"saslMechanism"`
	SASLUsername     string `json:"saslUsername"`
	SASLPassword     string `json:"saslPassword"`
	SSLCAFile        string `json:"sslCaFile"`
	// SASLTokenAuth: the SCRAM user is a delegation token id and the
	// password its HMAC (tokenauth=true; the Java adapter's)
	SASLTokenAuth bool `json:"saslTokenAuth"`
	// dtoken (process_dtoken.go)
	TokenOp            string   `json:"tokenOp"`
	TokenOwner         string   `json:"tokenOwner"`
	TokenRenewers      []string `json:"tokenRenewers"`
	TokenMaxLifetimeMs int64    `json:"tokenMaxLifetimeMs"`
	TokenHMAC          string   `json:"tokenHmac"`
	TokenPeriodMs      int64    `json:"tokenPeriodMs"`
	TokenOwners        []string `json:"tokenOwners"`
	// OAUTHBEARER (the Java adapter): SASLUsername and SASLPassword are the
	// OAuth client id and secret, sent to this token endpoint
	OAuthTokenEndpointURL string `json:"oauthTokenEndpointUrl,omitempty"`
	OAuthScope            string `json:"oauthScope,omitempty"`
	SSLCertFile           string `json:"sslCertFile,omitempty"`
	SSLKeyFile            string `json:"sslKeyFile,omitempty"`
	// the schema registry scenarios (process_registry.go): its URL
	RegistryURL string `json:"registryUrl,omitempty"`
}

func newAdapterConfig(bootstrap []string, clientID string) adapterConfig {
	return adapterConfig{
		Bootstrap:           strings.Join(bootstrap, ","),
		ClientID:            clientID,
		Retries:             -1,
		SessionTimeoutMs:    int(groupSessionTimeout / time.Millisecond),
		HeartbeatIntervalMs: int(groupHeartbeatInterval / time.Millisecond),
		CommitIntervalMs:    int(groupCommitInterval / time.Millisecond),
		BackoffMs:           20,
		FetchWaitMs:         100,
		SecurityProtocol:    "PLAINTEXT",
	}
}

// adapterLine is one line an adapter writes. Type says which fields are
// set: "version"; "delivery" (Index, then Offset or Error); "record"
// (Partition, Offset, Key, Value); "error" (Error: one the consumer
// surfaced); "metadata" (Brokers, TopicList); "notSupported" (Reason: the
// client cannot do the operation); "fatal" (Error: the operation failed).
type adapterLine struct {
	Type      string            `json:"type"`
	Version   string            `json:"version,omitempty"`
	Index     int               `json:"index,omitempty"`
	Partition int32             `json:"partition,omitempty"`
	Offset    int64             `json:"offset,omitempty"`
	Key       *string           `json:"key,omitempty"`
	Value     *string           `json:"value,omitempty"`
	Error     *AdapterError     `json:"error,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	Brokers   []BrokerMetadata  `json:"brokers,omitempty"`
	TopicList []adapterTopic    `json:"topics,omitempty"`
	Configs   []DescribedConfig `json:"configs,omitempty"`
	Tokens    []AdapterToken    `json:"tokens,omitempty"`
	ExpiryMs  int64             `json:"expiryMs,omitempty"`
	// the schema registry scenarios (process_registry.go)
	ID      int             `json:"id,omitempty"`
	Reader  string          `json:"reader,omitempty"`
	Decoded json.RawMessage `json:"decoded,omitempty"`
}

type adapterTopic struct {
	Name       string `json:"name"`
	Partitions []struct {
		Partition int32   `json:"partition"`
		Leader    int32   `json:"leader"`
		Replicas  []int32 `json:"replicas"`
		ISR       []int32 `json:"isr"`
	} `json:"partitions"`
}

// AdapterError is an error a client reported through its adapter. Name is
// stable (the exception class, the error code's name); Message is the
// client's full text.
type AdapterError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	// Connection marks an error about a connection, not a broker's answer.
	Connection bool `json:"connection"`
	// Protocol marks a response the client could not parse.
	Protocol bool `json:"protocol"`
	// Status and Code are a schema registry's HTTP status and error_code,
	// where the client's error has them.
	Status int `json:"status,omitempty"`
	Code   int `json:"code,omitempty"`
}

func (e *AdapterError) Error() string {
	if e.Message == "" || e.Message == e.Name {
		return e.Name
	}
	return e.Name + ": " + e.Message
}

// asError turns a reported error into the matrix's error types.
func (e *AdapterError) asError() error {
	if e.Protocol {
		return protocolError(e.Message)
	}
	return e
}

// stderrTail keeps the last lines an adapter wrote to standard error, for
// the error when it fails.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

func (s *stderrTail) read(r io.Reader) {
	debug := os.Getenv("MATRIX_ADAPTER_DEBUG") != ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if debug {
			fmt.Fprintln(os.Stderr, sc.Text())
		}
		s.mu.Lock()
		s.lines = append(s.lines, sc.Text())
		if len(s.lines) > 20 {
			s.lines = s.lines[1:]
		}
		s.mu.Unlock()
	}
}

func (s *stderrTail) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// running is a started adapter.
type running struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *stderrTail
	lines  chan adapterLine // closed at the end of its output
	bad    error            // an unparsable line, set before lines closes
	done   chan struct{}    // closed once the process has exited
	err    error            // its exit status, set before done closes
}

// start runs the adapter for op and sends cfg as its first line.
func (p Process) start(op string, cfg adapterConfig) (*running, error) {
	if err := p.Available(); err != nil {
		return nil, err
	}
	argv := append(append([]string{}, p.argv...), op)
	if strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
		// A file of the adapter's directory; cmd.Dir does not apply to
		// the program's own path.
		abs, err := filepath.Abs(filepath.Join(p.dir, argv[0]))
		if err != nil {
			return nil, err
		}
		argv[0] = abs
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // kill takes its children too
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	r := &running{cmd: cmd, stdin: stdin, stderr: &stderrTail{}, lines: make(chan adapterLine, 64), done: make(chan struct{})}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		r.stderr.read(stderr)
	}()
	go func() {
		defer readers.Done()
		defer close(r.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var l adapterLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				r.bad = fmt.Errorf("%s wrote %q: %v", p.name, sc.Text(), err)
				io.Copy(io.Discard, stdout)
				return
			}
			r.lines <- l
		}
	}()
	go func() {
		readers.Wait()
		r.err = cmd.Wait()
		close(r.done)
	}()
	first, _ := json.Marshal(cfg)
	if _, err := r.stdin.Write(append(first, '\n')); err != nil {
		r.kill()
		return nil, fmt.Errorf("%s: writing the settings: %w", p.name, err)
	}
	return r, nil
}

// kill ends the adapter and every process it started.
func (r *running) kill() {
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	r.stdin.Close()
	<-r.done
}

// finish closes the adapter's input and waits up to timeout for it to
// exit, then kills it. It returns why the adapter failed, if it did.
func (r *running) finish(name string, timeout time.Duration) error {
	r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.kill()
		return fmt.Errorf("%s did not exit within %v of the end of its input; stderr:\n%s", name, timeout, r.stderr)
	}
	if r.err != nil {
		return fmt.Errorf("%s: %v; stderr:\n%s", name, r.err, r.stderr)
	}
	return r.bad
}

// run runs op to its end: in is written after cfg (then input closes), and
// each line of output goes to each. A "notSupported" line becomes a
// NotSupportedError, a "fatal" line the operation's error.
func (p Process) run(ctx context.Context, op string, cfg adapterConfig, in func(w io.Writer) error, each func(adapterLine)) (*running, error) {
	r, err := p.start(op, cfg)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, r.kill)
	defer stop()
	werr := make(chan error, 1)
	go func() {
		var err error
		if in != nil {
			err = in(r.stdin)
		}
		r.stdin.Close()
		werr <- err
	}()
	var failed error
	for l := range r.lines {
		switch l.Type {
		case "notSupported":
			failed = notSupported(p.name, "%s", l.Reason)
		case "fatal":
			if l.Error == nil {
				l.Error = &AdapterError{Name: "fatal"}
			}
			failed = l.Error.asError()
		default:
			each(l)
		}
	}
	if err := <-werr; err != nil && failed == nil && !errors.Is(err, syscall.EPIPE) {
		failed = fmt.Errorf("%s: writing input: %w", p.name, err)
	}
	if err := r.finish(p.name, 30*time.Second); err != nil && failed == nil {
		failed = err
	}
	if failed == nil && ctx.Err() != nil {
		failed = ctx.Err()
	}
	return r, failed
}

func (p Process) Produce(ctx context.Context, pc ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	cfg := newAdapterConfig(pc.Bootstrap, pc.ClientID)
	cfg.Topic, cfg.Partition = pc.Topic, pc.Partition
	cfg.Acks, cfg.Codec, cfg.Idempotent, cfg.Retries = pc.Acks, pc.Codec, pc.Idempotent, pc.Retries
	cfg.DeliveryTimeoutMs = int(pc.DeliveryTimeout / time.Millisecond)
	return p.produce(ctx, cfg, records)
}

// produce runs the produce operation with cfg: a delivery per record.
func (p Process) produce(ctx context.Context, cfg adapterConfig, records iter.Seq[Record]) ([]Delivery, error) {
	var mu sync.Mutex
	var out []Delivery
	reported := map[int]bool{}
	write := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for rec := range records {
			mu.Lock()
			out = append(out, Delivery{Offset: -1, Err: fmt.Errorf("%s gave no delivery report", p.name)})
			mu.Unlock()
			if err := enc.Encode(struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			}{rec.Key, rec.Value}); err != nil {
				// Keep draining: the scenario's iterator has side effects
				// (the failover crash) that must happen.
				for range records {
					mu.Lock()
					out = append(out, Delivery{Offset: -1, Err: fmt.Errorf("%s: writing input: %w", p.name, err)})
					mu.Unlock()
				}
				return err
			}
		}
		return nil
	}
	var surfaced []error
	_, err := p.run(ctx, "produce", cfg, write, func(l adapterLine) {
		mu.Lock()
		defer mu.Unlock()
		if l.Type == "error" && l.Error != nil && l.Error.Protocol {
			surfaced = append(surfaced, l.Error.asError())
		}
		if l.Type != "delivery" {
			return
		}
		if l.Index < 0 || l.Index >= len(out) || reported[l.Index] {
			return
		}
		reported[l.Index] = true
		if l.Error != nil {
			out[l.Index] = Delivery{Offset: -1, Err: l.Error.asError()}
		} else if cfg.Acks == AcksNone {
			out[l.Index] = Delivery{Offset: -1}
		} else {
			out[l.Index] = Delivery{Offset: l.Offset}
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if _, ok := IsNotSupported(err); ok {
		return nil, err
	}
	if err == nil {
		err = errors.Join(surfaced...) // responses the client could not parse
	}
	return out, err
}

// stream runs a consuming operation: records and errors go to the stream
// until Close closes the adapter's input (and so ends the consumer).
func (p Process) stream(op string, cfg adapterConfig) (Stream, error) {
	r, err := p.start(op, cfg)
	if err != nil {
		return nil, err
	}
	q := newQueue()
	s := &pollStream{q: q, done: make(chan struct{}), log: r.stderr.String}
	notSup := make(chan error, 1)
	go func() {
		defer close(s.done)
		defer q.finish()
		first := true
		for l := range r.lines {
			switch l.Type {
			case "record":
				q.push(Event{Record: Record{Partition: l.Partition, Offset: l.Offset, Key: deref(l.Key), Value: deref(l.Value)}})
			case "error", "fatal":
				if l.Error != nil {
					q.push(Event{Err: l.Error.asError()})
				}
			case "notSupported":
				if first {
					notSup <- notSupported(p.name, "%s", l.Reason)
				}
			}
			first = false
		}
		if r.bad != nil {
			q.push(Event{Err: r.bad})
		}
	}()
	s.stop = func() {
		if err := r.finish(p.name, 20*time.Second); err != nil {
			q.push(Event{Err: err})
		}
		<-s.done
	}
	// A client without the operation says so at once.
	select {
	case err := <-notSup:
		s.Close()
		return nil, err
	case <-time.After(50 * time.Millisecond):
	}
	return s, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (p Process) Consume(ctx context.Context, cc ConsumerConfig) (Stream, error) {
	cfg := newAdapterConfig(cc.Bootstrap, cc.ClientID)
	cfg.Topic, cfg.Partition, cfg.Offset, cfg.ReadCommitted = cc.Topic, cc.Partition, cc.Offset, cc.ReadCommitted
	return p.stream("consume", cfg)
}

func (p Process) JoinGroup(ctx context.Context, gc GroupConfig) (Stream, error) {
	cfg := newAdapterConfig(gc.Bootstrap, gc.ClientID)
	cfg.Group, cfg.Topic, cfg.Settings = gc.Group, gc.Topic, gc.Settings
	return p.stream("group", cfg)
}

func (p Process) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	cfg := newAdapterConfig(bootstrap, "")
	cfg.Topics = topics
	var md *adapterLine
	_, err := p.run(ctx, "metadata", cfg, nil, func(l adapterLine) {
		if l.Type == "metadata" {
			md = &l
		}
	})
	if err != nil {
		return Metadata{}, err
	}
	if md == nil {
		return Metadata{}, fmt.Errorf("%s reported no metadata", p.name)
	}
	out := Metadata{Brokers: md.Brokers}
	for _, name := range topics {
		found := false
		for _, t := range md.TopicList {
			if t.Name != name {
				continue
			}
			found = true
			tm := TopicMetadata{Name: name}
			for _, pm := range t.Partitions {
				tm.Partitions = append(tm.Partitions, PartitionMetadata{Partition: pm.Partition, Leader: pm.Leader, Replicas: orEmpty(pm.Replicas), ISR: orEmpty(pm.ISR)})
			}
			out.Topics = append(out.Topics, tm)
		}
		if !found {
			return Metadata{}, fmt.Errorf("topic %s missing from %s's metadata", name, p.name)
		}
	}
	return out, nil
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func (p Process) Describe(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	var ae *AdapterError
	if errors.As(err, &ae) {
		if ae.Connection {
			return connectionError
		}
		return ae.Name
	}
	if isConnectionError(err) {
		return connectionError
	}
	return fmt.Sprintf("%T", err)
}
