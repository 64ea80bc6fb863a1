package reference

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ControllerID is the node id of the reference cluster's dedicated KRaft
// controller. Brokers are 1..Brokers, as in fakekafka.
const ControllerID = 100

// KafkaSettings are the server.properties every reference node shares: small
// numbers so that failures play out in seconds. fakekafka's Config in
// NewFake mirrors them. Settings left at Kafka's default are not written,
// so that DescribeConfigs reports them as DEFAULT_CONFIG, as fakekafka does.
var KafkaSettings = map[string]string{
	"default.replication.factor":                       "3",
	"offsets.topic.replication.factor":                 "3",
	"offsets.topic.num.partitions":                     "3",
	"transaction.state.log.replication.factor":         "3",
	"transaction.state.log.min.isr":                    "2",
	"transaction.state.log.num.partitions":             "3",
	"share.coordinator.state.topic.replication.factor": "3",
	"group.initial.rebalance.delay.ms":                 "0",
	"replica.lag.time.max.ms":                          "3000",
	"broker.session.timeout.ms":                        "6000",
	"broker.heartbeat.interval.ms":                     "500",
	// KRaft elects leaderless partitions uncleanly on a periodic check
	// (default every 5 min) once the config allows it; fakekafka at once.
	"unclean.leader.election.interval.ms": "1000",
	// Kafka moves leaders back to their preferred replicas on a check 300 s
	// after start (then every 300 s); fakekafka never does. The check fell
	// inside the suite and moved a __consumer_offsets leader under a group
	// scenario (NOT_COORDINATOR for 60 s on both of a run's tries).
	"auto.leader.rebalance.enable": "false",
	// How often a coordinator looks for timed-out transactions (default 10 s).
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
	"num.network.threads":               "2",
	"num.io.threads":                    "2",
	"num.recovery.threads.per.data.dir": "1",
	"background.threads":                "2",
	// The first retention check (and every LogManager task) runs this long
	// after a broker starts, then every log.retention.check.interval.ms:
	// at Kafka's 30 s it fell somewhere in the suite, deleting the
	// old-timestamped records written before it (the request corpus's
	// partition sizes then depended on which cases came before it).
	// fakekafka honours the same setting.
	"log.initial.task.delay.ms":      "3600000",
	"log.cleaner.threads":            "1",
	"log.cleaner.dedupe.buffer.size": "4194304",
}

// Kafka is a running Apache Kafka cluster: Brokers broker-only nodes and one
// controller-only node, each its own JVM on loopback ports.
type Kafka struct {
	dir       string
	classpath string
	clusterID string
	brokers   int
	ports     map[int32]int // node id -> client (or controller) port
	ctlPort   int
	// secure: a SASL_PLAINTEXT client listener with the StandardAuthorizer
	// (kafka_secure.go); internal then holds each broker's PLAINTEXT
	// inter-broker port.
	secure   bool
	internal map[int32]int
	// extra settings for every node's server.properties (RestartWith).
	extra map[string]string
	// jvm replaces the nodes' JVM options (StartKafkaJVM).
	jvm []string

	mu       sync.Mutex
	procs    map[int32]*exec.Cmd
	done     map[int32]chan struct{}
	stopping map[int32]bool
	died     map[int32]error

	// StartTime is how long Start took from the first JVM to a cluster
	// whose every broker answers Metadata with all brokers.
	StartTime time.Duration
}

// Classpath finds the Kafka broker's runtime classpath:
// $FAKEKAFKA_REFERENCE_CLASSPATH, else the cache file that Resolve writes,
// else Resolve runs Maven now.
func Classpath() (string, error) {
	if cp := os.Getenv("FAKEKAFKA_REFERENCE_CLASSPATH"); cp != "" {
		return cp, nil
	}
	file := cacheFile()
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err := Resolve(); err != nil {
		return "", err
	}
	b, err := os.ReadFile(file)
	return strings.TrimSpace(string(b)), err
}

func cacheFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "fakekafka-reference", "classpath.txt")
}

// Resolve downloads the jars named by pom.xml beside this file into Maven's
// local repository and writes their classpath to the cache file.
func Resolve() error {
	_, self, _, _ := runtime.Caller(0)
	pom := filepath.Join(filepath.Dir(self), "pom.xml")
	if err := os.MkdirAll(filepath.Dir(cacheFile()), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("mvn", "-q", "-B", "-f", pom, "dependency:build-classpath", "-Dmdep.outputFile="+cacheFile())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("mvn dependency:build-classpath: %v\n%s", err, out)
	}
	return nil
}

// StartKafka formats and starts a reference cluster in a new temporary
// directory and waits until it is ready.
func StartKafka(brokers int) (*Kafka, error) { return startKafka(brokers, false, nil) }

