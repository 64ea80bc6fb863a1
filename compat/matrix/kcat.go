package matrix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kcat drives the kcat command (librdkafka as packaged with it): -P to
// produce (delivery reports read from its -v -v output), -C to consume a
// partition, -G to join a group, -L -J for metadata. librdkafka properties
// go through -X; backoffs are shortened to 20 ms and fetch waits to 100 ms.
type Kcat struct{}

func (Kcat) Name() string { return "kcat" }

func (Kcat) Version() string {
	path, err := kcatPath()
	if err != nil {
		return "not installed"
	}
	kcatVersionOnce(path)
	return kcatVersion.kcat + " (librdkafka " + kcatVersion.v + ")"
}

func (Kcat) Compressions() []string { return []string{"none", "gzip", "snappy", "lz4", "zstd"} }

// kcatError is an error kcat printed: a failed delivery report or a
// "% ERROR: ..." line.
type kcatError struct{ text string }

func (e *kcatError) Error() string { return e.text }

func kcatPath() (string, error) {
	p, err := exec.LookPath("kcat")
	if err != nil {
		return "", errors.New("kcat is not installed (apt-get install kcat; scripts/test.sh does it)")
	}
	return p, nil
}

func kcatBase(bootstrap []string, clientID string) []string {
	args := []string{"-b", strings.Join(bootstrap, ","),
		"-X", "retry.backoff.ms=20",
		"-X", "reconnect.backoff.ms=20",
		"-X", "reconnect.backoff.max.ms=100",
	}
	if clientID != "" {
		args = append(args, "-X", "client.id="+clientID)
	}
	if d := os.Getenv("MATRIX_RDKAFKA_DEBUG"); d != "" {
		args = append(args, "-d", d)
	}
	return args
}

// kcatDelimiter ends each produced message. kcat reads its input 128 bytes
// at a time and takes at most one message per read, so a message is only
// produced once 128 more bytes follow it: a delimiter of 128 bytes makes
// kcat produce every message as soon as it is written, which a stream that
// pauses mid-way (the failover scenario) needs.
var kcatDelimiter = "\n" + strings.Repeat("~", 127)

// kcatLog is a librdkafka log line: level, facility, message.
var kcatLog = regexp.MustCompile(`^%(\d)\|[^|]*\|([A-Z_]+)\|[^|]*\| \[thrd:[^\]]*\]: (.*)$`)

// kcatProtocolError returns the protocol error a stderr line reports, if
// it does.
func kcatProtocolError(line string) *ProtocolError {
	if m := kcatLog.FindStringSubmatch(line); m != nil && m[2] == "PROTOERR" {
		return protocolError(m[3])
	}
	return nil
}

var (
	kcatDelivered = regexp.MustCompile(`^% Message delivered to partition (-?\d+) \(offset (-?\d+)\)`)
	kcatFailed    = regexp.MustCompile(`^% Delivery failed for message: (.*)$`)
)

