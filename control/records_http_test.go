package control

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReplicaRecords: through real clients, a plain write with a key and
// headers, an aborted transaction, a committed one, then acks=1 writes
// while a follower is paused. The leader's records endpoint shows every
// record a read_uncommitted consumer reads, with the same keys, values
// and headers, the two markers, the aborted records, and the acks=1
// records above the HW; the paused follower's own log lacks them.
func TestReplicaRecords(t *testing.T) {
	c := txnCluster(t, server.Config{ReplicaLagTimeMax: 10 * time.Minute})
	scMust(t, c.CreateTopic("r", 1, 3, nil))
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	ctx := testContext(t)

	plain := newClient(t, c, kgo.DefaultProduceTopic("r"))
	scMust(t, plain.ProduceSync(ctx, &kgo.Record{Key: []byte("k0"), Value: []byte("v0"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}, &kgo.Record{Value: []byte{0xff, 0x00}}).FirstErr())
	tx := newClient(t, c, kgo.TransactionalID("rec-tx"), kgo.DefaultProduceTopic("r"))
	runTxn(t, tx, false, "a0", "a1")
	runTxn(t, tx, true, "c0")
	// Offsets: 0-1 plain, 2-3 aborted, 4 the ABORT marker, 5 committed,
	// 6 the COMMIT marker.
	ps, _ := c.Partition("r", 0)
	leader, follower := ps.Leader, ps.Replicas[2].Broker
	if follower == leader {
		follower = ps.Replicas[1].Broker
	}
	waitFor(t, 20*time.Second, "HW 7 on every replica", func() bool {
		ps, _ := c.Partition("r", 0)
		for _, r := range ps.Replicas {
			if r.HighWatermark != 7 {
				return false
			}
		}
		return true
	})
	scMust(t, c.PauseReplica("r", 0, follower))
	ackOne := newClient(t, c, kgo.DefaultProduceTopic("r"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	scMust(t, ackOne.ProduceSync(ctx, kgo.StringRecord("u0"), kgo.StringRecord("u1")).FirstErr())
	waitFor(t, 20*time.Second, "leader LEO 9", func() bool {
		ps, _ := c.Partition("r", 0)
		return ps.Replicas[0].LogEndOffset == 9 || ps.Replicas[1].LogEndOffset == 9 || ps.Replicas[2].LogEndOffset == 9
	})
	ps, _ = c.Partition("r", 0)
	if ps.HighWatermark >= 9 {
		t.Fatalf("HW %d: the paused follower should hold it back", ps.HighWatermark)
	}
	hw := ps.HighWatermark

	var got api.ReplicaRecords
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records", srv.URL, leader), http.StatusOK, &got)
	if got.LogEndOffset != 9 || got.NextOffset != 9 || got.PartitionHighWatermark != hw || len(got.Records) != 9 {
		t.Fatalf("leader's page: LEO %d next %d HW %d, %d records; want 9, 9, %d, 9", got.LogEndOffset, got.NextOffset,
			got.PartitionHighWatermark, len(got.Records), hw)
	}
	line := func(r api.LogRecord) string {
		s := fmt.Sprintf("%d", r.Offset)
		if r.Key != nil {
			s += " key=" + *r.Key
		}
		if r.Value != nil {
			s += " value=" + *r.Value
		}
		if r.ValueEncoding != "" {
			s += " (" + r.ValueEncoding + ")"
		}
		for _, h := range r.Headers {
			s += " " + h.Key + ":" + *h.Value
		}
		if r.Control != "" {
			s += " " + r.Control
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{r.Transactional, "txn"}, {r.Aborted, "aborted"}, {r.Open, "open"}, {r.AboveHW, "above-hw"}} {
			if f.on {
				s += " " + f.name
			}
		}
		return s
	}
	want := []string{
		"0 key=k0 value=v0 h:x",
		"1 value=/wA= (base64)",
		"2 value=a0 txn aborted",
		"3 value=a1 txn aborted",
		"4 key=\x00\x00\x00\x00 value=\x00\x00\x00\x00\x00\x00 ABORT txn",
		"5 value=c0 txn",
		"6 key=\x00\x00\x00\x01 value=\x00\x00\x00\x00\x00\x00 COMMIT txn",
		"7 value=u0 above-hw",
		"8 value=u1 above-hw",
	}
	for i, r := range got.Records {
		// The markers' key and value are Kafka's control record (version,
		// type; version, coordinator epoch): compare their kind only.
		if r.Control != "" {
			r.Key, r.Value = nil, nil
			want[i] = fmt.Sprintf("%d %s txn", r.Offset, r.Control)
		}
		if l := line(r); l != want[i] {
			t.Errorf("leader's record %d: %q, want %q", i, l, want[i])
		}
	}

	// What a read_uncommitted consumer reads (below the HW, markers
	// skipped) is what the page shows.
	cons := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"r": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	var read []*kgo.Record
	for len(read) < 5 {
		fs := cons.PollFetches(ctx)
		scMust(t, fs.Err0())
		read = append(read, fs.Records()...)
	}
	byOffset := map[int64]api.LogRecord{}
	for _, r := range got.Records {
		byOffset[r.Offset] = r
	}
	for _, r := range read {
		p, ok := byOffset[r.Offset]
		if !ok || p.Control != "" || p.AboveHW {
			t.Errorf("the consumer read offset %d; the page has %+v", r.Offset, p)
			continue
		}
		if v := string(r.Value); p.ValueEncoding == "" && (p.Value == nil || *p.Value != v) {
			t.Errorf("offset %d: consumer value %q, page %v", r.Offset, v, p.Value)
		}
	}

	// The paused follower's own log: it ends at 7, nothing above its HW
	// from the acks=1 writes.
	var fol api.ReplicaRecords
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records?offset=3&max=3", srv.URL, follower), http.StatusOK, &fol)
	if fol.LogEndOffset != 7 || fol.Broker != follower || len(fol.Records) != 3 || fol.Records[0].Offset != 3 || fol.NextOffset != 6 {
		t.Fatalf("follower's page from 3, max 3: %+v", fol)
	}
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records?offset=6", srv.URL, follower), http.StatusOK, &fol)
	if len(fol.Records) != 1 || fol.Records[0].Control != "COMMIT" || fol.NextOffset != 7 {
		t.Fatalf("follower's page from 6: %+v", fol)
	}

	// A page ends inside a batch (0 and 1 are one batch); past the LEO
	// there is nothing, and next_offset is the LEO.
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records?max=1", srv.URL, leader), http.StatusOK, &got)
	if len(got.Records) != 1 || got.Records[0].Offset != 0 || got.NextOffset != 1 {
		t.Fatalf("max=1: %+v", got)
	}
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records?offset=1&max=1", srv.URL, leader), http.StatusOK, &got)
	if len(got.Records) != 1 || got.Records[0].Offset != 1 || got.NextOffset != 2 {
		t.Fatalf("offset=1&max=1: %+v", got)
	}
	getJSON(t, fmt.Sprintf("%s/v1/partitions/r/0/replicas/%d/records?offset=100", srv.URL, leader), http.StatusOK, &got)
	if len(got.Records) != 0 || got.NextOffset != 9 {
		t.Fatalf("offset=100: %+v", got)
	}

	for path, status := range map[string]int{
		"/v1/partitions/r/0/replicas/9/records":           http.StatusNotFound,
		"/v1/partitions/nope/0/replicas/1/records":        http.StatusNotFound,
		"/v1/partitions/r/0/replicas/1/records?max=0":     http.StatusBadRequest,
		"/v1/partitions/r/0/replicas/1/records?max=x":     http.StatusBadRequest,
		"/v1/partitions/r/0/replicas/1/records?offset=-1": http.StatusBadRequest,
	} {
		var e struct{ Error string }
		getJSON(t, srv.URL+path, status, &e)
		if e.Error == "" {
			t.Errorf("%s: no error text", path)
		}
	}
}
