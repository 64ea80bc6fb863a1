package dashboard

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// TestDashboardFirefox runs the page in headless Firefox (Debian's
// firefox-esr, driven over its built-in WebDriver BiDi): a 3-broker
// cluster renders and goes live; transactions show their LSO and panel; a
// KIP-848 group shows its epochs, assignment and lag; a crash through the
// API appears without a reload and the Crash button crashes a broker.
func TestDashboardFirefox(t *testing.T) {
	ff := startFirefox(t)
	c, url := dashboardCluster(t, server.Config{ClusterID: "dashboard-firefox", TransactionStatePartitions: 3,
		ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	loadDashboard(t, ff, url)
	checkTransactions(t, ff, c, "")
	checkKIP848Group(t, ff, c)
	checkCrashes(t, ff, c)
}

// TestDashboardTransactionsAndGroups is the same in Chromium, and takes the
// README's screenshot of an open transaction.
func TestDashboardTransactionsAndGroups(t *testing.T) {
	ctx := browser(t)
	p := chromePage{ctx}
	c, url := dashboardCluster(t, server.Config{ClusterID: "dashboard-test", TransactionStatePartitions: 3,
		ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	loadDashboard(t, p, url)
	checkTransactions(t, p, c, "transactions.png")
	checkKIP848Group(t, p, c)
	checkCrashes(t, p, c)
}