func (k Kcat) Produce(ctx context.Context, pc ProducerConfig, records iter.Seq[Record]) ([]Delivery, error) {
	path, err := kcatPath()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(k.Compressions(), pc.Codec) {
		return nil, notSupported(k.Name(), "codec %s", pc.Codec)
	}
	if pc.Codec == "gzip" || pc.Codec == "snappy" || pc.Codec == "lz4" {
		if v := librdkafkaVersion(path); v != "" && versionLess(v, "2.11.1") {
			return nil, notSupported(k.Name(), "kcat's librdkafka %s sends them uncompressed to brokers without Produce v0-2, like Kafka 4.0 (librdkafka#4956)", v)
		}
	}
	args := append(kcatBase(pc.Bootstrap, pc.ClientID), "-P", "-t", pc.Topic, "-p", strconv.Itoa(int(pc.Partition)),
		"-K", "\t", "-D", kcatDelimiter, "-v", "-v", "-z", pc.Codec,
		"-X", "linger.ms=5",
		"-X", "acks="+strconv.Itoa(pc.Acks),
		"-X", "enable.idempotence="+strconv.FormatBool(pc.Idempotent),
	)
	if pc.Retries >= 0 {
		args = append(args, "-X", "retries="+strconv.Itoa(pc.Retries))
	}
	if pc.DeliveryTimeout > 0 {
		args = append(args, "-X", "message.timeout.ms="+strconv.Itoa(int(pc.DeliveryTimeout/time.Millisecond)))
	}
	cmd := exec.CommandContext(ctx, path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Delivery reports of one partition come in production order.
	var reports []Delivery
	var other []string
	var protoErrs []error
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := kcatDelivered.FindStringSubmatch(line); m != nil {
				off, _ := strconv.ParseInt(m[2], 10, 64)
				if pc.Acks == AcksNone {
					off = -1
				}
				reports = append(reports, Delivery{Offset: off})
			} else if m := kcatFailed.FindStringSubmatch(line); m != nil {
				reports = append(reports, Delivery{Offset: -1, Err: &kcatError{m[1]}})
			} else if pe := kcatProtocolError(line); pe != nil {
				protoErrs = append(protoErrs, pe)
			} else if strings.HasPrefix(line, "% ERROR") {
				other = append(other, line)
			}
		}
	}()
	n := 0
	var werr error
	for rec := range records {
		n++
		if werr == nil {
			_, werr = io.WriteString(stdin, rec.Key+"\t"+rec.Value+kcatDelimiter)
		}
	}
	stdin.Close()
	<-read
	waitErr := cmd.Wait()
	out := make([]Delivery, n)
	for i := range out {
		if i < len(reports) {
			out[i] = reports[i]
		} else {
			out[i] = Delivery{Offset: -1, Err: fmt.Errorf("kcat gave no delivery report (%v; %v; %s)", werr, waitErr, strings.Join(other, "; "))}
		}
	}
	if len(protoErrs) > 0 {
		return out, errors.Join(protoErrs...)
	}
	return out, nil
}

// kcatStream runs a consuming kcat and turns its output into events:
// stdout lines "partition \t offset \t key \t value", stderr "% ERROR" lines.
func kcatStream(args []string) (Stream, error) {
	path, err := kcatPath()
	if err != nil {
		return nil, err
	}
	args = append(args, "-u", "-f", "%p\t%o\t%k\t%s\n", "-X", "fetch.wait.max.ms=100", "-X", "fetch.error.backoff.ms=20")
	cmd := exec.Command(path, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	q := newQueue()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.SplitN(sc.Text(), "\t", 4)
			if len(f) != 4 {
				q.push(Event{Err: &kcatError{"unparsable output: " + sc.Text()}})
				continue
			}
			p, _ := strconv.Atoi(f[0])
			off, _ := strconv.ParseInt(f[1], 10, 64)
			q.push(Event{Record: Record{Partition: int32(p), Offset: off, Key: f[2], Value: f[3]}})
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if os.Getenv("MATRIX_RDKAFKA_DEBUG") != "" {
				fmt.Fprintln(os.Stderr, line)
			}
			if pe := kcatProtocolError(line); pe != nil {
				q.push(Event{Err: pe})
			} else if strings.HasPrefix(line, "% ERROR") {
				q.push(Event{Err: &kcatError{strings.TrimPrefix(line, "% ERROR: ")}})
			}
		}
	}()
	exited := make(chan struct{})
	go func() {
		wg.Wait()
		cmd.Wait()
		q.finish()
		close(exited)
	}()
	s := &pollStream{q: q, done: exited}
	s.stop = func() {
		// SIGTERM: kcat closes its consumer, leaving the group.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	return s, nil
}

func (Kcat) Consume(ctx context.Context, cc ConsumerConfig) (Stream, error) {
	iso := "isolation.level=read_uncommitted"
	if cc.ReadCommitted {
		iso = "isolation.level=read_committed"
	}
	return kcatStream(append(kcatBase(cc.Bootstrap, cc.ClientID), "-X", iso, "-C", "-t", cc.Topic, "-p", strconv.Itoa(int(cc.Partition)), "-o", strconv.FormatInt(cc.Offset, 10)))
}

// Transact: kcat 1.6+ produces in a transaction with -X transactional.id,
// but one per run, committed when its input ends; only a signal aborts it,
// and that ends kcat while the records still wait to be sent (seen with
// kcat 1.7.1: "Program terminated while producing message", the
// transaction never begun). It sends no consumer offsets either.
func (Kcat) Transact(context.Context, TxnConfig, []Txn) error {
	return notSupported("kcat", "kcat's transactional mode (-X transactional.id) is one transaction per run, committed at the end of input; only a signal aborts it, ending kcat before its records are sent; it sends no offsets")
}

