package control

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

type evAnswer struct {
	Events  []api.Event `json:"events"`
	LastSeq uint64      `json:"last_seq"`
}

func TestControlEventsQuery(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	scMust(t, c.CreateTopic("a", 1, 3, nil))
	scMust(t, c.CreateTopic("b", 1, 3, nil))
	var all evAnswer
	if code := controlCall(t, srv, "GET", "/v1/events", "", &all); code != 200 {
		t.Fatalf("GET /v1/events: %d", code)
	}
	if len(all.Events) < 2 || all.LastSeq != all.Events[len(all.Events)-1].Seq {
		t.Fatalf("GET /v1/events = %+v", all)
	}
	scMust(t, c.StopBroker(2, api.StopClean))

	var got evAnswer
	controlCall(t, srv, "GET", "/v1/events?since=0&type=topic_created&topic=b", "", &got)
	if len(got.Events) != 1 || got.Events[0].Topic != "b" || got.Events[0].Type != api.EventTopicCreated {
		t.Fatalf("topic_created b: %+v", got.Events)
	}
	controlCall(t, srv, "GET", "/v1/events?since="+evItoa(all.LastSeq)+"&type=broker_stopped,isr_shrunk&partition=0", "", &got)
	var lines []string
	for _, e := range got.Events {
		lines = append(lines, evLine(e))
	}
	slices.Sort(lines) // partitions are shut down in no particular order
	want := []string{"isr_shrunk a/0 broker 2 isr [1 3] (controlled shutdown)", "isr_shrunk b/0 broker 2 isr [1 3] (controlled shutdown)"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("isr_shrunk since %d:\n got %q\nwant %q", all.LastSeq, lines, want)
	}
	if got.LastSeq <= all.LastSeq {
		t.Fatalf("last_seq %d did not move past %d", got.LastSeq, all.LastSeq)
	}
	controlCall(t, srv, "GET", "/v1/events?type=broker_stopped&broker=2", "", &got)
	if len(got.Events) != 1 || got.Events[0].Mode != api.StopClean {
		t.Fatalf("broker_stopped 2: %+v", got.Events)
	}

	for _, bad := range []string{"?since=-1", "?since=x", "?type=nope", "?partition=-2", "?broker=b"} {
		if code := controlCall(t, srv, "GET", "/v1/events"+bad, "", nil); code != 400 {
			t.Errorf("GET /v1/events%s: %d, want 400", bad, code)
		}
	}
}

func evItoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// evSSE is one parsed server-sent event.
type evSSE struct {
	id, event string
	data      api.Event
}

// readSSE reads events from a stream until it has n of them.
func evReadSSE(t *testing.T, sc *bufio.Scanner, n int) []evSSE {
	t.Helper()
	var out []evSSE
	var cur evSSE
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event != "" {
				out = append(out, cur)
			}
			cur = evSSE{}
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
		}
	}
	if len(out) < n {
		t.Fatalf("stream ended after %d of %d events: %v", len(out), n, sc.Err())
	}
	return out
}

func evOpenStream(t *testing.T, ctx context.Context, url string, header http.Header) *bufio.Scanner {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return bufio.NewScanner(resp.Body)
}

func TestControlEventStream(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	scMust(t, c.CreateTopic("s", 1, 3, nil))
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()

	// The past first, then what happens while the stream is open, filtered.
	sc := evOpenStream(t, ctx, srv.URL+"/v1/events/stream?type=topic_created,broker_stopped,broker_started", nil)
	first := evReadSSE(t, sc, 1)
	if first[0].event != "topic_created" || first[0].data.Topic != "s" || first[0].id != evItoa(first[0].data.Seq) {
		t.Fatalf("first streamed event %+v", first[0])
	}
	scMust(t, c.StopBroker(3, api.StopCrash))
	scMust(t, c.StartBroker(3))
	live := evReadSSE(t, sc, 2)
	if live[0].event != "broker_stopped" || live[0].data.Broker != 3 || live[0].data.Mode != api.StopCrash ||
		live[1].event != "broker_started" || live[1].data.Seq <= live[0].data.Seq {
		t.Fatalf("live events %+v", live)
	}

	// A reconnecting EventSource resumes after Last-Event-ID, and Accept
	// on /v1/events streams too.
	sc2 := evOpenStream(t, ctx, srv.URL+"/v1/events?type=broker_started", http.Header{
		"Accept": {"text/event-stream"}, "Last-Event-ID": {live[0].id},
	})
	again := evReadSSE(t, sc2, 1)
	if again[0].id != live[1].id {
		t.Fatalf("resumed stream starts at %s, want %s", again[0].id, live[1].id)
	}

	// Closing the cluster ends open streams.
	c.Close()
	for sc.Scan() {
	}
}
