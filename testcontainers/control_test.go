package fakekafka_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// Every method of the typed control client against a live container:
// each reaches its endpoint and decodes its answer.
func TestControlClient(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	ctr := run(t, fakekafka.WithTopics("c:1:3"))
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(v string) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("c"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// Pause follower 3, write twice (acks=1), step it one record at a
	// time, resume it.
	if ps, err := ctl.PauseReplica(ctx, "c", 0, 3); err != nil || !ps.Replicas[2].Paused {
		t.Fatalf("PauseReplica: %+v, %v", ps, err)
	}
	produce("a")
	produce("b")
	waitFor(t, 10*time.Second, "follower 2 to copy both records", func() bool {
		ps, err := ctl.Partition(ctx, "c", 0)
		return err == nil && ps.Replicas[1].LogEndOffset == 2
	})
	if ps, err := ctl.StepReplica(ctx, "c", 0, 3, 1); err != nil || ps.Replicas[2].LogEndOffset != 1 {
		t.Fatalf("StepReplica up to 1: %+v, %v", ps, err)
	}
	if ps, err := ctl.StepReplica(ctx, "c", 0, 3, -1); err != nil || ps.Replicas[2].LogEndOffset != 2 {
		t.Fatalf("StepReplica: %+v, %v", ps, err)
	}
	if ps, err := ctl.ResumeReplica(ctx, "c", 0, 3); err != nil || ps.Replicas[2].Paused {
		t.Fatalf("ResumeReplica: %+v, %v", ps, err)
	}

	// Shrink the ISR, elect broker 2, then the preferred leader again.
	if ps, err := ctl.PauseReplica(ctx, "c", 0, 3); err != nil || !ps.Replicas[2].Paused {
		t.Fatalf("PauseReplica: %v", err)
	}
	if ps, err := ctl.SetISR(ctx, "c", 0, []int32{1, 2}); err != nil || !slices.Equal(ps.ISR, []int32{1, 2}) {
		t.Fatalf("SetISR: %+v, %v", ps, err)
	}
	if _, err := ctl.ElectLeader(ctx, "c", 0, 3, false); !isStatus(err, http.StatusConflict) {
		t.Fatalf("clean election of a replica outside the ISR: %v, want 409", err)
	}
	ps, err := ctl.ElectLeader(ctx, "c", 0, 2, false)
	if err != nil || ps.Leader != 2 {
		t.Fatalf("ElectLeader 2: %+v, %v", ps, err)
	}
	if ps2, err := ctl.ElectPreferredLeader(ctx, "c", 0); err != nil || ps2.Leader != 1 || ps2.LeaderEpoch <= ps.LeaderEpoch {
		t.Fatalf("ElectPreferredLeader: %+v, %v", ps2, err)
	}
	if _, err := ctl.ResumeReplica(ctx, "c", 0, 3); err != nil {
		t.Fatal(err)
	}

	// Events: both elections are in the stream, with their leaders.
	evs, last, err := ctl.Events(ctx, 0, fakekafka.EventFilter{Types: []string{"leader_elected"}, Topic: "c"})
	if err != nil || len(evs) < 2 || last < evs[len(evs)-1].Seq || evs[len(evs)-2].Leader != 2 || evs[len(evs)-1].Leader != 1 {
		t.Fatalf("Events leader_elected: %+v, last %d, %v", evs, last, err)
	}
	if _, _, err := ctl.Events(ctx, 0, fakekafka.EventFilter{Types: []string{"nope"}}); !isStatus(err, http.StatusBadRequest) {
		t.Fatalf("unknown event type: %v, want 400", err)
	}

	// The clock: real, and advanced by 10 s.
	if cs, err := ctl.Clock(ctx); err != nil || cs.Mode != "real" {
		t.Fatalf("Clock: %+v, %v", cs, err)
	}
	if cs, err := ctl.AdvanceClock(ctx, 10*time.Second); err != nil || cs.AdvancedMillis < 10000 {
		t.Fatalf("AdvanceClock: %+v, %v", cs, err)
	}

	// Transactions: one committed by franz-go shows up; the marker and
	// coordinator controls answer.
	txn, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("c"), kgo.TransactionalID("ctl-txn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("t")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	txn.Close()
	waitFor(t, 10*time.Second, "ctl-txn to be CompleteCommit", func() bool {
		ts, err := ctl.Transactions(ctx)
		return err == nil && len(ts) == 1 && ts[0].TransactionalID == "ctl-txn" && ts[0].State == "CompleteCommit"
	})
	if err := ctl.HoldTransactionMarkers(ctx, "c", 0); err != nil {
		t.Fatal(err)
	}
	if err := ctl.ReleaseTransactionMarkers(ctx, "c", 0); err != nil {
		t.Fatal(err)
	}
	if err := ctl.HoldTransactionMarkers(ctx, "nope", 0); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("holding markers of an unknown topic: %v, want 404", err)
	}
	if err := ctl.CrashTransactionCoordinatorBeforeMarkers(ctx); err != nil {
		t.Fatal(err)
	}

	// Isolate and heal broker 2.
	if st, err := ctl.IsolateBroker(ctx, 2); err != nil || len(st.Brokers) != 3 {
		t.Fatalf("IsolateBroker: %+v, %v", st, err)
	}
	if _, err := ctl.HealBroker(ctx, 2); err != nil {
		t.Fatal(err)
	}

	// Faults: add, list, read, remove; an unknown id is 404.
	p := int32(0)
	f, err := ctl.InjectFault(ctx, fakekafka.Fault{API: "Fetch", Error: "NOT_LEADER_OR_FOLLOWER", Topic: "c", Partition: &p, Broker: 1, Count: 1, DelayMillis: 5})
	if err != nil || f.API != "Fetch" || f.Error != "NOT_LEADER_OR_FOLLOWER" || *f.Partition != 0 || f.DelayMillis != 5 || f.Remaining != 1 {
		t.Fatalf("InjectFault: %+v, %v", f, err)
	}
	if _, err := ctl.RemoveFault(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Fault(ctx, f.ID); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("a removed fault: %v, want 404", err)
	}
	if _, err := ctl.InjectFault(ctx, fakekafka.Fault{Error: "NO_SUCH_ERROR"}); !isStatus(err, http.StatusBadRequest) {
		t.Fatalf("an unknown error name: %v, want 400", err)
	}

	// Groups: none yet; an unknown one is 404.
	if gs, err := ctl.Groups(ctx); err != nil || len(gs) != 0 {
		t.Fatalf("Groups: %+v, %v", gs, err)
	}
	if _, err := ctl.Group(ctx, "nope"); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("unknown group: %v, want 404", err)
	}

	// Listeners: re-advertise broker 1 under another name for the same
	// port; an unknown listener is 404 with the API's message.
	if err := ctl.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	port := brokers[0][strings.LastIndexByte(brokers[0], ':')+1:]
	l, err := ctl.SetAdvertised(ctx, fakekafka.External, map[int32]string{1: "localhost:" + port})
	if err != nil || l.Brokers[0].Advertised != "localhost:"+port || l.Brokers[1].Advertised != brokers[1] {
		t.Fatalf("SetAdvertised: %+v, %v", l, err)
	}
	produce("c") // Metadata now sends the client to localhost for broker 1
	_, err = ctl.SetAdvertised(ctx, "NOPE", map[int32]string{1: "h:1"})
	var apiErr *fakekafka.APIError
	if !isStatus(err, http.StatusNotFound) || !strings.Contains(err.Error(), `unknown listener "NOPE"`) || !errors.As(err, &apiErr) || apiErr.Path != "/v1/listeners/NOPE" {
		t.Fatalf("unknown listener: %v", err)
	}
	if ps, err := ctl.Partition(ctx, "c", 0); err != nil || ps.HighWatermark != 5 {
		t.Fatalf("c/0 after four records and a commit marker: %+v, %v", ps, err)
	}
	if _, err := ctl.Partition(ctx, "c", 1); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("missing partition: %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, opt := range []fakekafka.Option{
		fakekafka.WithBrokers(0), fakekafka.WithClusterID(""), fakekafka.WithNetworkAlias("a:b"),
		fakekafka.WithAdvertisedHost(""), fakekafka.WithTopics("a,b"), fakekafka.WithMinInsyncReplicas(0),
		fakekafka.WithDefaultReplicationFactor(0), fakekafka.WithNumPartitions(-1),
	} {
		if _, err := fakekafka.Run(t.Context(), "unused", opt); err == nil || !strings.HasPrefix(err.Error(), "fakekafka: With") {
			t.Errorf("a bad option gave %v", err)
		}
	}

	needDocker(t)
	ctx := testContext(t)
	ctr := run(t, fakekafka.WithBrokers(2), fakekafka.WithAdvertisedHost("localhost"), fakekafka.WithAutoCreateTopics(false),
		fakekafka.WithNumPartitions(4), fakekafka.WithDefaultReplicationFactor(1), fakekafka.WithMinInsyncReplicas(1), fakekafka.WithTopics("t"))
	brokers, err := ctr.Brokers(ctx)
	if err != nil || len(brokers) != 2 || !strings.HasPrefix(brokers[0], "localhost:") {
		t.Fatalf("Brokers: %v, %v", brokers, err)
	}
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ctl.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Topics) != 2 || st.Topics[0].Name != "_schemas" { // and the registry's
		t.Fatalf("Cluster: %+v", st)
	}
	if tp := topicNamed(t, st, "t"); len(tp.Partitions) != 4 || len(tp.Partitions[0].Replicas) != 1 {
		t.Fatalf("Cluster: %+v", st)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "nope", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("producing to a missing topic with auto-creation off: %v", err)
	}
}
