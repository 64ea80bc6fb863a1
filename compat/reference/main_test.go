package reference

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update-reference", false, "write the differential and corpus tables into ../../docs/reference.md")

var only = flag.String("reference-only", "", "run the scenarios on this target only (Kafka or fakekafka), to debug one; no table")

const readmePath = "../../docs/reference.md" // the tables were in the README

// The two clusters every test of this package shares, started once by
// TestMain when FAKEKAFKA_REFERENCE=1; each scenario uses its own topics
// and leaves every broker up.
var (
	kafka     *Kafka
	fake      *Fake
	footprint string
)

func enabled() bool { return os.Getenv("FAKEKAFKA_REFERENCE") == "1" }

func targets(t *testing.T) []Target {
	if !enabled() {
		t.Skip("needs Java and Maven: set FAKEKAFKA_REFERENCE=1 (scripts/reference.sh)")
	}
	if kafka == nil {
		return []Target{fake}
	}
	return []Target{KafkaTarget{kafka}, fake}
}

func TestMain(m *testing.M) {
	flag.Parse()
	if !enabled() {
		os.Exit(m.Run())
	}
	code, err := runWithClusters(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func runWithClusters(m *testing.M) (int, error) {
	defer closeSecure() // started by the tests that need them (acl_table_test.go)
	var err error
	if *only == "fakekafka" {
		if fake, err = NewFake(); err != nil {
			return 1, err
		}
		defer fake.Close()
		return m.Run(), nil
	}
	if kafka, err = StartKafka(3); err != nil {
		return 1, err
	}
	defer kafka.Close()
	rss, err := kafka.RSS()
	if err != nil {
		return 1, err
	}
	fkStart, fkRSS, err := measureFakekafka()
	if err != nil {
		return 1, err
	}
	footprint = fmt.Sprintf("| Apache Kafka %s (3 brokers + 1 controller, 4 JVMs) | %.1f s | %d MiB |\n| fakekafka binary (3 brokers, 1 process) | %.2f s | %d MiB |\n",
		kafkaVersion(), kafka.StartTime.Seconds(), rss>>20, fkStart.Seconds(), fkRSS>>20)
	fmt.Print(footprint)
	if fake, err = NewFake(); err != nil {
		return 1, err
	}
	defer fake.Close()
	return m.Run(), nil
}

// measureFakekafka builds and starts the fakekafka binary, and reports how
// long it took to print its ready line and its resident memory then.
func measureFakekafka() (time.Duration, int64, error) {
	dir, err := os.MkdirTemp("", "fakekafka-bin-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "fakekafka")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/fakekafka").CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--brokers", "3", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0", "--schema-registry", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "fakekafka ready") {
			took := time.Since(began)
			rss, err := processRSS(cmd.Process.Pid)
			return took, rss, err
		}
	}
	return 0, 0, fmt.Errorf("fakekafka exited without a ready line")
}

// kafkaVersion is the kafka_2.13 jar's version on the classpath.
func kafkaVersion() string {
	for _, p := range strings.Split(kafka.classpath, ":") {
		if v, ok := strings.CutPrefix(filepath.Base(p), "kafka_2.13-"); ok {
			return strings.TrimSuffix(v, ".jar")
		}
	}
	return "?"
}
