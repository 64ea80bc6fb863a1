package dashboard

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// TestDashboardSchemaRegistry: a registry fault rule shows in the panel
// with its hit and goes with its Remove button; two versions of a subject registered over
// the registry's REST API show in the Schema registry panel; picking the
// subject selects its newest version, whose schema shows beside its diff
// to version 1 (the added field's lines marked added, nothing removed);
// picking version 1 says there is
// nothing to diff. The events panel lists schema_registered. Chromium;
// writes docs/dashboard/schemas.png with -update-screenshots.
func TestDashboardSchemaRegistry(t *testing.T) {
	p := chromePage{browser(t)}
	c, url := dashboardCluster(t, server.Config{ClusterID: "dashboard-schemas", SchemaRegistry: &server.SchemaRegistryConfig{}})
	loadDashboard(t, p, url)
	waitJS(t, p, "an empty registry", `document.querySelector("#schemas-summary").textContent.includes("0 subjects")`)

	// A fault rule shows with its hits and goes with its Remove button.
	rule, err := c.InjectSchemaRegistryFault(api.SchemaRegistryFault{Method: "POST", Path: "/subjects/*/versions", ErrorCode: 50001, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	faultRow := `#schemas tr[data-schema-fault="` + rule.ID() + `"]`
	waitVisible(t, p, faultRow)
	resp, err := http.Post(c.SchemaRegistryURL()+"/subjects/orders-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("faulted registration: %d", resp.StatusCode)
	}
	waitJS(t, p, "the hit shown", `document.querySelector('`+faultRow+` .hits').textContent === "1"`)
	if got := text(t, p, faultRow); !strings.Contains(got, "/subjects/*/versions") || !strings.Contains(got, "500 error_code 50001") {
		t.Errorf("fault row %q", got)
	}
	click(t, p, faultRow+` button`)
	waitJS(t, p, "the rule removed", `!document.querySelector('`+faultRow+`')`)
	if n := len(c.SchemaRegistryFaults()); n != 0 {
		t.Errorf("%d rules left after Remove", n)
	}

	v1 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":"string","default":""}]}`
	for i, s := range []string{v1, v2} {
		body, _ := json.Marshal(map[string]string{"schema": s})
		resp, err := http.Post(c.SchemaRegistryURL()+"/subjects/orders-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("register version %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	row := `#schemas tr[data-subject="orders-value"]`
	waitVisible(t, p, row)
	// The panel may first render after version 1's event: wait for both.
	waitJS(t, p, "both versions listed", `(() => { const td = document.querySelectorAll('`+row+` td'); return td.length > 1 && td[1].textContent === "2"; })()`)
	var cells []string
	if err := p.eval(`[...document.querySelectorAll('`+row+` td')].map((td) => td.textContent)`, &cells); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cells, "|"); got != "orders-value|2|2|AVRO|-|-|" {
		t.Errorf("subject row %q, want subject, versions, latest id, type, compatibility, mode, deleted", got)
	}
	click(t, p, row+` button`)
	waitVisible(t, p, `#schemas .schema-versions button[data-version="2"].picked`)
	waitVisible(t, p, `#schema-diff`)
	var diff struct{ Added, Removed []string }
	if err := p.eval(`(() => { const lines = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.replace(/\s+/g, " ").trim());
		return { Added: lines("#schema-diff .add"), Removed: lines("#schema-diff .del") }; })()`, &diff); err != nil {
		t.Fatal(err)
	}
	// Indented the same way on both sides, v2 adds a field after id: its
	// lines and the comma that now follows id's closing brace; the LCS
	// keeps every line of v1.
	wantAdded := []string{`+ },`, `+ {`, `+ "name": "note",`, `+ "type": "string",`, `+ "default": ""`}
	if strings.Join(diff.Added, "\n") != strings.Join(wantAdded, "\n") || len(diff.Removed) != 0 {
		t.Errorf("diff: added %q, removed %q\nwant added %q, nothing removed", diff.Added, diff.Removed, wantAdded)
	}
	if got := text(t, p, `#schema-text`); !strings.Contains(got, `"name": "note"`) {
		t.Errorf("schema text %q lacks the note field", got)
	}
	if got := text(t, p, `#schemas .schema-head`); !strings.Contains(got, "orders-value version 2 · id 2 · AVRO") {
		t.Errorf("head %q", got)
	}
	click(t, p, `#schemas .schema-versions button[data-version="1"]`)
	waitJS(t, p, "version 1 picked", `!!document.querySelector('#schemas .schema-versions button[data-version="1"].picked') && !document.querySelector("#schema-diff")`)
	if got := text(t, p, `#schemas .schema-panes figure:last-child figcaption`); !strings.Contains(got, "first version") {
		t.Errorf("version 1's diff pane says %q", got)
	}
	waitVisible(t, p, `#events li[data-type="schema_registered"]`)
	if got := text(t, p, `#events li[data-type="schema_registered"]`); !strings.Contains(got, "subject orders-value version 2 id 2 AVRO") {
		t.Errorf("event row %q", got)
	}
	checkNotReloaded(t, p)
	click(t, p, `#schemas .schema-versions button[data-version="2"]`)
	waitVisible(t, p, `#schema-diff`)
	saveSectionShot(t, p, "schemas.png", "schemas-section", "events-section")
}
