package control

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func TestDashboardIsServed(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)
	get := func(path string) (int, string, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ct, body := get("/")
	if code != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, `<script src="/dashboard/app.js">`) {
		t.Fatalf("GET /: %d %s\n%s", code, ct, body)
	}
	for _, script := range []string{"app.js", "events.js", "records.js", "charts.js", "security.js", "schemas.js"} {
		if !strings.Contains(body, `<script src="/dashboard/`+script+`">`) {
			t.Errorf("index.html does not load %s", script)
		}
		if code, ct, _ := get("/dashboard/" + script); code != 200 || !strings.Contains(ct, "javascript") {
			t.Fatalf("GET /dashboard/%s: %d %s", script, code, ct)
		}
	}
	_, _, js := get("/dashboard/events.js")
	// The page listens for each event type by name: none may be missing.
	for _, typ := range api.EventTypes {
		if !strings.Contains(js, `"`+string(typ)+`"`) {
			t.Errorf("events.js does not list event type %s", typ)
		}
	}
	if code, ct, _ := get("/dashboard/style.css"); code != 200 || !strings.HasPrefix(ct, "text/css") {
		t.Fatalf("GET /dashboard/style.css: %d %s", code, ct)
	}
	// No external assets: every src and href is the page's own.
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`} {
		if strings.Contains(body, attr) {
			t.Errorf("index.html loads an external asset (%s)", attr)
		}
	}
	if code, ct, _ := get("/dashboard/nope.js"); code != 404 {
		t.Fatalf("GET /dashboard/nope.js: %d %s", code, ct)
	}
	if code, ct, _ := get("/nope"); code != 404 || ct != "application/json" {
		t.Fatalf("GET /nope: %d %s, want a JSON 404", code, ct)
	}
}
