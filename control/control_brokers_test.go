package control

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newControlServer(t *testing.T, c *server.Cluster) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	return srv
}

// controlErrorHas checks status and that the JSON error mentions want.
func controlErrorHas(t *testing.T, srv *httptest.Server, path, body string, status int, want string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if code := controlCall(t, srv, "POST", path, body, &e); code != status || !strings.Contains(e.Error, want) {
		t.Errorf("POST %s %s: %d %q, want %d mentioning %q", path, body, code, e.Error, status, want)
	}
}

func brokerUp(s api.ClusterState, id int32) bool {
	for _, b := range s.Brokers {
		if b.ID == id {
			return b.Up
		}
	}
	return false
}

// TestControlStopStartModes stops follower 2 in each mode and restarts it
// while it is paused (so it cannot fetch): a power loss empties its
// unflushed log, a crash keeps the log but comes back with the stale HW
// checkpoint, a clean stop keeps both.
func TestControlStopStartModes(t *testing.T) {
	for _, tc := range []struct {
		name, body            string
		leoStopped, hwStarted int64
	}{
		{"default is crash", "", 3, 0},
		{"crash", `{"mode":"crash"}`, 3, 0},
		{"clean", `{"mode":"clean"}`, 3, 3},
		{"powerloss", `{"mode":"powerloss"}`, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := server.NewTestCluster(t, server.Config{HWCheckpointInterval: time.Hour})
			srv := newControlServer(t, c)
			if err := c.CreateTopic("cb", 1, 3, nil); err != nil {
				t.Fatal(err)
			}
			cl := newClient(t, c, kgo.DefaultProduceTopic("cb"))
			for _, v := range []string{"a", "b", "c"} {
				if err := cl.ProduceSync(context.Background(), kgo.StringRecord(v)).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, 5*time.Second, "follower 2 to learn HW 3", func() bool {
				ps, _ := c.Partition("cb", 0)
				return ps.Replicas[1].LogEndOffset == 3 && ps.Replicas[1].HighWatermark == 3
			})
			if err := c.PauseReplica("cb", 0, 2); err != nil {
				t.Fatal(err)
			}

			var st api.ClusterState
			if code := controlCall(t, srv, "POST", "/v1/brokers/2/stop", tc.body, &st); code != http.StatusOK {
				t.Fatalf("stop: %d", code)
			}
			if brokerUp(st, 2) || !brokerUp(st, 1) {
				t.Errorf("after stop: brokers %+v", st.Brokers)
			}
			r := st.Topics[0].Partitions[0].Replicas[1]
			if r.State != "offline" || r.LogEndOffset != tc.leoStopped || r.InSync {
				t.Errorf("stopped replica %+v, want offline, LEO %d, out of the ISR", r, tc.leoStopped)
			}
			controlErrorHas(t, srv, "/v1/brokers/2/stop", tc.body, http.StatusConflict, "already stopped")

			if code := controlCall(t, srv, "POST", "/v1/brokers/2/start", "", &st); code != http.StatusOK {
				t.Fatalf("start: %d", code)
			}
			r = st.Topics[0].Partitions[0].Replicas[1]
			if !brokerUp(st, 2) || r.State != "follower" || r.HighWatermark != tc.hwStarted {
				t.Errorf("restarted replica %+v (up %v), want a follower with HW %d", r, brokerUp(st, 2), tc.hwStarted)
			}
			controlErrorHas(t, srv, "/v1/brokers/2/start", "", http.StatusConflict, "already running")

			if err := c.ResumeReplica("cb", 0, 2); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "broker 2 to catch up and rejoin", func() bool {
				ps, _ := c.Partition("cb", 0)
				return len(ps.ISR) == 3 && ps.Replicas[1].LogEndOffset == 3
			})
		})
	}
}

func TestControlStopStartErrors(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := newControlServer(t, c)
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/brokers/2/stop", `{"mode":"nap"}`, http.StatusBadRequest, "unknown stop mode"},
		{"/v1/brokers/2/stop", `{"mode":`, http.StatusBadRequest, "malformed"},
		{"/v1/brokers/2/stop", `{"mode":"clean","force":true}`, http.StatusBadRequest, "force"},
		{"/v1/brokers/2/stop", `{"mode":"clean"} {}`, http.StatusBadRequest, "after the JSON value"},
		{"/v1/brokers/9/stop", `{"mode":"clean"}`, http.StatusNotFound, "unknown broker 9"},
		{"/v1/brokers/0/stop", "", http.StatusNotFound, "unknown broker 0"},
		{"/v1/brokers/x/stop", "", http.StatusBadRequest, "not a non-negative"},
		{"/v1/brokers/9/start", "", http.StatusNotFound, "unknown broker 9"},
		{"/v1/brokers/1/start", "", http.StatusConflict, "already running"},
	} {
		controlErrorHas(t, srv, tc.path, tc.body, tc.status, tc.want)
	}
	if code := controlCall(t, srv, "GET", "/v1/brokers/1/stop", "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET stop: %d, want 405", code)
	}
	// Nothing above stopped anything.
	for _, b := range c.State().Brokers {
		if !b.Up {
			t.Errorf("broker %d is down", b.ID)
		}
	}
}

