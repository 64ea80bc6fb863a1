package control

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnEventsZombieFenced: a second producer with the same id fences the
// first one's open transaction: the epoch bump, the abort it forces and
// the new producer's commit, then the zombie's failed commit changes
// nothing.
func TestTxnEventsZombieFenced(t *testing.T) {
	c := txnCluster(t, server.Config{})
	scMust(t, c.CreateTopic("z", 1, 3, nil))
	ctx := testContext(t)
	zombie := newClient(t, c, kgo.TransactionalID("z"), kgo.DefaultProduceTopic("z"))
	scMust(t, zombie.BeginTransaction())
	scMust(t, zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie")}).FirstErr())
	since := evLastSeq(c)
	fresh := newClient(t, c, kgo.TransactionalID("z"), kgo.DefaultProduceTopic("z"))
	runTxn(t, fresh, true, "fresh")
	if _, err := c.WaitFor(ctx, api.TxnCommitted("z")); err != nil {
		t.Fatal(err)
	}
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie commit: %v, want PRODUCER_FENCED", err)
	}
	fenced, err := c.WaitFor(ctx, api.ProducerFenced("z"))
	if err != nil {
		t.Fatal(err)
	}
	if fenced.Detail == "" || fenced.ProducerEpoch != 1 {
		t.Fatalf("fence event %+v: want epoch 1 and what it was", fenced)
	}
	// The fresh producer's InitProducerId fences and aborts the zombie's
	// transaction (CONCURRENT_TRANSACTIONS until the abort completes),
	// then gets its own epoch.
	checkTxnStory(t, c, since, "z",
		"txn_epoch_bumped epoch 1 (InitProducerId)",
		"txn_state_changed Ongoing->PrepareAbort z/0 epoch 1 (InitProducerId)",
		"txn_marker_written ->ABORT z/0 epoch 1",
		"txn_state_changed PrepareAbort->CompleteAbort z/0 epoch 1 (markers written)",
		"txn_epoch_bumped epoch 2 (InitProducerId)",
		"txn_state_changed CompleteAbort->Empty epoch 2 (InitProducerId)",
		// Transaction version 2 (KIP-890, finalized as in Kafka 4.x): the
		// first produce adds the partition and EndTxn bumps the epoch.
		"txn_state_changed Empty->Ongoing z/0 epoch 2 (implicit add)",
		"txn_partitions_added ->Ongoing z/0 epoch 2 (implicit add)",
		"txn_epoch_bumped epoch 3 (EndTxn)",
		"txn_state_changed Ongoing->PrepareCommit z/0 epoch 3 (EndTxn)",
		"txn_marker_written ->COMMIT z/0 epoch 3",
		"txn_state_changed PrepareCommit->CompleteCommit z/0 epoch 3 (markers written)",
	)
	// Over HTTP, by transactional id and type.
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	var got evAnswer
	if code := controlCall(t, srv, "GET", "/v1/events?transactional_id=z&type=txn_marker_written", "", &got); code != 200 {
		t.Fatalf("GET /v1/events?transactional_id=z: %d", code)
	}
	var markers []string
	for _, e := range got.Events {
		markers = append(markers, txnLine(e))
	}
	if want := []string{"txn_marker_written ->ABORT z/0 epoch 1", "txn_marker_written ->COMMIT z/0 epoch 3"}; !slices.Equal(markers, want) {
		t.Fatalf("markers of z over HTTP: %q, want %q", markers, want)
	}
	if code := controlCall(t, srv, "GET", "/v1/events?transactional_id=nobody", "", &got); code != 200 || len(got.Events) != 0 {
		t.Fatalf("events of an unknown transactional id: %d %+v", code, got.Events)
	}
}

// TestTxnControlAPI: the HTTP control surface of transactions.
func TestTxnControlAPI(t *testing.T) {
	c := txnCluster(t, server.Config{})
	if err := c.CreateTopic("h", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	defer srv.Close()
	if code := controlCall(t, srv, "POST", "/v1/transactions/markers/h/0/hold", "", nil); code != http.StatusOK {
		t.Fatalf("hold: %d", code)
	}
	if code := controlCall(t, srv, "POST", "/v1/transactions/markers/nope/0/hold", "", nil); code != http.StatusNotFound {
		t.Fatalf("hold of an unknown partition: %d, want 404", code)
	}
	p := newClient(t, c, kgo.TransactionalID("http"), kgo.DefaultProduceTopic("h"))
	runTxn(t, p, true, "v")
	var out struct {
		Transactions []api.TransactionState `json:"transactions"`
	}
	if code := controlCall(t, srv, "GET", "/v1/transactions", "", &out); code != http.StatusOK || len(out.Transactions) != 1 ||
		out.Transactions[0].State != "PrepareCommit" || out.Transactions[0].Partitions[0].Topic != "h" {
		t.Fatalf("GET /v1/transactions: %d %+v", code, out)
	}
	var cs api.ClusterState
	controlCall(t, srv, "GET", "/v1/cluster", "", &cs)
	for _, tp := range cs.Topics {
		if tp.Name == "h" && (tp.Partitions[0].LastStableOffset != 0 || tp.Partitions[0].HighWatermark != 1) {
			t.Fatalf("GET /v1/cluster: %+v, want LSO 0 below HW 1", tp.Partitions[0])
		}
	}
	if code := controlCall(t, srv, "POST", "/v1/transactions/markers/h/0/release", "", nil); code != http.StatusOK {
		t.Fatalf("release: %d", code)
	}
	waitFor(t, 5*time.Second, "the commit", func() bool {
		ts := c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
	if code := controlCall(t, srv, "POST", "/v1/transactions/crash-coordinator-before-markers", "", nil); code != http.StatusOK {
		t.Fatalf("arm crash: %d", code)
	}
}
