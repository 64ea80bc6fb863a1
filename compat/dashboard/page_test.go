package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// page is a browser tab as the story shared by the Chromium and Firefox
// tests sees it: navigate, run JavaScript, real key presses, a
// screenshot. Waiting for an element and clicking are JavaScript on top.
type page interface {
	navigate(url string) error
	// eval runs the JavaScript expression js (promises are awaited) and
	// decodes its JSON-encodable value into out.
	eval(js string, out any) error
	// pressEnter focuses the element sel matches and presses Enter on
	// the keyboard.
	pressEnter(sel string) error
	// typeText focuses the element sel matches and types text.
	typeText(sel, text string) error
	screenshot() ([]byte, error)
}

// chromePage drives a chromedp tab.
type chromePage struct{ ctx context.Context }

func (p chromePage) navigate(url string) error { return chromedp.Do(p.ctx, chromedp.Navigate(url)) }

func (p chromePage) eval(js string, out any) error {
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`Promise.resolve(`+js+`).then((v) => JSON.stringify(v === undefined ? null : v))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(s), out)
}

func (p chromePage) pressEnter(sel string) error {
	return chromedp.Do(p.ctx, chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent("\r"))
}

func (p chromePage) typeText(sel, text string) error {
	return chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.CSS(sel), text))
}

func (p chromePage) screenshot() ([]byte, error) {
	return chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
}

// pollInterval is how often a wait re-checks the page; a wait ends on the
// condition or its deadline, never on the interval.
const pollInterval = 20 * time.Millisecond

// waitJS waits until the expression js is true on the page.
func waitJS(t *testing.T, p page, what, js string) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	var last error
	for {
		var ok bool
		if last = p.eval(js, &ok); last == nil && ok {
			t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%s): %v", what, js, last)
		}
		time.Sleep(pollInterval)
	}
}

// visible is a JavaScript test that sel matches an element that is drawn.
func visible(sel string) string {
	return fmt.Sprintf(`(() => { const el = document.querySelector(%s); return !!el && el.getClientRects().length > 0; })()`, strconv.Quote(sel))
}

func waitVisible(t *testing.T, p page, sel string) {
	t.Helper()
	waitJS(t, p, "visible "+sel, visible(sel))
}

// errNoKeyActivation is pressEnter's answer where the browser's driver
// cannot activate a button from the keyboard.
var errNoKeyActivation = errors.New("this driver's key presses do not activate buttons")

// click waits for the element sel matches to be drawn and enabled, then
// presses it, as a user's click does.
func click(t *testing.T, p page, sel string) {
	t.Helper()
	waitJS(t, p, "enabled "+sel, fmt.Sprintf(`%s && !document.querySelector(%s).disabled`, visible(sel), strconv.Quote(sel)))
	var ok bool
	js := fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el || el.disabled) return false; el.click(); return true; })()`, strconv.Quote(sel))
	if err := p.eval(js, &ok); err != nil || !ok {
		t.Fatalf("click %s: not there or disabled (%v)", sel, err)
	}
}

// text returns the text of the element sel matches.
func text(t *testing.T, p page, sel string) string {
	t.Helper()
	var s string
	if err := p.eval(fmt.Sprintf(`(document.querySelector(%s) || {}).textContent || ""`, strconv.Quote(sel)), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// saveScreenshot writes docs/dashboard.md's screenshot name with -update-screenshots.
func saveScreenshot(t *testing.T, p page, name string) {
	t.Helper()
	if !*updateScreenshots {
		return
	}
	var ok bool
	if err := p.eval(`(() => { window.scrollTo(0, 0); return true; })()`, &ok); err != nil {
		t.Fatal(err)
	}
	png, err := p.screenshot()
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveSectionShot is saveScreenshot of only the given sections of the
// page (by id), the others hidden while it is taken.
func saveSectionShot(t *testing.T, p page, name string, ids ...string) {
	t.Helper()
	if !*updateScreenshots {
		return
	}
	keep, _ := json.Marshal(ids)
	var ok bool
	if err := p.eval(`(() => { const keep = `+string(keep)+`;
		for (const s of document.querySelectorAll("main > section")) s.hidden = !keep.includes(s.id);
		const l = document.querySelector("#events"), top = l.scrollTop;
		l.style.maxHeight = "40rem"; // the full-page shot would stretch 100vh
		l.scrollTop = top;
		return true; })()`, &ok); err != nil {
		t.Fatal(err)
	}
	saveScreenshot(t, p, name)
	if err := p.eval(`(() => { for (const s of document.querySelectorAll("main > section")) s.hidden = false;
		document.querySelector("#events").style.maxHeight = ""; return true; })()`, &ok); err != nil {
		t.Fatal(err)
	}
}