func TestControlElect(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := newControlServer(t, c)
	if err := c.CreateTopic("el", 1, 3, nil); err != nil { // replicas 1, 2, 3
		t.Fatal(err)
	}
	if err := c.CreateTopic("pair", 1, 2, nil); err != nil { // replicas 1, 2
		t.Fatal(err)
	}
	elect := func(body string, wantLeader, wantEpoch int32, wantISR ...int32) {
		t.Helper()
		var ps api.PartitionState
		if code := controlCall(t, srv, "POST", "/v1/partitions/el/0/elect", body, &ps); code != http.StatusOK {
			t.Fatalf("elect %s: status %d", body, code)
		}
		if ps.Leader != wantLeader || ps.LeaderEpoch != wantEpoch || (wantISR != nil && !slices.Equal(ps.ISR, wantISR)) {
			t.Errorf("elect %s: leader %d epoch %d ISR %v; want %d, %d, %v", body, ps.Leader, ps.LeaderEpoch, ps.ISR, wantLeader, wantEpoch, wantISR)
		}
	}
	const path = "/v1/partitions/el/0/elect"

	elect(`{"leader":3}`, 3, 1)
	controlErrorHas(t, srv, path, `{"leader":3}`, http.StatusConflict, "ELECTION_NOT_NEEDED")
	// Omitted: Kafka's choice among the others, first in assignment order.
	elect(`{}`, 1, 2)
	elect(``, 2, 3)
	elect(`{"preferred":true}`, 1, 4)
	controlErrorHas(t, srv, path, `{"preferred":true}`, http.StatusConflict, "ELECTION_NOT_NEEDED")

	// Replica 3 leaves the ISR: a clean election refuses it, an unclean one
	// takes it and resets the ISR to it.
	if err := c.PauseReplica("el", 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.SetISR("el", 0, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	controlErrorHas(t, srv, path, `{"leader":3}`, http.StatusConflict, "ELIGIBLE_LEADERS_NOT_AVAILABLE")
	controlErrorHas(t, srv, path, `{"leader":3,"unclean":false}`, http.StatusConflict, "ELIGIBLE_LEADERS_NOT_AVAILABLE")
	// 1 and 2 stop fetching too, or they would follow 3 and rejoin its
	// ISR at once.
	for _, id := range []int32{1, 2} {
		if err := c.PauseReplica("el", 0, id); err != nil {
			t.Fatal(err)
		}
	}
	elect(`{"leader":3,"unclean":true}`, 3, 5, 3)
	// Now the preferred leader 1 is out of the ISR, and so is everyone
	// but the leader: Kafka's choice has no candidate unless unclean, and
	// unclean needs no topic config when the caller asks for it.
	controlErrorHas(t, srv, path, `{"preferred":true}`, http.StatusConflict, "PREFERRED_LEADER_NOT_AVAILABLE")
	controlErrorHas(t, srv, path, `{}`, http.StatusConflict, "ELIGIBLE_LEADERS_NOT_AVAILABLE")
	elect(`{"unclean":true}`, 1, 6, 1)

	// A stopped broker cannot lead.
	if err := c.StopBroker(2, api.StopClean); err != nil {
		t.Fatal(err)
	}
	controlErrorHas(t, srv, path, `{"leader":2,"unclean":true}`, http.StatusConflict, "REPLICA_NOT_AVAILABLE")
	controlErrorHas(t, srv, "/v1/partitions/pair/0/elect", `{"preferred":true}`, http.StatusConflict, "ELECTION_NOT_NEEDED")
	if err := c.StartBroker(2); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/partitions/pair/0/elect", `{"leader":3}`, http.StatusBadRequest, "broker 3 has no replica"},
		{"/v1/partitions/pair/0/elect", `{"leader":7}`, http.StatusNotFound, "unknown broker 7"},
		{path, `{"preferred":true,"leader":1}`, http.StatusBadRequest, "preferred"},
		{path, `{"preferred":true,"unclean":true}`, http.StatusBadRequest, "preferred"},
		{path, `{"leader":"two"}`, http.StatusBadRequest, "malformed"},
		{path, `{"leader":1,"why":"x"}`, http.StatusBadRequest, "why"},
		{"/v1/partitions/nope/0/elect", `{"leader":1}`, http.StatusNotFound, "unknown topic"},
		{"/v1/partitions/el/3/elect", `{"leader":1}`, http.StatusNotFound, "no partition 3"},
		{"/v1/partitions/el/x/elect", `{"leader":1}`, http.StatusBadRequest, "not a non-negative"},
	} {
		controlErrorHas(t, srv, tc.path, tc.body, tc.status, tc.want)
	}
	if ps, _ := c.Partition("el", 0); ps.Leader != 1 || ps.LeaderEpoch != 6 {
		t.Errorf("refused elections changed the partition: leader %d epoch %d", ps.Leader, ps.LeaderEpoch)
	}
}
