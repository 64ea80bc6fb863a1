package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// TestGroupsControlAPI reads groups over HTTP.
func TestGroupsControlAPI(t *testing.T) {
	c, cl, ctx := groupCluster(t, server.Config{})
	resp := mustJoin(t, ctx, cl, rawJoinRequest("g", "", time.Second, "range", "work"))
	m := &rawMember{cl: cl, group: "g", id: resp.MemberID, generation: resp.Generation}
	code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("work", 2, 3)})
	wantCode(t, "sync", code, nil)
	srv := httptest.NewServer(Handler(c))
	defer srv.Close()

	var list struct {
		Groups []api.GroupState `json:"groups"`
	}
	getJSON(t, srv.URL+"/v1/groups", http.StatusOK, &list)
	if len(list.Groups) != 1 || list.Groups[0].Group != "g" || list.Groups[0].State != "Stable" {
		t.Fatalf("groups %+v", list)
	}
	var one map[string]any
	getJSON(t, srv.URL+"/v1/groups/g", http.StatusOK, &one)
	members := one["members"].([]any)
	assignment := members[0].(map[string]any)["assignment"].(map[string]any)
	if one["protocol"] != "range" || one["generation"] != 1.0 || fmt.Sprint(assignment["work"]) != "[2 3]" {
		t.Fatalf("group %v", one)
	}
	var fail map[string]string
	getJSON(t, srv.URL+"/v1/groups/nope", http.StatusNotFound, &fail)
	if fail["error"] == "" {
		t.Fatalf("error body %v", fail)
	}
}

func getJSON(t *testing.T, url string, status int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d", url, resp.StatusCode, status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
