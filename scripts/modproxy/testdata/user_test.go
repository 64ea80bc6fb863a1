// A user's test of the testcontainers module, run by
// scripts/install-check.sh containers in a fresh module that has only
// go get the module at a release version: Run with no image, twice (the
// first builds the image of that version, the second reuses it).
package user

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRunWithNoImage(t *testing.T) {
	ctx := context.Background()
	version := os.Getenv("FAKEKAFKA_CHECK_VERSION")
	if v, err := fakekafka.ModuleVersion(); err != nil || v != version {
		t.Fatalf("ModuleVersion() = %q, %v; want %s", v, err, version)
	}
	// scripts/install-check.sh removed the image: the first Run builds it.
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Close()
	if _, err := provider.Client().ImageInspect(ctx, "fakekafka:"+version); err == nil {
		t.Fatalf("fakekafka:%s is there before the first Run", version)
	}
	var opts []testcontainers.ContainerCustomizer
	if l := os.Getenv("FAKEKAFKA_RUN_LABEL"); l != "" { // scripts/containers.sh removes what carries it
		k, v, _ := strings.Cut(l, "=")
		opts = append(opts, testcontainers.WithLabels(map[string]string{k: v}))
	}
	opts = append(opts, fakekafka.WithTopics("orders:1:3"), fakekafka.WithMinInsyncReplicas(2))
	for i := range 2 {
		start := time.Now()
		ctr, err := fakekafka.Run(ctx, "", opts...)
		testcontainers.CleanupContainer(t, ctr)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Run %d with no image: %v", i+1, time.Since(start).Round(time.Millisecond))
		if img, err := fakekafka.Image(ctx, "", nil); err != nil || img != "fakekafka:"+version {
			t.Fatalf("Image() = %q, %v", img, err)
		}
		_, out, err := ctr.Exec(ctx, []string{"/fakekafka", "--version"}, tcexec.Multiplexed())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(out)
		if !strings.HasPrefix(string(b), "fakekafka "+version+" ") {
			t.Fatalf("fakekafka --version in the container: %q", b)
		}
		brokers, err := ctr.Brokers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite())
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = cl.ProduceSync(pctx, &kgo.Record{Topic: "orders", Value: []byte("hello")}).FirstErr()
		cancel()
		cl.Close()
		if err != nil {
			t.Fatalf("produce acks=all: %v", err)
		}
		t.Logf("%s: produced acks=all to %v", strings.TrimSpace(string(b)), brokers)
		if err := testcontainers.TerminateContainer(ctr); err != nil {
			t.Fatal(err)
		}
	}
}
