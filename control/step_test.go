package control

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStepReplica places followers at exact offsets, one fetch at a time,
// from Go and over HTTP, and checks the leader's HW moves only as the
// two-round-trip rule says.
func TestStepReplica(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("step", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{2, 3} {
		if err := c.PauseReplica("step", 0, id); err != nil {
			t.Fatal(err)
		}
	}
	prod := newClient(t, c, kgo.DefaultProduceTopic("step"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for i := range 3 {
		if err := prod.ProduceSync(testContext(t), &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	leo := func(id int32) (int64, int64) {
		ps, _ := c.Partition("step", 0)
		return ps.Replicas[id-1].LogEndOffset, ps.HighWatermark
	}
	if err := c.StepReplica("step", 0, 2, 2); err != nil {
		t.Fatal(err)
	}
	if l, hw := leo(2); l != 2 || hw != 0 {
		t.Fatalf("follower 2 LEO %d, HW %d; want 2 and 0", l, hw)
	}
	srv := httptest.NewServer(Handler(c))
	defer srv.Close()
	for _, body := range []string{"", `{"up_to":3}`} { // 3 fetches everything, then 2 reports LEO 3
		resp, err := http.Post(srv.URL+"/v1/partitions/step/0/replicas/3/fetch", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("HTTP step: %v %v", resp.Status, err)
		}
		resp.Body.Close()
	}
	if l, hw := leo(3); l != 3 || hw != 0 {
		t.Fatalf("follower 3 LEO %d, HW %d; want 3 and 0 (its LEO reached the leader but follower 2's has not)", l, hw)
	}
	if err := c.StepReplica("step", 0, 2, -1); err != nil { // reports 2, takes 1 more
		t.Fatal(err)
	}
	if _, hw := leo(2); hw != 2 {
		t.Fatalf("HW %d, want 2 = min(follower 2 reported 2, follower 3 reported 3)", hw)
	}
	if err := c.StepReplica("step", 0, 1, -1); err == nil {
		t.Fatal("the leader stepped as a follower")
	}
	resp, _ := http.Post(srv.URL+"/v1/partitions/step/0/replicas/2/fetch", "application/json", strings.NewReader(`{"up_to":-1}`))
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("negative up_to: %s, want 400", resp.Status)
	}
	resp.Body.Close()
}
