package fakekafka_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// image is the image under test: FAKEKAFKA_IMAGE, or one built from this
// checkout once per test binary.
var image string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		// Ryuk is an image to pull; nothing is pulled here.
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if h := os.Getenv("DOCKER_HOST"); os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" && (h == "" || strings.HasPrefix(h, "unix://")) {
		// The engine is on this machine, so are the mapped ports. Left to
		// itself, testcontainers run inside a container guesses the
		// container's gateway instead.
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	image = os.Getenv("FAKEKAFKA_IMAGE")
	if image == "" && dockerAvailable() {
		image = "fakekafka:tc-test"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		root, _ := filepath.Abs("..")
		start := time.Now()
		var log bytes.Buffer
		if err := fakekafka.BuildImage(ctx, root, image, &log); err != nil {
			fmt.Fprintf(os.Stderr, "%s\n%v\n", log.Bytes(), err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "built %s in %v\n", image, time.Since(start).Round(time.Millisecond))
	}
	return m.Run()
}

func dockerAvailable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return false
	}
	defer p.Close()
	return p.Health(ctx) == nil
}

// needDocker skips without a Docker engine, unless FAKEKAFKA_REQUIRE_DOCKER
// is set (CI sets it: there a missing engine is a failure).
func needDocker(t *testing.T) {
	t.Helper()
	if image != "" && (os.Getenv("FAKEKAFKA_IMAGE") != "" || dockerAvailable()) {
		return
	}
	if os.Getenv("FAKEKAFKA_REQUIRE_DOCKER") != "" {
		t.Fatal("no Docker engine answers, and FAKEKAFKA_REQUIRE_DOCKER is set")
	}
	t.Skip("no Docker engine: the container tests need one (bash .ci/docker.sh starts one)")
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run starts a cluster container for t and terminates it at the end.
func run(t *testing.T, opts ...testcontainers.ContainerCustomizer) *fakekafka.Container {
	t.Helper()
	ctr, err := fakekafka.Run(testContext(t), image, opts...)
	if ctr != nil {
		testcontainers.CleanupContainer(t, ctr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ctr
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

// topicNamed is st's topic name (the image's schema registry adds
// _schemas to every cluster, so topics are found by name).
func topicNamed(t *testing.T, st fakekafka.ClusterState, name string) fakekafka.TopicState {
	t.Helper()
	for _, tp := range st.Topics {
		if tp.Name == name {
			return tp
		}
	}
	t.Fatalf("no topic %s in %+v", name, st.Topics)
	return fakekafka.TopicState{}
}
