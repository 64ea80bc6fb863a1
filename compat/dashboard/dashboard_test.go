// Package dashboard tests fakekafka's dashboard in headless Chromium (from
// Debian's chromium package, driven with chromedp) and headless Firefox
// (Debian's firefox-esr, driven over its built-in WebDriver BiDi). It
// lives in the compat module so the core module does not depend on
// chromedp.
//
//	go test ./compat/dashboard                       # needs chromium and firefox-esr
//	go test ./compat/dashboard -update-screenshots   # rewrites docs/dashboard/*.png
//
// Without a browser its tests fail, telling how to install it, unless
// FAKEKAFKA_SKIP_BROWSER=1 says to skip them.
package dashboard

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the dashboard screenshots of docs/dashboard.md to docs/dashboard")

// chromium finds the browser or decides the test's fate without one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("FAKEKAFKA_CHROMIUM"), "/usr/bin/chromium", "chromium"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FAKEKAFKA_SKIP_BROWSER") == "1" {
		t.Skip("no Chromium and FAKEKAFKA_SKIP_BROWSER=1")
	}
	t.Fatal("the dashboard test needs Chromium: apt-get install chromium (scripts/test.sh does it as root), or set FAKEKAFKA_SKIP_BROWSER=1 to skip it")
	return ""
}

