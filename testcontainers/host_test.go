package fakekafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Backoff = 20 * time.Millisecond
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Metadata.Retry.Backoff = 20 * time.Millisecond
	return cfg
}

// metadataBrokers asks a broker for Metadata and returns the cluster id
// and the advertised broker addresses, sorted.
func metadataBrokers(ctx context.Context, t *testing.T, cl *kgo.Client) (string, []string) {
	t.Helper()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range meta.Brokers {
		out = append(out, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	slices.Sort(out)
	id := ""
	if meta.ClusterID != nil {
		id = *meta.ClusterID
	}
	return id, out
}

// A 3-broker container used from the host by franz-go and sarama:
// produce and consume, a consumer group, NOT_ENOUGH_REPLICAS injected and
// a broker crashed and restarted through the module's control client.
func TestClusterFromTheHost(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	start := time.Now()
	ctr := run(t, fakekafka.WithBrokers(3), fakekafka.WithTopics("orders:3:3"), fakekafka.WithMinInsyncReplicas(2), fakekafka.WithClusterID("host-test"))
	ready := time.Since(start)
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Non-root, on a read-only root file system: nothing is written.
	ins, err := ctr.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ins.HostConfig.ReadonlyRootfs || ins.Config.User != "65534:65534" {
		t.Fatalf("container: read-only %v, user %q", ins.HostConfig.ReadonlyRootfs, ins.Config.User)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 9 {
		r := &kgo.Record{Partition: int32(i % 3), Value: fmt.Appendf(nil, "franz-%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Logf("Run returned after %v; first record (acks=all, rf 3) produced %v after Run was called", ready.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		}
	}
	// Metadata advertises exactly the mapped host ports.
	id, advertised := metadataBrokers(ctx, t, cl)
	if want := slices.Sorted(slices.Values(brokers)); id != "host-test" || !slices.Equal(advertised, want) {
		t.Fatalf("Metadata: cluster %q brokers %v, want host-test %v", id, advertised, want)
	}

	// Two NOT_ENOUGH_REPLICAS injected through the module: sarama retries
	// through them (Producer.Retry.Max 3).
	cfg := saramaConfig()
	sp, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	fault, err := ctl.InjectFault(ctx, fakekafka.Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "orders", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, off, err := sp.SendMessage(&sarama.ProducerMessage{Topic: "orders", Partition: 0, Value: sarama.StringEncoder("sarama-0")}); err != nil || off != 3 {
		t.Fatalf("sarama through 2 injected errors: offset %d, %v; want offset 3", off, err)
	}
	if fs, err := ctl.Fault(ctx, fault.ID); err != nil || fs.Hits != 2 || fs.Remaining != 0 || fs.Error != "NOT_ENOUGH_REPLICAS" {
		t.Fatalf("fault after sarama's retries: %+v, %v", fs, err)
	}
	// A rule that fires until removed outlasts sarama's retries.
	forever, err := ctl.InjectFault(ctx, fakekafka.Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sp.SendMessage(&sarama.ProducerMessage{Topic: "orders", Partition: 1, Value: sarama.StringEncoder("lost")}); !errors.Is(err, sarama.ErrNotEnoughReplicas) {
		t.Fatalf("sarama against a permanent NOT_ENOUGH_REPLICAS: %v", err)
	}
	if fs, err := ctl.RemoveFault(ctx, forever.ID); err != nil || fs.Hits != 4 {
		t.Fatalf("removed rule: %+v, %v; want 4 hits (1 try + 3 retries)", fs, err)
	}
	if fs, err := ctl.Faults(ctx); err != nil || len(fs) != 1 || fs[0].ID != fault.ID {
		t.Fatalf("faults left: %+v, %v", fs, err)
	}

	// Broker 1 leads orders/0; crash it through the module.
	st, err := ctl.StopBroker(ctx, 1, fakekafka.StopCrash)
	if err != nil {
		t.Fatal(err)
	}
	if orders := topicNamed(t, st, "orders"); st.Brokers[0].Up || orders.Partitions[0].Leader == 1 {
		t.Fatalf("after the crash: broker 1 up %v, orders/0 leader %d", st.Brokers[0].Up, orders.Partitions[0].Leader)
	}
	if _, err := ctl.StopBroker(ctx, 1, fakekafka.StopCrash); !isStatus(err, http.StatusConflict) {
		t.Fatalf("stopping a stopped broker: %v, want 409", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("after-crash")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.StartBroker(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "broker 1 back in the ISR of orders/0", func() bool {
		ps, err := ctl.Partition(ctx, "orders", 0)
		return err == nil && slices.Contains(ps.ISR, 1) && ps.Replicas[0].LogEndOffset == 5
	})

	// A consumer group reads all 11 records and commits them.
	gc, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	var got []string
	for len(got) < 11 {
		fs := gc.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if err := gc.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"after-crash", "franz-0", "franz-1", "franz-2", "franz-3", "franz-4", "franz-5", "franz-6", "franz-7", "franz-8", "sarama-0"}
	if !slices.Equal(got, want) {
		t.Fatalf("group consumed %v, want %v", got, want)
	}
	g, err := ctl.Group(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	var committed, lag int64
	for _, o := range g.Offsets {
		committed += o.Offset
		lag += o.Lag
	}
	if g.State != "Stable" || len(g.Members) != 1 || committed != 11 || lag != 0 {
		t.Fatalf("group g: %+v", g)
	}

	// sarama reads the same partition 0: 3 + sarama-0 + after-crash.
	sc, err := sarama.NewConsumer(brokers, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	pc, err := sc.ConsumePartition("orders", 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i, want := range []string{"franz-0", "franz-3", "franz-6", "sarama-0", "after-crash"} {
		select {
		case m := <-pc.Messages():
			if string(m.Value) != want || m.Offset != int64(i) {
				t.Fatalf("sarama read %q at %d, want %q at %d", m.Value, m.Offset, want, i)
			}
		case err := <-pc.Errors():
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("sarama consumer: timed out")
		}
	}
	checkTypesMatchTheServer(ctx, t, ctr)
}

func isStatus(err error, code int) bool {
	var e *fakekafka.APIError
	return errors.As(err, &e) && e.StatusCode == code
}

// checkTypesMatchTheServer decodes live answers into the module's types
// with unknown fields refused: a field the server adds must be added here.
func checkTypesMatchTheServer(ctx context.Context, t *testing.T, ctr *fakekafka.Container) {
	t.Helper()
	base, err := ctr.ControlURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for path, v := range map[string]any{
		"/v1/cluster":   &fakekafka.ClusterState{},
		"/v1/listeners": &[]fakekafka.ListenerState{},
		"/v1/groups":    &struct{ Groups []fakekafka.GroupState }{},
		"/v1/faults":    &struct{ Faults []fakekafka.FaultState }{},
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		dec := json.NewDecoder(&buf)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("GET %s does not fit the module's types: %v", path, err)
		}
	}
}
