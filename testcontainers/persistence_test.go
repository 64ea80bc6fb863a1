package fakekafka_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// A named volume at the data dir makes the image a persistent dev broker:
// a second container on the same volume serves the first one's topic,
// records at their offsets, and the group's committed offset.
func TestDataVolumeSurvivesTheContainer(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	var b [6]byte
	rand.Read(b[:])
	volume := "fakekafka-test-" + hex.EncodeToString(b[:])

	first, err := fakekafka.Run(ctx, image, fakekafka.WithDataVolume(volume), fakekafka.WithTopics("p:2:3"))
	if first != nil {
		testcontainers.CleanupContainer(t, first)
	}
	if err != nil {
		t.Fatal(err)
	}
	brokers, err := first.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("p"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		r := &kgo.Record{Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	before := readAll(ctx, t, brokers, 100)

	// The group reads and commits all of partition 0 and half of 1.
	grp, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("p"), kgo.ConsumerGroup("g"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	var commit []*kgo.Record
	for n := 0; n < 100; {
		fs := grp.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if r.Partition == 0 || r.Offset < 25 {
				commit = append(commit, r)
			}
		})
	}
	if err := grp.CommitRecords(ctx, commit...); err != nil {
		t.Fatal(err)
	}
	grp.Close()

	// A clean stop (SIGTERM), then the container is gone.
	stop := 10 * time.Second
	if err := first.Terminate(ctx, testcontainers.StopTimeout(stop)); err != nil {
		t.Fatal(err)
	}

	second, err := fakekafka.Run(ctx, image, fakekafka.WithDataVolume(volume))
	if second != nil {
		t.Cleanup(func() {
			if err := second.Terminate(context.Background(), testcontainers.RemoveVolumes(volume)); err != nil {
				t.Errorf("removing the container and volume %s: %v", volume, err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	brokers, err = second.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := readAll(ctx, t, brokers, 100)
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("after the restart %v holds %q, before %q", k, after[k], v)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = "g"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	committed := map[int32]int64{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic == "p" && rp.ErrorCode == 0 {
				committed[rp.Partition] = rp.Offset
			}
		}
	}
	if committed[0] != 50 || committed[1] != 25 {
		t.Fatalf("committed offsets after the restart %v, want p/0 50 and p/1 25", committed)
	}
}

type tpo struct {
	partition int32
	offset    int64
}

// readAll reads n records of topic p from the start, by partition and offset.
func readAll(ctx context.Context, t *testing.T, brokers []string, n int) map[tpo]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("p"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[tpo]string{}
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading p after %d records: %v", len(got), err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[tpo{r.Partition, r.Offset}] = string(r.Key) + "=" + string(r.Value) })
	}
	if len(got) != n {
		t.Fatalf("read %d records, want %d", len(got), n)
	}
	return got
}