// browser starts headless Chromium with a 1280x900 window and returns a
// tab context, both closed at the end of the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context of that call: no timeout on it, one on the rest.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitState waits on the cluster, not on the page, with a deadline.
func waitState(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

// TestDashboard runs the whole dashboard story in headless Chromium,
// then the transactions and KIP-848 checks; TestDashboardFirefox runs the
// same in Firefox. The Chromium run writes docs/dashboard.md's screenshots with
// -update-screenshots.
func TestDashboard(t *testing.T) {
	p := chromePage{browser(t)}
	dashboardStory(t, p, true)
}

// dashboardStory: the page renders a 3-broker cluster; the picture of a
// lagging follower is to scale; fault rules and a group show; a crash made
// through the API shows without a reload; the Crash button (after the
// dialog) crashes a broker and Cancel does nothing; Restart works from the
// keyboard; the Pause button and the fault form act on the cluster. Then
// checkTransactions and checkKIP848Group on the same page.
func dashboardStory(t *testing.T, p page, shots bool) {
	// A long lag time keeps a paused follower in the ISR however slow
	// the machine.
	c, url := dashboardCluster(t, server.Config{ClusterID: "dashboard-test", ReplicaLagTimeMax: 10 * time.Minute,
		TransactionStatePartitions: 3, ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	shot := func(name string) {
		if shots {
			saveScreenshot(t, p, name)
		}
	}
	if err := c.CreateTopic("orders", 2, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	pctx := testContext(t)
	produce := func(partition int32, n int) {
		t.Helper()
		for i := range n {
			r := kgo.StringRecord("order-" + strconv.Itoa(i))
			r.Partition = partition
			if err := cl.ProduceSync(pctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 6)
	produce(1, 3)

	// The page renders the three brokers and both partitions' replicas.
	loadDashboard(t, p, url)
	waitVisible(t, p, `.partition[data-topic="orders"][data-partition="1"] .replica[data-broker="3"]`)

	// A lagging follower: 3 stops fetching partition 0 but stays in the
	// ISR, so the leader's LEO runs ahead of the HW. The picture must
	// draw the leader's log past the HW line and follower 3 short of it.
	if err := c.PauseReplica("orders", 0, 3); err != nil {
		t.Fatal(err)
	}
	produce(0, 4)
	waitState(t, "leader LEO 10", func() bool {
		ps, _ := c.Partition("orders", 0)
		return ps.Replicas[0].LogEndOffset == 10 && ps.Replicas[1].LogEndOffset == 10
	})
	part := `.partition[data-topic="orders"][data-partition="0"]`
	waitVisible(t, p, part+` .replica[data-broker="1"][data-leo="10"]`)
	var geo struct {
		LeaderLogEnd, HWLine, FollowerLogEnd, TrackStart, TrackWidth float64
		HW                                                           string
	}
	if err := p.eval(`(() => {
		const p = document.querySelector('`+part+`');
		const row = (b) => p.querySelector('.replica[data-broker="' + b + '"]');
		const right = (el) => { const r = el.getBoundingClientRect(); return r.left + r.width; };
		const track = row(1).querySelector('.track').getBoundingClientRect();
		return {
			LeaderLogEnd: right(row(1).querySelector('.bar-log')),
			HWLine: row(1).querySelector('.hw-line').getBoundingClientRect().left,
			FollowerLogEnd: right(row(3).querySelector('.bar-log')),
			TrackStart: track.left, TrackWidth: track.width,
			HW: p.dataset.hw,
		};
	})()`, &geo); err != nil {
		t.Fatalf("measure the picture: %v", err)
	}
	ps, _ := c.Partition("orders", 0)
	t.Logf("partition 0: %+v", ps)
	if geo.HW != strconv.FormatInt(ps.HighWatermark, 10) || ps.HighWatermark >= 10 {
		t.Fatalf("page HW %s, cluster HW %d; want the HW behind the leader's LEO 10", geo.HW, ps.HighWatermark)
	}
	if geo.LeaderLogEnd <= geo.HWLine+1 {
		t.Errorf("the leader's log ends at x=%.1f, not past the HW line at x=%.1f", geo.LeaderLogEnd, geo.HWLine)
	}
	if geo.FollowerLogEnd >= geo.LeaderLogEnd-1 {
		t.Errorf("follower 3's log ends at x=%.1f, not short of the leader's at x=%.1f", geo.FollowerLogEnd, geo.LeaderLogEnd)
	}
	// To scale: the leader's log spans the whole track (LEO 10 is the
	// largest), the HW line sits at HW/10 of it.
	if want := geo.TrackStart + geo.TrackWidth*float64(ps.HighWatermark)/10; geo.HWLine < want-3 || geo.HWLine > want+3 {
		t.Errorf("HW line at x=%.1f, want about %.1f for HW %d of 10", geo.HWLine, want, ps.HighWatermark)
	}
	if _, err := c.InjectFault(server.Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "orders", Count: 3}); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `#faults tr[data-fault]`)

	// A consumer group that read what it could and committed: its member,
	// assignment, committed offsets and lag show.
	group, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for read := 0; read < 9; { // 6 below partition 0's HW, 3 in partition 1
		fs := group.PollFetches(pctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		read += fs.NumRecords()
	}
	if err := group.CommitUncommittedOffsets(pctx); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `.group[data-group="billing"] td.num`)
	shot("lagging-follower.png")
	group.Close()
	if err := c.ResumeReplica("orders", 0, 3); err != nil {
		t.Fatal(err)
	}

	// A crash made through the API shows up without a reload.
	if err := c.StopBroker(2, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `.broker[data-broker="2"][data-status="fenced"]`)
	waitVisible(t, p, `#events li[data-type="broker_stopped"]`)
	waitVisible(t, p, part+` .replica[data-broker="2"][data-state="offline"]`)

	// A button press crashes broker 3, after the confirmation dialog.
	click(t, p, `.broker[data-broker="3"] button[data-action="crash"]`)
	waitVisible(t, p, `#confirm[open]`)
	shot("confirm-crash.png")
	click(t, p, `#confirm-ok`)
	waitState(t, "broker 3 down after the button press", func() bool { return !c.State().Brokers[2].Up })
	waitVisible(t, p, `.broker[data-broker="3"][data-status="fenced"]`)

	// Cancelling the dialog does nothing: broker 1 stays up.
	click(t, p, `.broker[data-broker="1"] button[data-action="powerloss"]`)
	waitVisible(t, p, `#confirm[open]`)
	click(t, p, `#confirm-cancel`)
	waitJS(t, p, "the dialog closed", `!document.querySelector("#confirm[open]")`)
	if !c.State().Brokers[0].Up {
		t.Fatal("cancelling the power-loss dialog stopped broker 1")
	}

	// Keyboard: Restart on broker 2 is a focusable button that Enter
	// presses.
	restart := `.broker[data-broker="2"] button[data-action="start"]`
	if err := p.pressEnter(restart); errors.Is(err, errNoKeyActivation) {
		t.Logf("Enter on Restart: %v; clicking it instead", err)
		click(t, p, restart)
	} else if err != nil {
		t.Fatalf("Enter on Restart: %v", err)
	}
	waitState(t, "broker 2 up after Enter", func() bool { return c.State().Brokers[1].Up })
	waitVisible(t, p, `.broker[data-broker="2"][data-status="up"]`)
	if err := c.StartBroker(3); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `.broker[data-broker="3"][data-status="up"]`)
	waitState(t, "full ISR", func() bool {
		ps, _ := c.Partition("orders", 0)
		return len(ps.ISR) == 3
	})
	waitVisible(t, p, part+` .replica[data-broker="3"][data-hw="10"]`)

	// The forms: pause a follower, add a fault rule, remove it.
	part1 := `.partition[data-topic="orders"][data-partition="1"]`
	click(t, p, part1+` .replica[data-broker="3"] button[data-action="pause"]`)
	waitVisible(t, p, part1+` .replica[data-broker="3"] button[data-action="resume"]`)
	if ps, _ := c.Partition("orders", 1); !ps.Replicas[1].Paused {
		t.Fatalf("the Pause button did not pause follower 3: %+v", ps.Replicas[1])
	}
	before := len(c.Faults())
	for sel, text := range map[string]string{`#fault-form input[name="api"]`: "Fetch", `#fault-form input[name="delay_ms"]`: "250",
		`#fault-form input[name="count"]`: "2"} {
		if err := p.typeText(sel, text); err != nil {
			t.Fatalf("typing %q into %s: %v", text, sel, err)
		}
	}
	click(t, p, `#fault-form button[type="submit"]`)
	waitState(t, "the form's fault rule", func() bool { return len(c.Faults()) == before+1 })
	f := c.Faults()[before]
	if f.API != "Fetch" || f.DelayMillis != 250 || f.Count != 2 || f.Error != "" {
		t.Fatalf("the form added %+v", f)
	}
	click(t, p, `#faults tr[data-fault="`+f.ID+`"] button`)
	waitState(t, "the rule removed", func() bool { return len(c.Faults()) == before })
	shot("overview.png")
	checkNotReloaded(t, p)

	checkTransactions(t, p, c, shots)
	checkKIP848Group(t, p, c)
	checkMatchesCluster(t, p)
	checkLabels(t, p, c)
	checkRecordBrowser(t, p, c, shots)
	checkCharts(t, p, c)
	checkMatchesCluster(t, p)
	checkNotReloaded(t, p)
	checkEventFlood(t, p, c, url, shots)
}
