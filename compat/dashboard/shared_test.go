package dashboard

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/control"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The checks below run in both browsers (TestDashboard in Chromium,
// TestDashboardFirefox in Firefox), on a page p, as part of dashboardStory.

// dashboardCluster starts a 3-broker cluster with its control API on an
// httptest server, both closed at the end of the test.
func dashboardCluster(t *testing.T, cfg server.Config) (*server.Cluster, string) {
	t.Helper()
	c := server.NewTestCluster(t, cfg)
	srv := httptest.NewServer(control.Handler(c))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { c.Close() }) // first: it ends the page's event stream, which srv.Close waits for
	return c, srv.URL
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, c *server.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// loadDashboard opens the page and waits for the three brokers and the
// live event stream; it marks the window so a reload would show.
func loadDashboard(t *testing.T, p page, url string) {
	t.Helper()
	if err := p.navigate(url + "/"); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	for _, id := range []string{"1", "2", "3"} {
		waitVisible(t, p, `.broker[data-broker="`+id+`"][data-status="up"]`)
	}
	waitVisible(t, p, `#live.on`)
	var n int
	if err := p.eval(`(() => { window.notReloaded = true; return document.querySelectorAll("#brokers .broker").length; })()`, &n); err != nil || n != 3 {
		t.Fatalf("%d brokers on the page (%v), want 3", n, err)
	}
}

func checkNotReloaded(t *testing.T, p page) {
	t.Helper()
	var same bool
	if err := p.eval(`window.notReloaded === true`, &same); err != nil || !same {
		t.Fatalf("the page reloaded (%v)", err)
	}
}

// checkTransactions: an open transaction holds the LSO of its partition
// back; the page marks the LSO short of the HW, names the open
// transaction beside the partition and lists it in the transactions
// panel; once committed, the LSO reaches the HW and the panel says so.
func checkTransactions(t *testing.T, p page, c *server.Cluster, shot bool) {
	t.Helper()
	if err := c.CreateTopic("payments", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	plain := newClient(t, c, kgo.DefaultProduceTopic("payments"))
	for _, v := range []string{"p0", "p1"} {
		if err := plain.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	tx := newClient(t, c, kgo.TransactionalID("pay-tx"), kgo.DefaultProduceTopic("payments"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"t0", "t1", "t2"} {
		if err := tx.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Offsets: p0 p1 0-1, the transaction 2-4: LSO 2, HW 5.
	part := `.partition[data-topic="payments"][data-partition="0"]`
	waitVisible(t, p, part+`[data-hw="5"][data-lso="2"] .pmeta .lso`)
	waitVisible(t, p, part+` .txn-open[data-txn="pay-tx"]`)
	waitVisible(t, p, `#transactions tr[data-txn="pay-tx"][data-state="Ongoing"]`)
	if got := text(t, p, part+` .pmeta .lso`); got != "LSO 2" {
		t.Errorf("partition label %q, want LSO 2", got)
	}
	if got := text(t, p, `#transactions tr[data-txn="pay-tx"]`); !strings.Contains(got, "payments/0") {
		t.Errorf("transactions panel row %q lacks payments/0", got)
	}
	// To scale: on the leader's track the LSO line sits at 2/5, the HW
	// line at 5/5, and the undecided records between them.
	var geo struct{ LSO, HW, Start, Width, Unstable float64 }
	if err := p.eval(`(() => {
		const row = document.querySelector('`+part+` .replica[data-broker="1"]');
		const track = row.querySelector('.track').getBoundingClientRect();
		const u = row.querySelector('.bar-unstable');
		return { LSO: row.querySelector('.lso-line').getBoundingClientRect().left, HW: row.querySelector('.hw-line').getBoundingClientRect().left,
			Start: track.left, Width: track.width, Unstable: u ? u.getBoundingClientRect().width : 0 };
	})()`, &geo); err != nil {
		t.Fatalf("measure the LSO: %v", err)
	}
	if want := geo.Start + geo.Width*2/5; geo.LSO < want-3 || geo.LSO > want+3 {
		t.Errorf("LSO line at x=%.1f, want about %.1f (2 of 5)", geo.LSO, want)
	}
	if geo.HW <= geo.LSO+geo.Width/5 {
		t.Errorf("HW line at x=%.1f is not well past the LSO line at x=%.1f", geo.HW, geo.LSO)
	}
	if want := geo.Width * 3 / 5; geo.Unstable < want-3 || geo.Unstable > want+3 {
		t.Errorf("undecided records drawn %.1f wide, want about %.1f (3 of 5)", geo.Unstable, want)
	}
	waitVisible(t, p, `#events li[data-type="txn_state_changed"]`)
	if shot {
		saveScreenshot(t, p, "transactions.png")
	}

	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `#transactions tr[data-txn="pay-tx"][data-state="CompleteCommit"]`)
	waitVisible(t, p, `#events li[data-type="txn_marker_written"]`)
	// The marker is offset 5: LSO = HW = 6, and nothing open.
	waitJS(t, p, "the LSO caught up", `(() => { const el = document.querySelector('`+part+`[data-hw="6"][data-lso="6"]');
		return !!el && !el.querySelector('.lso, .lso-line, .txn-open'); })()`)
}

// checkKIP848Group: a group on the ConsumerGroupHeartbeat protocol shows as
// such, with its group and assignment epochs, each member's epoch and
// partitions, and the committed offsets with their lag.
func checkKIP848Group(t *testing.T, p page, c *server.Cluster) {
	t.Helper()
	if err := c.CreateTopic("clicks", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("clicks"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 5 {
		r := kgo.StringRecord("c")
		r.Partition = int32(i % 2)
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	member := newClient(t, c, kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("clicks"), kgo.ServerSideBalancer(),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	for read := 0; read < 5; {
		fs := member.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		read += fs.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	// Two more records: the group lags by them.
	for i := range 2 {
		r := kgo.StringRecord("late")
		r.Partition = int32(i)
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var gs server.GroupState
	for _, g := range c.Groups() {
		if g.Group == "g848" {
			gs = g
		}
	}
	if gs.Type != "consumer" || len(gs.Members) != 1 || gs.Members[0].MemberEpoch == nil {
		t.Fatalf("group g848 is not a KIP-848 group with one member: %+v", gs)
	}
	g := `.group[data-group="g848"][data-type="consumer"]`
	waitVisible(t, p, g+` tr[data-member] td.member-epoch`)
	waitJS(t, p, "the member's assignment", `(document.querySelector('`+g+` td.assignment') || {}).textContent === "clicks: 0,1"`)
	title := text(t, p, g+` .group-title`)
	for _, want := range []string{"consumer (KIP-848)", "group epoch", "assignment epoch", "Stable"} {
		if !strings.Contains(title, want) {
			t.Errorf("group title %q lacks %q", title, want)
		}
	}
	if got := text(t, p, g+` td.member-epoch`); got == "" || got == "0" {
		t.Errorf("member epoch %q, want the member's epoch", got)
	}
	// Committed 3 and 2 of 4 and 3: lag 1 each.
	waitJS(t, p, "the lag", `(() => { const rows = [...document.querySelectorAll('`+g+` table:last-of-type tr')].slice(1);
		return rows.length === 2 && rows.every((r) => r.lastChild.textContent === "1"); })()`)
}
