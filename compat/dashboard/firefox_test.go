package dashboard

import "testing"

// TestDashboardFirefox runs TestDashboard's story in headless Firefox
// (Debian's firefox-esr, driven over its built-in WebDriver BiDi).
func TestDashboardFirefox(t *testing.T) {
	dashboardStory(t, startFirefox(t), false)
}
