package fakekafka_test

import (
	"testing"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// The Go example of docs/containers.md (the README has a shorter one), with
// its results checked.
func TestReadmeExample(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testcontainers.CleanupNetwork(t, nw)
	ctr, err := fakekafka.Run(ctx, image,
		fakekafka.WithBrokers(3),
		fakekafka.WithTopics("orders:6:3"),
		fakekafka.WithMinInsyncReplicas(2),
		network.WithNetwork(nil, nw), fakekafka.WithNetworkAlias("kafka"),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	internal, err := ctr.NetworkBrokers()
	if err != nil || len(internal) != 3 || internal[2] != "kafka:29094" {
		t.Fatalf("NetworkBrokers %v, %v", internal, err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ctl.InjectFault(ctx, fakekafka.Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("o-1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if f, err = ctl.Fault(ctx, f.ID); err != nil || f.Hits != 3 {
		t.Fatalf("fault %+v, %v; want 3 hits", f, err)
	}
	if _, err := ctl.StopBroker(ctx, 1, fakekafka.StopCrash); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.StartBroker(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("o-2")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	st, err := ctl.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var hw int64
	for _, tp := range st.Topics {
		if tp.Name == "orders" {
			for _, p := range tp.Partitions {
				hw += p.HighWatermark
			}
		}
	}
	if hw != 2 {
		t.Fatalf("orders holds %d records, want 2", hw)
	}
}
