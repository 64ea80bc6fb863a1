package fakekafka_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// BenchmarkRunToFirstRecord measures what a test pays for a cluster: from
// Run to the first record produced with acks=all to a 3-broker cluster
// (rf 3), and the container's memory then (as docker stats counts it:
// usage less inactive page cache).
//
//	cd testcontainers && go test -run '^$' -bench RunToFirstRecord -benchtime 10x
func BenchmarkRunToFirstRecord(b *testing.B) {
	if image == "" {
		b.Skip("no Docker engine")
	}
	ctx := context.Background()
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer dc.Close()
	var total time.Duration
	var mem float64
	for b.Loop() {
		start := time.Now()
		ctr, err := fakekafka.Run(ctx, image, fakekafka.WithBrokers(3))
		if err != nil {
			b.Fatal(err)
		}
		brokers, err := ctr.Brokers(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation())
		if err != nil {
			b.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("first")}).FirstErr(); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		cl.Close()
		mem += containerMemMiB(ctx, b, dc, ctr.GetContainerID())
		if err := ctr.Terminate(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-first-record")
	b.ReportMetric(mem/float64(b.N), "MiB")
}

// containerMemMiB is one docker stats sample of the container's memory.
func containerMemMiB(ctx context.Context, b *testing.B, dc *testcontainers.DockerClient, id string) float64 {
	res, err := dc.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var st struct {
		MemoryStats struct {
			Usage uint64            `json:"usage"`
			Stats map[string]uint64 `json:"stats"`
		} `json:"memory_stats"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		b.Fatal(err)
	}
	cache := st.MemoryStats.Stats["inactive_file"] // cgroup v2
	if v, ok := st.MemoryStats.Stats["total_inactive_file"]; ok {
		cache = v // cgroup v1
	}
	return float64(st.MemoryStats.Usage-min(cache, st.MemoryStats.Usage)) / (1 << 20)
}
