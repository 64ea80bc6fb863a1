package control

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

type evHistory struct {
	Events  []api.Event `json:"events"`
	LastSeq uint64      `json:"last_seq"`
	More    bool        `json:"more"`
}

// TestEventsFilterAndHistory: a crash among a flood of hw_advanced stays
// findable: not=hw_advanced with a limit answers it, before= pages back
// to older events, internal=false drops internal topics' events, and a
// stream with not= and limit starts with the newest matching backlog.
func TestEventsFilterAndHistory(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	scMust(t, c.CreateTopic("a", 1, 3, nil))
	scMust(t, c.CreateTopic("flood", 4, 3, nil))
	scMust(t, c.PauseReplica("a", 0, 2))
	scMust(t, c.ResumeReplica("a", 0, 2))
	ctx := testContext(t)
	cl := newClient(t, c, kgo.DefaultProduceTopic("flood"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	flood := func(since uint64, n int) {
		t.Helper()
		for {
			hw := 0
			for _, e := range c.Events(since) {
				if e.Type == api.EventHWAdvanced {
					hw++
				}
			}
			if hw >= n {
				return
			}
			scMust(t, cl.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr())
		}
	}
	flood(0, 20)
	crashSeq := c.LastEventSeq()
	scMust(t, c.StopBroker(3, api.StopCrash))
	stopped, err := c.WaitForAfter(ctx, crashSeq, api.BrokerStopped(3))
	scMust(t, err)
	flood(stopped.Seq, 60)

	// The newest 30 of everything are all hw_advanced; without them the
	// crash is among the newest 30.
	var got evHistory
	controlCall(t, srv, "GET", "/v1/events?limit=30", "", &got)
	if len(got.Events) != 30 || !got.More {
		t.Fatalf("limit=30: %d events, more %v", len(got.Events), got.More)
	}
	for _, e := range got.Events {
		if e.Type == api.EventBrokerStopped {
			t.Fatalf("the crash is among the newest 30 of all events: the flood is too small")
		}
	}
	controlCall(t, srv, "GET", "/v1/events?limit=30&not=hw_advanced,lso_advanced", "", &got)
	found := false
	for i, e := range got.Events {
		if e.Type == api.EventHWAdvanced {
			t.Fatalf("not=hw_advanced answered %+v", e)
		}
		if i > 0 && e.Seq <= got.Events[i-1].Seq {
			t.Fatalf("events out of order: %d after %d", e.Seq, got.Events[i-1].Seq)
		}
		found = found || e.Seq == stopped.Seq
	}
	if !found {
		t.Fatalf("broker_stopped %d not among the newest 30 but hw_advanced: %+v", stopped.Seq, got.Events)
	}

	// Paging back: before the crash, two at a time, to the first event.
	before, pages, seen := stopped.Seq, 0, map[uint64]bool{}
	for {
		var page evHistory
		controlCall(t, srv, "GET", "/v1/events?limit=2&not=hw_advanced&before="+strconv.FormatUint(before, 10), "", &page)
		for _, e := range page.Events {
			if e.Seq >= before || seen[e.Seq] || e.Type == api.EventHWAdvanced {
				t.Fatalf("page before %d: %+v", before, e)
			}
			seen[e.Seq] = true
		}
		pages++
		if !page.More {
			break
		}
		before = page.Events[0].Seq
	}
	var all evHistory
	controlCall(t, srv, "GET", "/v1/events?not=hw_advanced", "", &all)
	n := 0
	for _, e := range all.Events {
		if e.Seq < stopped.Seq {
			n++
			if !seen[e.Seq] {
				t.Errorf("paging back missed event %d (%s)", e.Seq, e.Type)
			}
		}
	}
	if n != len(seen) || pages < 2 {
		t.Fatalf("paged %d events in %d pages, want %d in at least 2", len(seen), pages, n)
	}

	// internal=false: a consumer group's offsets topic is internal.
	g := newClient(t, c, kgo.ConsumerGroup("hist"), kgo.ConsumeTopics("flood"), kgo.FetchMaxWait(50*time.Millisecond))
	for read := 0; read == 0; {
		fs := g.PollFetches(ctx)
		scMust(t, fs.Err0())
		read += fs.NumRecords()
	}
	scMust(t, g.CommitUncommittedOffsets(ctx))
	controlCall(t, srv, "GET", "/v1/events?type=topic_created", "", &got)
	internal := false
	for _, e := range got.Events {
		internal = internal || e.Topic == "__consumer_offsets"
	}
	if !internal {
		t.Fatalf("no topic_created for __consumer_offsets: %+v", got.Events)
	}
	controlCall(t, srv, "GET", "/v1/events?type=topic_created&internal=false", "", &got)
	if len(got.Events) != 2 || got.Events[1].Topic != "flood" {
		t.Fatalf("internal=false: %+v", got.Events)
	}

	// A stream with not= and limit: the backlog is the newest matching.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc := evOpenStream(t, sctx, srv.URL+"/v1/events/stream?limit=1&not=hw_advanced&type=broker_stopped,broker_started,hw_advanced", nil)
	first := evReadSSE(t, sc, 1)
	if first[0].data.Seq != stopped.Seq {
		t.Fatalf("stream backlog %+v, want broker_stopped %d", first[0], stopped.Seq)
	}
	scMust(t, c.StartBroker(3))
	if next := evReadSSE(t, sc, 1); next[0].event != "broker_started" {
		t.Fatalf("stream went on with %+v", next[0])
	}

	for _, bad := range []string{"?not=nope", "?internal=maybe", "?limit=0", "?limit=x", "?before=0", "?before=5&wait_ms=10", "/stream?before=3"} {
		if code := controlCall(t, srv, "GET", "/v1/events"+bad, "", nil); code != 400 {
			t.Errorf("GET /v1/events%s: %d, want 400", bad, code)
		}
	}
}
