package control

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
)

// TestUnknownIsNotFoundEverywhere: every control path answers 404 for a
// broker, topic, partition or group the cluster does not have, whether
// the path or the body names it.
func TestUnknownIsNotFoundEverywhere(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 3})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := newControlServer(t, c)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/v1/brokers/9/stop", `{"mode":"clean"}`, "unknown broker 9"},
		{"POST", "/v1/brokers/9/start", "", "unknown broker 9"},
		{"POST", "/v1/brokers/9/isolate", "", "unknown broker 9"},
		{"POST", "/v1/brokers/9/heal", "", "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/replicas/9/pause", "", "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/replicas/9/resume", "", "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/replicas/9/fetch", "", "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[1,9]}`, "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/elect", `{"leader":9}`, "unknown broker 9"},
		{"POST", "/v1/partitions/t/0/reassign", `{"replicas":[1,9]}`, "unknown broker 9"},
		{"POST", "/v1/topics/t/partitions", `{"count":2,"assignment":[[9]]}`, "unknown broker 9"},
		{"POST", "/v1/topics", `{"name":"n","assignment":[[9]]}`, "unknown broker 9"},
		{"POST", "/v1/faults", `{"api":"Produce","broker":9}`, "unknown broker 9"},
		{"PUT", "/v1/listeners/PLAINTEXT", `{"advertised":{"9":"h:1"}}`, "unknown broker 9"},
		{"POST", "/v1/partitions/nope/0/isr", `{"isr":[1]}`, `unknown topic "nope"`},
		{"POST", "/v1/partitions/t/7/isr", `{"isr":[1]}`, "no partition 7"},
		{"POST", "/v1/partitions/t/7/elect", `{}`, "no partition 7"},
		{"POST", "/v1/partitions/nope/0/clean", "", `unknown topic "nope"`},
		{"POST", "/v1/topics/nope/clean", "", `unknown topic "nope"`},
		{"POST", "/v1/topics/nope/partitions", `{"count":2}`, `unknown topic "nope"`},
		{"GET", "/v1/topics/nope", "", `unknown topic "nope"`},
		{"POST", "/v1/transactions/markers/nope/0/hold", "", `unknown topic "nope"`},
		{"POST", "/v1/transactions/markers/t/7/release", "", "no partition 7"},
		{"GET", "/v1/groups/nope", "", `unknown group "nope"`},
		{"GET", "/v1/faults/nope", "", `unknown fault "nope"`},
		{"DELETE", "/v1/users/nope", "", `unknown SASL user "nope"`},
		{"GET", "/v1/listeners/NOPE", "", `unknown listener "NOPE"`},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, tc.method, tc.path, tc.body, &e); code != http.StatusNotFound || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s %s %s: %d %q, want 404 with %q", tc.method, tc.path, tc.body, code, e.Error, tc.want)
		}
	}
}

// TestBodyKeysAreCaseSensitive: encoding/json alone would take "ISR" for
// "isr"; the control API refuses it as it refuses unknown keys, at any
// depth, and names the key meant.
func TestBodyKeysAreCaseSensitive(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 3})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := newControlServer(t, c)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/v1/partitions/t/0/isr", `{"ISR":[2]}`, `unknown field "ISR": keys are case-sensitive (did you mean "isr"?)`},
		{"POST", "/v1/partitions/t/0/elect", `{"Leader":2}`, `"Leader"`},
		{"POST", "/v1/brokers/2/stop", `{"Mode":"clean"}`, `"Mode"`},
		{"POST", "/v1/clock/advance", `{"MS":1}`, `"MS"`},
		{"POST", "/v1/faults", `{"API":"Produce"}`, `"API"`},
		{"POST", "/v1/topics", `{"name":"n","Configs":{}}`, `"Configs"`},
		{"POST", "/v1/acls", `{"acls":[{"Resource_Type":"TOPIC"}]}`, `unknown field "Resource_Type" in acls[0]`},
		{"POST", "/v1/chaos", `{"Preset":"gentle"}`, `"Preset"`},
		{"POST", "/v1/partitions/t/0/isr", `{"isr":[2],"ISR":[2]}`, `"ISR"`},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, tc.method, tc.path, tc.body, &e); code != http.StatusBadRequest || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s %s %s: %d %q, want 400 with %q", tc.method, tc.path, tc.body, code, e.Error, tc.want)
		}
	}
	if ps, _ := c.Partition("t", 0); len(ps.ISR) != 3 {
		t.Errorf("a refused body changed the ISR: %v", ps.ISR)
	}
	if _, ok := c.Topic("n"); ok {
		t.Error("a refused body created a topic")
	}
}

// TestBodyTypeErrorsSpeakJSON: a value of the wrong type is named by its
// key and JSON kinds, not Go's struct and field names.
func TestBodyTypeErrorsSpeakJSON(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 3})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := newControlServer(t, c)
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/partitions/t/0/elect", `{"leader":"two"}`, `malformed request body: "leader" must be an integer, not a JSON string`},
		{"/v1/partitions/t/0/isr", `{"isr":2}`, `malformed request body: "isr" must be a list, not a JSON number`},
		{"/v1/topics", `{"name":"n","configs":{"retention.ms":1}}`, `"configs" must be a string, not a JSON number`},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, "POST", tc.path, tc.body, &e); code != http.StatusBadRequest || e.Error != tc.want && !strings.Contains(e.Error, tc.want) {
			t.Errorf("POST %s %s: %d %q, want 400 with %q", tc.path, tc.body, code, e.Error, tc.want)
		}
		if strings.Contains(e.Error, "Go ") {
			t.Errorf("POST %s %s: Go names in %q", tc.path, tc.body, e.Error)
		}
	}
}
