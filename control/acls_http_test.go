package control

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

func TestACLsHTTP(t *testing.T) {
	c := aclCluster(t, server.Config{SuperUsers: []string{"User:admin"}})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	post := func(body string) (*http.Response, map[string]any) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/acls", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp, out
	}
	for _, bad := range []string{
		`{"acls":[{"resource_type":"NOPE","resource_name":"t","principal":"User:a","operation":"READ","permission_type":"ALLOW"}]}`,
		`{"acls":[{"resource_type":"TOPIC","resource_name":"t","principal":"a","operation":"READ","permission_type":"ALLOW"}]}`,
		`{"acls":[{"resource_type":"CLUSTER","resource_name":"x","principal":"User:a","operation":"ALTER","permission_type":"ALLOW"}]}`,
		`{"acls":[{"resource_type":"TOPIC","resource_name":"t","principal":"User:a","operation":"ANY","permission_type":"ALLOW"}]}`,
		`{"acl":[]}`,
	} {
		if resp, out := post(bad); resp.StatusCode != http.StatusBadRequest || out["error"] == nil {
			t.Errorf("%s: %d %v, want 400 with an error", bad, resp.StatusCode, out)
		}
	}
	if len(c.ACLs()) != 0 {
		t.Fatalf("a refused request created bindings: %v", c.ACLs())
	}

	resp, _ := post(`{"acls":[{"resource_type":"topic","resource_name":"orders.","pattern_type":"prefixed","principal":"User:alice","operation":"read","permission_type":"allow"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/acls: %d", resp.StatusCode)
	}
	get, err := http.Get(srv.URL + "/v1/acls")
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	var st api.ACLState
	dec := json.NewDecoder(get.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		t.Fatal(err)
	}
	want := api.ACLBinding{ResourceType: "TOPIC", ResourceName: "orders.", PatternType: "PREFIXED", Principal: "User:alice", Host: "*", Operation: "READ", Permission: "ALLOW"}
	if !st.Authorizer || len(st.SuperUsers) != 1 || st.SuperUsers[0] != "User:admin" || len(st.ACLs) != 1 || st.ACLs[0] != want {
		t.Fatalf("GET /v1/acls: %+v", st)
	}
}
