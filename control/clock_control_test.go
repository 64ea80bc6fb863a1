package control

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// TestClockControlAPI: GET /v1/clock reads the clock, POST
// /v1/clock/advance moves it and runs what fell due before it answers (here
// the fencing of a crashed leader), and bad bodies get a 4xx with a JSON
// message and leave the clock alone.
func TestClockControlAPI(t *testing.T) {
	c := manualCluster(t, server.Config{BrokerSessionTimeout: 9 * time.Second})
	if err := c.CreateTopic("http", 1, 3, nil); err != nil { // leader 1
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	var st api.ClockState
	if code := controlCall(t, srv, "GET", "/v1/clock", "", &st); code != http.StatusOK {
		t.Fatalf("GET /v1/clock: %d", code)
	}
	if st.Mode != "manual" || !st.Now.Equal(clockStart) || st.NowMillis != clockStart.UnixMilli() || st.AdvancedMillis != 0 || st.Timers == 0 {
		t.Fatalf("GET /v1/clock: %+v", st)
	}

	for _, tc := range []struct {
		method, body string
		want         int
	}{
		{"POST", `{"ms":-1}`, http.StatusBadRequest},
		{"POST", `{}`, http.StatusBadRequest},
		{"POST", ``, http.StatusBadRequest},
		{"POST", `{"ms":"10"}`, http.StatusBadRequest},
		{"POST", `{"ms":1.5}`, http.StatusBadRequest},
		{"POST", `{"ms":10,"seconds":1}`, http.StatusBadRequest},
		{"POST", `{"ms":10} {}`, http.StatusBadRequest},
		{"POST", `{"ms":99999999999999999}`, http.StatusBadRequest},
		{"POST", `{"ms":1e400}`, http.StatusBadRequest},
		{"GET", ``, http.StatusMethodNotAllowed},
	} {
		if got := controlCall(t, srv, tc.method, "/v1/clock/advance", tc.body, nil); got != tc.want {
			t.Errorf("%s /v1/clock/advance %s: status %d, want %d", tc.method, tc.body, got, tc.want)
		}
	}
	if now := c.Now(); !now.Equal(clockStart) {
		t.Fatalf("bad requests moved the clock to %v", now)
	}

	if err := c.StopBroker(1, api.StopCrash); err != nil {
		t.Fatal(err)
	}
	if code := controlCall(t, srv, "POST", "/v1/clock/advance", `{"ms":8999}`, &st); code != http.StatusOK || st.NowMillis != clockStart.UnixMilli()+8999 {
		t.Fatalf("advance 8999 ms: %d %+v", code, st)
	}
	if ps, _ := c.Partition("http", 0); ps.Leader != 1 {
		t.Fatalf("leader %d before the broker session timeout, want 1", ps.Leader)
	}
	if code := controlCall(t, srv, "POST", "/v1/clock/advance", `{"ms":1}`, &st); code != http.StatusOK || st.AdvancedMillis != 9000 {
		t.Fatalf("advance 1 ms: %d %+v", code, st)
	}
	var cs api.ClusterState
	controlCall(t, srv, "GET", "/v1/cluster", "", &cs)
	for _, topic := range cs.Topics {
		if topic.Name == "http" && (topic.Partitions[0].Leader == 1 || slices.Contains(topic.Partitions[0].ISR, 1)) {
			t.Fatalf("broker 1 not fenced when the advance answered: %+v", topic.Partitions[0])
		}
	}
}