// StartKafkaJVM is StartKafka with these JVM options for every node instead
// of the harness's (small heaps, C1 only, serial GC: quick to start). The
// bench command runs Kafka with the options its own start script uses.
func StartKafkaJVM(brokers int, jvm []string) (*Kafka, error) {
	return startKafka(brokers, false, jvm)
}

func startKafka(brokers int, secure bool, jvm []string) (*Kafka, error) {
	cp, err := Classpath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fakekafka-reference-")
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	k := &Kafka{
		dir: dir, classpath: cp, brokers: brokers, secure: secure, internal: map[int32]int{}, jvm: jvm,
		clusterID: base64.RawURLEncoding.EncodeToString(id),
		ports:     map[int32]int{}, procs: map[int32]*exec.Cmd{}, done: map[int32]chan struct{}{},
		stopping: map[int32]bool{}, died: map[int32]error{},
	}
	nodes := []int32{ControllerID}
	for i := 1; i <= brokers; i++ {
		nodes = append(nodes, int32(i))
	}
	for _, n := range nodes {
		if k.ports[n], err = freePort(); err != nil {
			return nil, err
		}
		if secure && n != ControllerID {
			if k.internal[n], err = freePort(); err != nil {
				return nil, err
			}
		}
	}
	if err := k.format(nodes); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	began := time.Now()
	for _, n := range nodes {
		if err := k.launch(n); err != nil {
			k.Close()
			return nil, err
		}
	}
	if err := k.waitReady(90 * time.Second); err != nil {
		k.Close()
		return nil, err
	}
	k.StartTime = time.Since(began)
	return k, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (k *Kafka) propsFile(node int32) string {
	return filepath.Join(k.dir, fmt.Sprintf("node%d.properties", node))
}

func (k *Kafka) writeProps(node int32) error {
	voters := fmt.Sprintf("%d@127.0.0.1:%d", ControllerID, k.ports[ControllerID])
	lines := []string{
		"node.id=" + strconv.Itoa(int(node)),
		"controller.quorum.voters=" + voters,
		"controller.listener.names=CONTROLLER",
		"log.dirs=" + filepath.Join(k.dir, fmt.Sprintf("data%d", node)),
	}
	switch {
	case k.secure:
		lines = append(lines, k.secureProps(node)...)
	case node == ControllerID:
		lines = append(lines, "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "process.roles=controller",
			fmt.Sprintf("listeners=CONTROLLER://127.0.0.1:%d", k.ports[node]))
	default:
		addr := fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", k.ports[node])
		lines = append(lines, "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"process.roles=broker", "listeners="+addr, "advertised.listeners="+addr,
			"inter.broker.listener.name=PLAINTEXT")
	}
	for key, v := range KafkaSettings {
		if sv, ok := secureSettings[key]; ok && k.secure {
			v = sv
		}
		lines = append(lines, key+"="+v)
	}
	k.mu.Lock()
	for key, v := range k.extra {
		lines = append(lines, key+"="+v)
	}
	k.mu.Unlock()
	return os.WriteFile(k.propsFile(node), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// format runs StorageTool for every node at once. Eligible leader replicas
// (KIP-966, on by default since 4.1) are turned off: fakekafka models the
// classic ISR, where an unclean election is the only way past a lost ISR.
func (k *Kafka) format(nodes []int32) error {
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		if err := k.writeProps(n); err != nil {
			return err
		}
		go func() {
			cmd := exec.Command("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", k.classpath,
				"kafka.tools.StorageTool", "format", "--cluster-id="+k.clusterID, "--config="+k.propsFile(n),
				"--feature", "eligible.leader.replicas.version=0")
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("format node %d: %v\n%s", n, err, out)
			}
			errs <- err
		}()
	}
	var all []error
	for range nodes {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

func (k *Kafka) launch(node int32) error {
	k.mu.Lock()
	running := k.procs[node] != nil && k.died[node] == nil
	k.mu.Unlock()
	if running {
		return fmt.Errorf("node %d is already running", node)
	}
	heap := "-Xmx384m"
	if node == ControllerID {
		heap = "-Xmx192m"
	}
	logf, err := os.OpenFile(filepath.Join(k.dir, fmt.Sprintf("node%d.log", node)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{heap, "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}
	if k.jvm != nil {
		args = slices.Clone(k.jvm)
	}
	cmd := exec.Command("java", append(args, "-cp", k.classpath, "kafka.Kafka", k.propsFile(node))...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's ^C is for the test, which stops
	// the JVMs itself), and killed if the test process dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		k.mu.Lock()
		if k.procs[node] == cmd && !k.stopping[node] {
			// Not stopped by us: keep why, for the next control call.
			k.died[node] = fmt.Errorf("node %d exited by itself (%v); its log ends:\n%s", node, err, k.logTail(node))
		}
		k.mu.Unlock()
		close(done)
	}()
	k.mu.Lock()
	k.procs[node], k.done[node] = cmd, done
	delete(k.died, node)
	k.mu.Unlock()
	return nil
}

// Addr is broker id's client address.
func (k *Kafka) Addr(id int32) string { return fmt.Sprintf("127.0.0.1:%d", k.ports[id]) }

// Bootstrap is every broker's address.
func (k *Kafka) Bootstrap() []string {
	var out []string
	for i := 1; i <= k.brokers; i++ {
		out = append(out, k.Addr(int32(i)))
	}
	return out
}

// waitReady waits until every running broker answers Metadata listing every
// running broker.
func (k *Kafka) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		k.mu.Lock()
		var up []int32
		for i := 1; i <= k.brokers; i++ {
			if k.procs[int32(i)] != nil {
				up = append(up, int32(i))
			}
		}
		k.mu.Unlock()
		ok := true
		for _, id := range up {
			n, err := metadataBrokers(ctx, k.readyAddr(id))
			if err != nil || n < len(up) {
				ok, last = false, fmt.Errorf("broker %d sees %d brokers: %v", id, n, err)
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reference cluster not ready after %v: %v (logs in %s)", timeout, last, k.dir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (k *Kafka) signal(node int32, sig syscall.Signal) error {
	k.mu.Lock()
	cmd, died := k.procs[node], k.died[node]
	k.mu.Unlock()
	if died != nil {
		return died
	}
	if cmd == nil {
		return fmt.Errorf("node %d is not running", node)
	}
	return cmd.Process.Signal(sig)
}

// logTail is the end of node's log file.
func (k *Kafka) logTail(node int32) string {
	b, _ := os.ReadFile(filepath.Join(k.dir, fmt.Sprintf("node%d.log", node)))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// stop sends sig and waits for the JVM to exit.
func (k *Kafka) stop(node int32, sig syscall.Signal, timeout time.Duration) error {
	k.mu.Lock()
	cmd, done, died := k.procs[node], k.done[node], k.died[node]
	k.stopping[node] = true
	k.mu.Unlock()
	if died != nil {
		return died
	}
	if cmd == nil {
		return fmt.Errorf("node %d is not running", node)
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused JVM cannot shut down
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
	}
	k.mu.Lock()
	delete(k.procs, node)
	delete(k.stopping, node)
	k.mu.Unlock()
	return nil
}

// Crash kills broker id with SIGKILL.
func (k *Kafka) Crash(id int32) error { return k.stop(id, syscall.SIGKILL, 10*time.Second) }

// Stop shuts broker id down with SIGTERM: a controlled shutdown, which
// moves its leaderships away first.
func (k *Kafka) Stop(id int32) error { return k.stop(id, syscall.SIGTERM, 60*time.Second) }

// Start restarts broker id on its old port and data and waits until every
// running broker lists it.
func (k *Kafka) Start(id int32) error {
	if err := k.launch(id); err != nil {
		return err
	}
	return k.waitReady(60 * time.Second)
}

// Pause freezes broker id's JVM with SIGSTOP: it stops fetching, answering
// and heartbeating, without closing a socket.
func (k *Kafka) Pause(id int32) error { return k.signal(id, syscall.SIGSTOP) }

// Resume continues a paused JVM.
func (k *Kafka) Resume(id int32) error { return k.signal(id, syscall.SIGCONT) }

// RSS is the summed resident memory of every running JVM, in bytes.
func (k *Kafka) RSS() (int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var sum int64
	for _, cmd := range k.procs {
		n, err := processRSS(cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// PIDs are the process ids of every running JVM, controller included.
func (k *Kafka) PIDs() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []int
	for _, cmd := range k.procs {
		out = append(out, cmd.Process.Pid)
	}
	return out
}

// processRSS reads VmRSS from /proc.
func processRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// Close kills every JVM and removes the data directory (kept when
// FAKEKAFKA_REFERENCE_KEEP is set, for the logs).
func (k *Kafka) Close() error {
	k.mu.Lock()
	var nodes []int32
	for n := range k.procs {
		nodes = append(nodes, n)
	}
	k.mu.Unlock()
	for _, n := range nodes {
		_ = k.stop(n, syscall.SIGKILL, 10*time.Second)
	}
	if os.Getenv("FAKEKAFKA_REFERENCE_KEEP") != "" {
		return nil
	}
	return os.RemoveAll(k.dir)
}
