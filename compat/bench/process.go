package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fakekafka/fakekafka/compat/reference"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Targets that run as processes of their own: Apache Kafka (four JVMs,
// through compat/reference's harness) and the fakekafka binary. They are
// not in Targets(), so that the bench needs no Java and builds nothing
// unless one is asked for (-targets kafka, or BENCH_KAFKA=1).

// OptionalTargets are the targets run only when named: kafka, kafka-small,
// fakekafka-bin, and the null broker's storing variants.
func OptionalTargets() []Target {
	return []Target{binTarget{}, kafkaTarget{name: "kafka", jvm: KafkaJVM}, kafkaTarget{name: "kafka-small"},
		nullTarget{brokers: 3, store: true}, nullTarget{brokers: 3, store: true, checksum: true}}
}

// KafkaJVM are the JVM options Kafka's own start scripts give a node
// (kafka-server-start.sh's KAFKA_HEAP_OPTS, kafka-run-class.sh's
// KAFKA_JVM_PERFORMANCE_OPTS), as the apache/kafka image runs it. The
// kafka-small target uses compat/reference's instead (-Xmx384m, C1 only,
// serial GC), which start sooner and hold less.
var KafkaJVM = []string{"-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true"}

// preparer is a target with work to do once before anything is timed
// (building a binary, resolving jars).
type preparer interface {
	Prepare(ctx context.Context) error
}

// pidInstance is an instance running as processes whose memory the bench
// reads from /proc.
type pidInstance interface {
	PIDs() []int
}

// procStatusSum sums one /proc/PID/status field (kB) over pids, in bytes.
func procStatusSum(pids []int, field string) (int64, bool) {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, false
		}
		found := false
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					return 0, false
				}
				sum, found = sum+kb*1024, true
			}
		}
		if !found {
			return 0, false
		}
	}
	return sum, len(pids) > 0
}

// peakRSSOf is the summed VmHWM (each process's peak resident memory) of a
// process target's instance; false for in-process targets.
func peakRSSOf(inst Instance) (int64, bool) {
	p, ok := inst.(pidInstance)
	if !ok {
		return 0, false
	}
	return procStatusSum(p.PIDs(), "VmHWM")
}

// kafkaTarget is Apache Kafka 4.4 from compat/reference: 3 broker JVMs and
// one KRaft controller JVM, with the reference suite's server.properties;
// topics are created rf=3 with min.insync.replicas=2, as fakekafka's.
type kafkaTarget struct {
	name string
	jvm  []string // nil: the harness's own
}

func (t kafkaTarget) Name() string { return t.name }
func (kafkaTarget) Caps() Caps {
	return Caps{Brokers: 3, RF3: true, Replicates: true, Stores: true, Process: true, Slow: true}
}

// Prepare finds the jars (scripts/reference.sh installs them; Maven runs
// now if they are not cached).
func (kafkaTarget) Prepare(context.Context) error {
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("the kafka target needs Java 17+ and the Kafka jars (scripts/reference.sh installs both): %w", err)
	}
	_, err := reference.Classpath()
	return err
}

type kafkaInstance struct{ k *reference.Kafka }

func (t kafkaTarget) Start(ctx context.Context, topics []TopicSpec) (Instance, error) {
	var k *reference.Kafka
	var err error
	if t.jvm != nil {
		k, err = reference.StartKafkaJVM(3, t.jvm)
	} else {
		k, err = reference.StartKafka(3)
	}
	if err != nil {
		return nil, err
	}
	inst := kafkaInstance{k}
	if err := createTopics(ctx, k.Bootstrap(), topics); err != nil {
		inst.Close()
		return nil, err
	}
	return inst, nil
}

func (i kafkaInstance) Bootstrap() []string { return i.k.Bootstrap() }
func (i kafkaInstance) Close()              { _ = i.k.Close() }
func (i kafkaInstance) PIDs() []int         { return i.k.PIDs() }

