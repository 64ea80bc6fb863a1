package fakekafka_test

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// The same cluster reached from the host and from a second container on a
// user-defined network: the second container runs the image's probe
// subcommand against NetworkBrokers, which fetches Metadata over the
// INTERNAL listener and dials every broker it advertises.
func TestReachableFromAnotherContainer(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testcontainers.CleanupNetwork(t, nw)

	ctr := run(t, network.WithNetwork(nil, nw), fakekafka.WithNetworkAlias("kafka"), fakekafka.WithBrokers(3))
	internal, err := ctr.NetworkBrokers()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kafka:29092", "kafka:29093", "kafka:29094"}; !slices.Equal(internal, want) {
		t.Fatalf("NetworkBrokers %v, want %v", internal, want)
	}
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := ctl.Listeners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range ls[0].Brokers {
		if ls[0].Name != fakekafka.External || b.Advertised != brokers[i] || !ls[0].Set {
			t.Fatalf("EXTERNAL listener %+v, want the host addresses %v", ls[0], brokers)
		}
	}
	for i, b := range ls[1].Brokers {
		if ls[1].Name != fakekafka.Internal || b.Advertised != internal[i] {
			t.Fatalf("INTERNAL listener %+v, want %v", ls[1], internal)
		}
	}

	// A record from the host, so the probe is not the only client.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("net"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	out := probeFrom(t, nw, strings.Join(internal[1:2], ","))
	for _, want := range []string{"bootstrap kafka:29093: cluster fakekafka, 3 brokers", "broker 1 kafka:29092: ok", "broker 2 kafka:29093: ok", "broker 3 kafka:29094: ok", "all 3 brokers reachable"} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
}

// probeFrom runs `fakekafka probe bootstrap` in a container of the image
// on network nw and returns its output; it fails the test unless the probe
// exits 0.
func probeFrom(t *testing.T, nw *testcontainers.DockerNetwork, bootstrap string) string {
	t.Helper()
	ctx := testContext(t)
	p, err := testcontainers.Run(ctx, image,
		network.WithNetwork(nil, nw),
		testcontainers.WithCmd("probe", "--timeout", "20s", bootstrap),
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(60*time.Second)))
	if p != nil {
		testcontainers.CleanupContainer(t, p)
	}
	if err != nil {
		t.Fatal(err)
	}
	logs, err := p.Logs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(logs)
	logs.Close()
	st, err := p.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 0 {
		t.Fatalf("probe %s exited %d:\n%s", bootstrap, st.ExitCode, raw)
	}
	return string(raw)
}

func TestNetworkAliasNeedsANetwork(t *testing.T) {
	needDocker(t)
	ctr, err := fakekafka.Run(testContext(t), image, fakekafka.WithNetworkAlias("kafka"))
	if ctr != nil {
		testcontainers.CleanupContainer(t, ctr)
	}
	if err == nil || !strings.Contains(err.Error(), "needs a network") {
		t.Fatalf("Run with an alias and no network: %v", err)
	}
	plain := run(t, fakekafka.WithBrokers(1))
	if _, err := plain.NetworkBrokers(); err == nil {
		t.Fatal("NetworkBrokers without WithNetworkAlias gave no error")
	}
}
