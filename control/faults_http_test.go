package control

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFaultControlAPI(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	srv := httptest.NewServer(Handler(c))
	t.Cleanup(srv.Close)

	var created api.FaultState
	body := `{"api":"Produce","error":"NOT_ENOUGH_REPLICAS","topic":"t","partition":0,"broker":1,"count":3,"delay_ms":0}`
	if code := controlCall(t, srv, "POST", "/v1/faults", body, &created); code != http.StatusCreated {
		t.Fatalf("POST: status %d", code)
	}
	if created.ID == "" || created.API != "Produce" || created.ErrorCode != 19 || created.Partition == nil || *created.Partition != 0 ||
		created.Broker != 1 || created.Count != 3 || created.Remaining != 3 {
		t.Fatalf("created %+v", created)
	}
	var spy api.FaultState
	if code := controlCall(t, srv, "POST", "/v1/faults", `{"api":"init_producer_id","client_id":"spy","delay_ms":1,"error":31}`, &spy); code != http.StatusCreated {
		t.Fatalf("POST spy: status %d", code)
	}
	if spy.API != "InitProducerID" || spy.Error != "CLUSTER_AUTHORIZATION_FAILED" || spy.Remaining != -1 {
		t.Fatalf("spy %+v", spy)
	}
	cl := newClient(t, c, kgo.ClientID("spy"))
	if _, err := cl.Request(testContext(t), kmsg.NewPtrInitProducerIDRequest()); err != nil {
		t.Fatal(err)
	}

	var list struct {
		Faults []api.FaultState `json:"faults"`
	}
	if code := controlCall(t, srv, "GET", "/v1/faults", "", &list); code != http.StatusOK {
		t.Fatalf("GET: status %d", code)
	}
	if len(list.Faults) != 2 || list.Faults[0].ID != created.ID || list.Faults[1].ID != spy.ID || list.Faults[1].Hits != 1 || list.Faults[0].Hits != 0 {
		t.Fatalf("list %+v", list.Faults)
	}
	var one api.FaultState
	if code := controlCall(t, srv, "GET", "/v1/faults/"+spy.ID, "", &one); code != http.StatusOK || one.Hits != 1 {
		t.Fatalf("GET one: status %d, %+v", code, one)
	}

	var removed api.FaultState
	if code := controlCall(t, srv, "DELETE", "/v1/faults/"+spy.ID, "", &removed); code != http.StatusOK || removed.ID != spy.ID || removed.Hits != 1 {
		t.Fatalf("DELETE: status %d, %+v", code, removed)
	}
	for _, path := range []string{"/v1/faults/" + spy.ID, "/v1/faults/nope"} {
		if code := controlCall(t, srv, "DELETE", path, "", nil); code != http.StatusNotFound {
			t.Errorf("DELETE %s: status %d, want 404", path, code)
		}
		if code := controlCall(t, srv, "GET", path, "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, code)
		}
	}
	if controlCall(t, srv, "GET", "/v1/faults", "", &list); len(list.Faults) != 1 || list.Faults[0].ID != created.ID {
		t.Fatalf("list after DELETE: %+v", list.Faults)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"api":"Nope"}`, "unknown API"},
		{`{"api":"Produce","error":"NOT_A_KAFKA_ERROR"}`, "unknown Kafka error"},
		{`{"error":"NOT_A_KAFKA_ERROR"}`, "unknown Kafka error"},
		{`{"api":"Produce",`, "malformed"},
		{`{"api":"Produce","bogus":1}`, "bogus"},
		{`{"api":"Produce","count":-1}`, "negative"},
		{`{"api":"Produce","delay_ms":-5}`, "delay_ms"},
		{`{"api":"Produce","partition":"zero"}`, "malformed"},
		{`{"api":true}`, "malformed"},
		{``, "empty"},
	} {
		var e struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, "POST", "/v1/faults", tc.body, &e); code != http.StatusBadRequest || !strings.Contains(e.Error, tc.want) {
			t.Errorf("POST %s: status %d error %q, want 400 about %q", tc.body, code, e.Error, tc.want)
		}
	}
}