// createTopics creates topics rf=3, min.insync.replicas=2 and waits until
// every broker's Metadata shows each partition with a leader and all three
// replicas in sync: a KRaft broker applies leadership and its metadata
// cache from the same image, so then every leader serves.
func createTopics(ctx context.Context, seeds []string, topics []TopicSpec) error {
	if len(topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	two := "2"
	for _, t := range topics {
		r, err := adm.CreateTopic(ctx, t.Partitions, 3, map[string]*string{"min.insync.replicas": &two}, t.Name)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s: %w", t.Name, err)
		}
	}
	for id := int32(1); id <= int32(len(seeds)); id++ {
		for !brokerSeesTopics(ctx, cl.Broker(int(id)), topics) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("broker %d never showed the topics with leaders: %w", id, ctx.Err())
			case <-time.After(50 * time.Millisecond): // polling a condition, not synchronising
			}
		}
	}
	// A broker may list a leadership before it acts on it (NOT_LEADER to
	// the raw client's first produce): ListOffsets goes to every leader,
	// asked again until each answers as one.
	var names []string
	for _, t := range topics {
		names = append(names, t.Name)
	}
	for {
		ends, err := adm.ListEndOffsets(ctx, names...)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("list offsets of new topics: %w", err)
		case <-time.After(50 * time.Millisecond): // polling a condition, not synchronising
		}
	}
}

func brokerSeesTopics(ctx context.Context, b *kgo.Broker, topics []TopicSpec) bool {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t.Name)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, b)
	if err != nil || len(resp.Topics) != len(topics) {
		return false
	}
	for i, rt := range resp.Topics {
		if rt.ErrorCode != 0 || len(rt.Partitions) != int(topics[i].Partitions) {
			return false
		}
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 || len(p.ISR) < 3 {
				return false
			}
		}
	}
	return true
}

// binTarget is the fakekafka binary (cmd/fakekafka) as a process of its
// own, 3 brokers, its topics created at start with --topics (rf 3) and
// --min-insync-replicas 2: what a CI job that runs it beside its tests gets.
type binTarget struct{}

func (binTarget) Name() string { return "fakekafka-bin" }
func (binTarget) Caps() Caps {
	return Caps{Brokers: 3, RF3: true, Replicates: true, Stores: true, Process: true}
}

// Prepare builds cmd/fakekafka once per Run, outside every timing.
func (binTarget) Prepare(ctx context.Context) error {
	_, err := fakekafkaBinary.build(ctx)
	return err
}

type binInstance struct {
	cmd       *exec.Cmd
	bootstrap []string
}

func (t binTarget) Start(ctx context.Context, topics []TopicSpec) (Instance, error) {
	if err := t.Prepare(ctx); err != nil {
		return nil, err
	}
	// The registry stays on, as users get the binary, on a free port: the
	// suite workload runs several binaries at once.
	args := []string{"--brokers", "3", "--listen", "127.0.0.1:0", "--control", "", "--schema-registry", "127.0.0.1:0",
		"--min-insync-replicas", "2", "--default-replication-factor", "3"}
	var specs []string
	for _, tp := range topics {
		specs = append(specs, fmt.Sprintf("%s:%d:3", tp.Name, tp.Partitions))
	}
	if len(specs) > 0 {
		args = append(args, "--topics", strings.Join(specs, ","))
	}
	cmd := exec.Command(fakekafkaBinary.path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inst := &binInstance{cmd: cmd}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "fakekafka ready: bootstrap="); ok {
			addrs, _, _ := strings.Cut(rest, " ")
			inst.bootstrap = strings.Split(addrs, ",")
			go func() { // keep draining, so a later line cannot block it
				for sc.Scan() {
				}
			}()
			return inst, nil
		}
	}
	inst.Close()
	return nil, fmt.Errorf("fakekafka exited without a ready line")
}

func (i *binInstance) Bootstrap() []string { return i.bootstrap }
func (i *binInstance) PIDs() []int         { return []int{i.cmd.Process.Pid} }
func (i *binInstance) Close() {
	_ = i.cmd.Process.Kill()
	_ = i.cmd.Wait()
}
