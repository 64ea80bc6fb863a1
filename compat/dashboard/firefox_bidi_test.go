package dashboard

// A small WebDriver BiDi client for Firefox's built-in remote agent
// (--remote-debugging-port): no geckodriver, no browser download, only
// Debian's firefox-esr. It speaks just what the tests need: a session,
// one browsing context, navigate, script.evaluate, a viewport and a
// screenshot.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// firefox finds the browser or decides the test's fate without one.
func firefox(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("FAKEKAFKA_FIREFOX"), "/usr/bin/firefox-esr", "firefox-esr", "firefox"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FAKEKAFKA_SKIP_BROWSER") == "1" {
		t.Skip("no Firefox and FAKEKAFKA_SKIP_BROWSER=1")
	}
	t.Fatal("the dashboard test needs Firefox: apt-get install firefox-esr (scripts/test.sh does it as root), or set FAKEKAFKA_SKIP_BROWSER=1 to skip it")
	return ""
}

// firefoxPrefs keep a test profile quiet and off the network (the remote
// agent already applies its recommended automation preferences).
const firefoxPrefs = `user_pref("app.update.auto", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("extensions.update.enabled", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
`

var bidiListening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// bidi is one WebDriver BiDi session on one browsing context.
type bidi struct {
	ws      *websocket.Conn
	context string
	timeout time.Duration

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan bidiReply
	readErr error
}

type bidiReply struct {
	Type    string          `json:"type"` // success, error
	ID      *int            `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// startFirefox starts headless Firefox with a fresh profile and opens a
// BiDi session on its first tab, sized 1280x900. Both end with the test.
func startFirefox(t *testing.T) *bidi {
	t.Helper()
	bin := firefox(t)
	profile := t.TempDir()
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port", "0", "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1", "HOME="+profile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its content processes go with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Firefox: %v", err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	found := make(chan string, 1)
	go func() {
		// Read stderr to the end, so Firefox never blocks on it.
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := bidiListening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	var url string
	select {
	case url = <-found:
	case <-exited:
		t.Fatal("Firefox exited before its remote agent listened")
	case <-time.After(90 * time.Second):
		t.Fatal("Firefox's remote agent did not start within 90 s")
	}
	ws, _, err := websocket.DefaultDialer.Dial(url+"/session", nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	b := &bidi{ws: ws, waiting: map[int]chan bidiReply{}, timeout: 60 * time.Second}
	go b.readLoop()
	t.Cleanup(func() { ws.Close() })
	if err := b.call("session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatalf("session.new: %v", err)
	}
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := b.call("browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("browsingContext.getTree: %+v, %v", tree, err)
	}
	b.context = tree.Contexts[0].Context
	if err := b.call("browsingContext.setViewport", map[string]any{"context": b.context,
		"viewport": map[string]int{"width": 1280, "height": 900}}, nil); err != nil {
		t.Fatalf("browsingContext.setViewport: %v", err)
	}
	return b
}

func (b *bidi) readLoop() {
	for {
		var r bidiReply
		err := b.ws.ReadJSON(&r)
		b.mu.Lock()
		if err != nil {
			b.readErr = err
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		if r.ID != nil { // events (no id) are not needed
			if ch, ok := b.waiting[*r.ID]; ok {
				ch <- r
				delete(b.waiting, *r.ID)
			}
		}
		b.mu.Unlock()
	}
}

// call sends one command and decodes its result into out (if not nil).
func (b *bidi) call(method string, params any, out any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return b.readErr
	}
	b.nextID++
	id := b.nextID
	ch := make(chan bidiReply, 1)
	b.waiting[id] = ch
	err := b.ws.WriteJSON(map[string]any{"id": id, "method": method, "params": params})
	b.mu.Unlock()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: connection closed: %v", method, b.readErr)
		}
		if r.Type == "error" {
			return fmt.Errorf("%s: %s: %s", method, r.Error, r.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer in %v", method, b.timeout)
	}
}

func (b *bidi) navigate(url string) error {
	return b.call("browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "complete"}, nil)
}

func (b *bidi) eval(js string, out any) error {
	var res struct {
		Type   string `json:"type"` // success, exception
		Result struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := b.call("script.evaluate", map[string]any{
		"expression":      `Promise.resolve(` + js + `).then((v) => JSON.stringify(v === undefined ? null : v))`,
		"target":          map[string]string{"context": b.context},
		"awaitPromise":    true,
		"resultOwnership": "none",
	}, &res)
	switch {
	case err != nil:
		return err
	case res.Type == "exception":
		return errors.New(res.ExceptionDetails.Text)
	}
	s, ok := res.Result.Value.(string)
	if !ok {
		return fmt.Errorf("script.evaluate answered a %s", res.Result.Type)
	}
	return json.Unmarshal([]byte(s), out)
}

// focus focuses the element sel matches.
func (b *bidi) focus(sel string) error {
	var ok bool
	if err := b.eval(fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) return false; el.focus(); return document.activeElement === el; })()`,
		strconv.Quote(sel)), &ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("cannot focus %s", sel)
	}
	return nil
}

// keys presses and releases each key in turn (WebDriver key values: a
// character, or "\uE007" for Enter).
func (b *bidi) keys(keys ...string) error {
	var actions []map[string]string
	for _, k := range keys {
		actions = append(actions, map[string]string{"type": "keyDown", "value": k}, map[string]string{"type": "keyUp", "value": k})
	}
	return b.call("input.performActions", map[string]any{"context": b.context,
		"actions": []map[string]any{{"type": "key", "id": "keyboard", "actions": actions}}}, nil)
}

// pressEnter: Firefox 153 delivers BiDi's Enter (and Space) to a focused
// button as trusted keydown, keypress and keyup events, but the button
// never gets the click that follows them, with the headless window never
// focused (document.hasFocus() is false). Typing into fields works.
func (b *bidi) pressEnter(sel string) error {
	if err := b.focus(sel); err != nil {
		return err
	}
	return errNoKeyActivation
}

func (b *bidi) typeText(sel, text string) error {
	if err := b.focus(sel); err != nil {
		return err
	}
	var ks []string
	for _, r := range text {
		ks = append(ks, string(r))
	}
	return b.keys(ks...)
}

func (b *bidi) screenshot() ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := b.call("browsingContext.captureScreenshot", map[string]any{"context": b.context, "origin": "document"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}
