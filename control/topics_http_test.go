package control

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestControlTopics creates, describes, reconfigures and deletes topics
// over HTTP, and checks each step through a Kafka admin client: what the
// control API does is what Kafka's own API shows.
func TestControlTopics(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 3})
	srv := newControlServer(t, c)
	adm := kadm.NewClient(newClient(t, c))
	ctx := testContext(t)

	var ts api.TopicState
	if code := controlCall(t, srv, "POST", "/v1/topics",
		`{"name":"orders","partitions":3,"replication_factor":3,"configs":{"min.insync.replicas":"2"}}`, &ts); code != http.StatusCreated ||
		ts.Name != "orders" || len(ts.Partitions) != 3 || len(ts.Partitions[0].Replicas) != 3 || ts.Configs["min.insync.replicas"] != "2" {
		t.Fatalf("create: %d %+v", code, ts)
	}
	details, err := adm.ListTopics(ctx, "orders")
	if err != nil || details["orders"].Err != nil || len(details["orders"].Partitions) != 3 || details["orders"].Partitions.NumReplicas() != 3 {
		t.Fatalf("kadm sees %+v, %v", details, err)
	}
	if v := topicConfig(t, adm, "orders", "min.insync.replicas"); v != "2" {
		t.Fatalf("kadm: min.insync.replicas %q, want 2", v)
	}

	// An explicit assignment: partition 0 on 3,1, partition 1 on 1,2.
	ts = api.TopicState{}
	if code := controlCall(t, srv, "POST", "/v1/topics", `{"name":"placed","assignment":[[3,1],[1,2]]}`, &ts); code != http.StatusCreated ||
		len(ts.Partitions) != 2 || !slices.Equal(replicaIDs(ts.Partitions[0]), []int32{3, 1}) || ts.Partitions[0].Leader != 3 {
		t.Fatalf("create with assignment: %d %+v", code, ts)
	}

	ts = api.TopicState{}
	if code := controlCall(t, srv, "GET", "/v1/topics/orders", "", &ts); code != http.StatusOK || len(ts.Partitions) != 3 ||
		len(ts.Partitions[1].ISR) != 3 || ts.Partitions[1].Leader < 1 {
		t.Fatalf("describe: %d %+v", code, ts)
	}
	var list struct {
		Topics []api.TopicState `json:"topics"`
	}
	if code := controlCall(t, srv, "GET", "/v1/topics", "", &list); code != http.StatusOK ||
		!slices.ContainsFunc(list.Topics, func(t api.TopicState) bool { return t.Name == "placed" }) {
		t.Fatalf("list: %d %+v", code, list)
	}

	var cs api.TopicConfigState
	if code := controlCall(t, srv, "PATCH", "/v1/topics/orders/configs", `{"set":{"min.insync.replicas":"3","retention.ms":"60000"}}`, &cs); code != http.StatusOK ||
		configValue(cs, "min.insync.replicas") != "3 DYNAMIC_TOPIC_CONFIG" || configValue(cs, "retention.ms") != "60000 DYNAMIC_TOPIC_CONFIG" {
		t.Fatalf("set configs: %d %+v", code, cs)
	}
	if v := topicConfig(t, adm, "orders", "min.insync.replicas"); v != "3" {
		t.Fatalf("kadm after PATCH: min.insync.replicas %q, want 3", v)
	}
	cs = api.TopicConfigState{}
	if code := controlCall(t, srv, "PATCH", "/v1/topics/orders/configs", `{"delete":["retention.ms"]}`, &cs); code != http.StatusOK ||
		configValue(cs, "retention.ms") != "604800000 DEFAULT_CONFIG" {
		t.Fatalf("delete a config: %d %s", code, configValue(cs, "retention.ms"))
	}
	cs = api.TopicConfigState{}
	if code := controlCall(t, srv, "GET", "/v1/topics/orders/configs", "", &cs); code != http.StatusOK || cs.Topic != "orders" ||
		configValue(cs, "min.insync.replicas") != "3 DYNAMIC_TOPIC_CONFIG" || configValue(cs, "unclean.leader.election.enable") == "" {
		t.Fatalf("get configs: %d %+v", code, cs)
	}

	// Finding a group coordinator creates __consumer_offsets.
	adm.FindGroupCoordinators(ctx, "g")
	waitFor(t, 30*time.Second, "__consumer_offsets", func() bool { _, ok := c.Topic("__consumer_offsets"); return ok })

	for _, e := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/topics", `{"name":"orders"}`, http.StatusConflict, `TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.`},
		{"POST", "/v1/topics", `{"name":"x","configs":{"min.insync.replicas":"0"}}`, http.StatusBadRequest, "INVALID_CONFIG: Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{"POST", "/v1/topics", `{"name":"x","configs":{"no.such":"1"}}`, http.StatusBadRequest, `INVALID_CONFIG: Unknown topic config name: no.such`},
		{"POST", "/v1/topics", `{"name":"x","replication_factor":4}`, http.StatusBadRequest, "INVALID_REPLICATION_FACTOR"},
		{"POST", "/v1/topics", `{"name":"x","partitions":0}`, http.StatusBadRequest, "INVALID_PARTITIONS"},
		{"POST", "/v1/topics", `{"name":"bad/name"}`, http.StatusBadRequest, "INVALID_TOPIC_EXCEPTION"},
		{"POST", "/v1/topics", `{"name":"x","assignment":[[1,9]]}`, http.StatusNotFound, "unknown broker 9"},
		{"POST", "/v1/topics", `{"name":"x","assignment":[[1,2],[1]]}`, http.StatusBadRequest, "INVALID_REPLICA_ASSIGNMENT"},
		{"POST", "/v1/topics", `{"name":"x","partitions":1,"assignment":[[1]]}`, http.StatusBadRequest, `leave out "partitions"`},
		{"POST", "/v1/topics", `{"partitions":1}`, http.StatusBadRequest, `needs "name"`},
		{"POST", "/v1/topics", `{"Name":"x"}`, http.StatusBadRequest, `"Name"`},
		{"GET", "/v1/topics/nope", "", http.StatusNotFound, `unknown topic "nope"`},
		{"DELETE", "/v1/topics/nope", "", http.StatusNotFound, `unknown topic "nope"`},
		{"GET", "/v1/topics/nope/configs", "", http.StatusNotFound, `unknown topic "nope"`},
		{"PATCH", "/v1/topics/nope/configs", `{"set":{"retention.ms":"1"}}`, http.StatusNotFound, `unknown topic "nope"`},
		{"PATCH", "/v1/topics/orders/configs", `{"set":{"no.such":"1"}}`, http.StatusBadRequest, "INVALID_CONFIG: Unknown topic config name: no.such"},
		{"PATCH", "/v1/topics/orders/configs", `{"set":{"min.insync.replicas":"x"}}`, http.StatusBadRequest, "INVALID_CONFIG: Invalid value x for configuration min.insync.replicas: Not a number of type INT"},
		{"PATCH", "/v1/topics/orders/configs", `{}`, http.StatusBadRequest, `needs "set"`},
		{"DELETE", "/v1/topics/__consumer_offsets", "", http.StatusBadRequest, "internal topic"},
	} {
		var got struct {
			Error string `json:"error"`
		}
		if code := controlCall(t, srv, e.method, e.path, e.body, &got); code != e.status || !strings.Contains(got.Error, e.want) {
			t.Errorf("%s %s %s: %d %q, want %d with %q", e.method, e.path, e.body, code, got.Error, e.status, e.want)
		}
		if strings.Contains(got.Error, ".:") {
			t.Errorf("%s %s: doubled punctuation in %q", e.method, e.path, got.Error)
		}
	}

	ts = api.TopicState{}
	if code := controlCall(t, srv, "DELETE", "/v1/topics/placed", "", &ts); code != http.StatusOK || ts.Name != "placed" {
		t.Fatalf("delete: %d %+v", code, ts)
	}
	if _, ok := c.Topic("placed"); ok {
		t.Fatal("placed still exists after DELETE")
	}
	details, err = adm.ListTopics(ctx)
	if err != nil || details.Has("placed") || !details.Has("orders") {
		t.Fatalf("kadm after delete: %v, %v", details.Names(), err)
	}
}

func configValue(cs api.TopicConfigState, name string) string {
	for _, e := range cs.Configs {
		if e.Name == name {
			return e.Value + " " + e.Source
		}
	}
	return ""
}

// topicConfig is a config's value as DescribeConfigs reports it.
func topicConfig(t *testing.T, adm *kadm.Client, topic, name string) string {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs of %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}
