package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
)

// TestControlEventsWait: wait_ms holds GET /v1/events until an event
// after since matches, so a second ISR drop waits for its own rejoin, not
// the first one's; a wait that runs out answers an empty list.
func TestControlEventsWait(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := newControlServer(t, c)
	scMust(t, c.CreateTopic("w", 1, 3, nil))

	var first uint64
	for i := range 2 {
		seq := c.LastEventSeq()
		done := make(chan evAnswer, 1)
		go func() {
			var got evAnswer
			controlCall(t, srv, "GET", fmt.Sprintf("/v1/events?since=%d&type=isr_expanded&topic=w&wait_ms=30000", seq), "", &got)
			done <- got
		}()
		scMust(t, c.SetISR("w", 0, []int32{1, 2}))
		got := <-done
		if len(got.Events) != 1 || got.Events[0].Seq <= seq || got.Events[0].Seq == first || got.LastSeq < got.Events[0].Seq {
			t.Fatalf("drop %d: waited answer %+v after %d", i+1, got, seq)
		}
		first = got.Events[0].Seq
	}

	var got evAnswer
	if code := controlCall(t, srv, "GET", fmt.Sprintf("/v1/events?since=%d&type=isr_expanded&wait_ms=20", c.LastEventSeq()), "", &got); code != http.StatusOK ||
		len(got.Events) != 0 || got.Events == nil {
		t.Fatalf("a wait that runs out: %d %+v", code, got)
	}
	controlErrorGet(t, srv, "/v1/events?wait_ms=soon", "wait_ms")
	controlErrorGet(t, srv, "/v1/events?wait_ms=600001", "wait_ms")
}

// TestControlEventsLastEventID: without since, the Last-Event-ID header
// an EventSource sends on reconnecting says where to resume.
func TestControlEventsLastEventID(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := newControlServer(t, c)
	scMust(t, c.CreateTopic("a", 1, 3, nil))
	mark := c.LastEventSeq()
	scMust(t, c.CreateTopic("b", 1, 3, nil))
	req, _ := http.NewRequest("GET", srv.URL+"/v1/events?type=topic_created", nil)
	req.Header.Set("Last-Event-ID", fmt.Sprint(mark))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got evAnswer
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || len(got.Events) != 1 || got.Events[0].Topic != "b" {
		t.Fatalf("after Last-Event-ID %d: %+v, %v", mark, got, err)
	}
}

// controlErrorGet checks that GET path is 400 with an error naming want.
func controlErrorGet(t *testing.T, srv *httptest.Server, path, want string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if code := controlCall(t, srv, "GET", path, "", &e); code != http.StatusBadRequest || !strings.Contains(e.Error, want) {
		t.Errorf("GET %s: %d %q, want 400 naming %q", path, code, e.Error, want)
	}
}
