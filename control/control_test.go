package control

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
)

// controlCall sends method path body to the control API and decodes a JSON
// answer into out (if non-nil), returning the status. Every answer must be
// JSON, errors included.
func controlCall(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, body %s", method, path, ct, raw)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" {
			t.Errorf("%s %s: %d with body %q, want a JSON error", method, path, resp.StatusCode, raw)
		}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

func TestControlClusterState(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{ClusterID: "ctl"})
	if err := c.CreateTopic("b", 2, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("a", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	var got api.ClusterState
	if code := controlCall(t, srv, "GET", "/v1/cluster", "", &got); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got.ClusterID != "ctl" || got.Controller != 1 || len(got.Brokers) != 3 {
		t.Fatalf("cluster: %+v", got)
	}
	for i, b := range got.Brokers {
		if b.ID != int32(i+1) || b.Address != c.Bootstrap()[i] || !b.Up {
			t.Errorf("broker %d: %+v", i+1, b)
		}
	}
	if len(got.Topics) != 2 || got.Topics[0].Name != "a" || got.Topics[1].Name != "b" {
		t.Fatalf("topics not sorted by name: %+v", got.Topics)
	}
	b := got.Topics[1]
	// The id is Kafka's text form of the one Metadata gives clients.
	tds, err := kadm.NewClient(newClient(t, c)).ListTopics(testContext(t), "b")
	if err != nil {
		t.Fatal(err)
	}
	wireID := tds["b"].ID
	if b.ID != base64.RawURLEncoding.EncodeToString(wireID[:]) || len(b.ID) != 22 || b.Configs["min.insync.replicas"] != "2" {
		t.Errorf("topic b: id %q configs %v", b.ID, b.Configs)
	}
	if got.Topics[0].Configs == nil {
		t.Error("configs of a topic without any should be {}, not null")
	}
	for _, ps := range b.Partitions {
		want := []int32{ps.Partition%3 + 1, (ps.Partition+1)%3 + 1, (ps.Partition+2)%3 + 1}
		var brokers []int32
		for _, r := range ps.Replicas {
			brokers = append(brokers, r.Broker)
			wantState := "follower"
			if r.Broker == want[0] {
				wantState = "leader"
			}
			if r.State != wantState || !r.InSync || r.Paused {
				t.Errorf("partition %d replica %d: %+v, want %s in sync", ps.Partition, r.Broker, r, wantState)
			}
		}
		if ps.Leader != want[0] || ps.LeaderEpoch != 0 || !slices.Equal(brokers, want) || !slices.Equal(ps.ISR, want) || ps.HighWatermark != 0 {
			t.Errorf("partition %d: %+v, want leader %d replicas = ISR = %v, HW 0", ps.Partition, ps, want[0], want)
		}
	}

	// The JSON field names are part of the contract.
	resp, err := srv.Client().Get(srv.URL + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, key := range []string{`"cluster_id"`, `"controller"`, `"brokers"`, `"address"`, `"up"`, `"topics"`, `"configs"`, `"partitions"`,
		`"leader"`, `"leader_epoch"`, `"isr"`, `"high_watermark"`, `"replicas"`, `"broker"`, `"log_start_offset"`, `"log_end_offset"`, `"state"`, `"in_sync"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("GET /v1/cluster lacks %s", key)
		}
	}
	if strings.Contains(string(raw), `"paused"`) {
		t.Error(`"paused" should be omitted while false`)
	}
}

func TestControlReplicaChanges(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	var ps api.PartitionState
	if code := controlCall(t, srv, "POST", "/v1/partitions/t/0/replicas/3/pause", "", &ps); code != http.StatusOK {
		t.Fatalf("pause: %d", code)
	}
	if !ps.Replicas[2].Paused || ps.Replicas[1].Paused {
		t.Errorf("after pausing 3: %+v", ps.Replicas)
	}

	// Replica 3 no longer fetches, so it stays out once removed.
	ps = api.PartitionState{}
	if code := controlCall(t, srv, "POST", "/v1/partitions/t/0/isr", `{"isr":[1,2]}`, &ps); code != http.StatusOK {
		t.Fatalf("isr: %d", code)
	}
	if !slices.Equal(ps.ISR, []int32{1, 2}) || ps.Replicas[2].InSync || !ps.Replicas[1].InSync {
		t.Errorf("after setting the ISR: %+v", ps)
	}
	if got, _ := c.Partition("t", 0); !slices.Equal(got.ISR, []int32{1, 2}) {
		t.Errorf("cluster ISR %v", got.ISR)
	}

	ps = api.PartitionState{} // "paused" is omitted when false: do not decode over the old value
	if code := controlCall(t, srv, "POST", "/v1/partitions/t/0/replicas/3/resume", "", &ps); code != http.StatusOK {
		t.Fatalf("resume: %d", code)
	}
	if ps.Replicas[2].Paused {
		t.Errorf("after resuming 3: %+v", ps.Replicas[2])
	}
	// Resumed and caught up, it rejoins the ISR on its next fetch.
	waitFor(t, 5*time.Second, "replica 3 to rejoin the ISR", func() bool {
		got, _ := c.Partition("t", 0)
		return slices.Equal(got.ISR, []int32{1, 2, 3})
	})
}

func TestControlErrors(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("t", 1, 2, nil); err != nil { // replicas 1 and 2
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/nowhere", "", http.StatusNotFound},
		{"POST", "/v1/cluster", "", http.StatusMethodNotAllowed},
		{"GET", "/v1/partitions/t/0/isr", "", http.StatusMethodNotAllowed},
		{"DELETE", "/v1/partitions/t/0/replicas/1/pause", "", http.StatusMethodNotAllowed},

		{"POST", "/v1/partitions/nope/0/replicas/1/pause", "", http.StatusNotFound},
		{"POST", "/v1/partitions/t/5/replicas/1/pause", "", http.StatusNotFound},
		{"POST", "/v1/partitions/t/0/replicas/9/pause", "", http.StatusNotFound},
		{"POST", "/v1/partitions/t/0/replicas/3/resume", "", http.StatusNotFound}, // broker 3 holds no replica
		{"POST", "/v1/partitions/t/x/replicas/1/pause", "", http.StatusBadRequest},
		{"POST", "/v1/partitions/t/-1/replicas/1/pause", "", http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/replicas/99999999999/pause", "", http.StatusBadRequest},

		{"POST", "/v1/partitions/nope/0/isr", `{"isr":[1]}`, http.StatusNotFound},
		{"POST", "/v1/partitions/t/0/isr", ``, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[1]`, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{}`, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[1],"leader":1}`, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":["1"]}`, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[1]} {}`, http.StatusBadRequest},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[1,3]}`, http.StatusBadRequest}, // 3 is no replica
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[` + strings.Repeat("1,", 1<<20) + `1]}`, http.StatusRequestEntityTooLarge},
	} {
		if got := controlCall(t, srv, tc.method, tc.path, tc.body, nil); got != tc.want {
			t.Errorf("%s %s %.40s: status %d, want %d", tc.method, tc.path, tc.body, got, tc.want)
		}
	}

	// A 405 says which methods would do.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/cluster", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "GET") {
		t.Errorf("Allow %q, want GET", allow)
	}

	// Nothing above changed the partition.
	ps, _ := c.Partition("t", 0)
	if !slices.Equal(ps.ISR, []int32{1, 2}) || ps.Replicas[0].Paused || ps.Replicas[1].Paused {
		t.Errorf("partition changed by failed requests: %+v", ps)
	}
}