func (Kcat) JoinGroup(ctx context.Context, gc GroupConfig) (Stream, error) {
	return kcatStream(append(kcatBase(gc.Bootstrap, gc.ClientID), "-G", gc.Group, gc.Topic,
		"-X", "auto.offset.reset=earliest",
		"-X", "session.timeout.ms="+strconv.Itoa(int(groupSessionTimeout/time.Millisecond)),
		"-X", "heartbeat.interval.ms="+strconv.Itoa(int(groupHeartbeatInterval/time.Millisecond)),
		"-X", "auto.commit.interval.ms="+strconv.Itoa(int(groupCommitInterval/time.Millisecond)),
	))
}

func (Kcat) Metadata(ctx context.Context, bootstrap []string, topics []string) (Metadata, error) {
	path, err := kcatPath()
	if err != nil {
		return Metadata{}, err
	}
	cmd := exec.CommandContext(ctx, path, append(kcatBase(bootstrap, ""), "-L", "-J")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return Metadata{}, fmt.Errorf("kcat -L: %v: %s", err, stderr.String())
	}
	var md struct {
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []kcatTopic `json:"topics"`
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return Metadata{}, fmt.Errorf("kcat -L -J: %v in %q", err, raw)
	}
	var out Metadata
	for _, b := range md.Brokers {
		host, port, err := net.SplitHostPort(b.Name)
		if err != nil {
			return Metadata{}, err
		}
		p, _ := strconv.Atoi(port)
		out.Brokers = append(out.Brokers, BrokerMetadata{ID: b.ID, Host: host, Port: int32(p)})
	}
	for _, name := range topics {
		i := slices.IndexFunc(md.Topics, func(t kcatTopic) bool { return t.Topic == name })
		if i < 0 {
			return Metadata{}, fmt.Errorf("topic %s missing from kcat -L", name)
		}
		t := md.Topics[i]
		tm := TopicMetadata{Name: name}
		for _, p := range t.Partitions {
			pm := PartitionMetadata{Partition: p.Partition, Leader: p.Leader, Replicas: []int32{}, ISR: []int32{}}
			for _, r := range p.Replicas {
				pm.Replicas = append(pm.Replicas, r.ID)
			}
			for _, r := range p.ISRs {
				pm.ISR = append(pm.ISR, r.ID)
			}
			tm.Partitions = append(tm.Partitions, pm)
		}
		out.Topics = append(out.Topics, tm)
	}
	return out, nil
}

var kcatVersion struct {
	once sync.Once
	kcat string // kcat's own version
	v    string // librdkafka's
}

func kcatVersionOnce(path string) {
	kcatVersion.once.Do(func() {
		out, _ := exec.Command(path, "-V").CombinedOutput()
		if m := regexp.MustCompile(`Version (\S+) .*librdkafka (\d+\.\d+\.\d+)`).FindSubmatch(out); m != nil {
			kcatVersion.kcat, kcatVersion.v = string(m[1]), string(m[2])
		}
	})
}

// librdkafkaVersion is the librdkafka version kcat -V reports, "" if none.
func librdkafkaVersion(path string) string {
	kcatVersionOnce(path)
	return kcatVersion.v
}

// versionLess compares dotted numeric versions.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(as), len(bs)) {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

// kcatTopic is one topic of kcat -L -J.
type kcatTopic struct {
	Topic      string `json:"topic"`
	Partitions []struct {
		Partition int32 `json:"partition"`
		Leader    int32 `json:"leader"`
		Replicas  []struct {
			ID int32 `json:"id"`
		} `json:"replicas"`
		ISRs []struct {
			ID int32 `json:"id"`
		} `json:"isrs"`
	} `json:"partitions"`
}

func (Kcat) Describe(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	if isConnectionError(err) {
		return connectionError
	}
	var ke *kcatError
	if errors.As(err, &ke) {
		return strconv.Quote(ke.text)
	}
	if errors.Is(err, io.EOF) {
		return "EOF"
	}
	return fmt.Sprintf("%T", err)
}
