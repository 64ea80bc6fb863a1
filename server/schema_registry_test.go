package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The schema registry running in the cluster, through its REST API over
// real HTTP, its content in _schemas read back by a real consumer.

const srContentType = "application/vnd.schemaregistry.v1+json"

// example:schema-registry:start
func TestSchemaRegistryInTheCluster(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		SchemaRegistry:    &server.SchemaRegistryConfig{}, // Listen "127.0.0.1:0": a free port
		MinInsyncReplicas: 2,
	})
	url := c.SchemaRegistryURL() // what schema.registry.url takes: http://127.0.0.1:PORT
	schema := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	body, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := http.Post(url+"/subjects/orders-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var registered struct{ ID int }
	if err := json.NewDecoder(resp.Body).Decode(&registered); err != nil || resp.StatusCode != 200 {
		t.Fatalf("register: %s, %v", resp.Status, err)
	}
	if registered.ID != 1 {
		t.Fatalf("orders-value version 1 has id %d; ids start at 1", registered.ID)
	}
}

// example:schema-registry:end

func TestSchemaRegistryExampleInDocs(t *testing.T) {
	requireExampleInDocs(t, "schema_registry_test.go", "schema-registry", "../docs/schema-registry.md")
}

const orderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`

func orderV(n int) string {
	fields := `{"name":"id","type":"long"}`
	for i := 2; i <= n; i++ {
		fields += `,{"name":"f` + strconv.Itoa(i) + `","type":"string","default":""}`
	}
	return `{"type":"record","name":"Order","fields":[` + fields + `]}`
}

// srDo sends one request and returns the status and the body.
func srDo(t *testing.T, method, url, body string, auth ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", srContentType)
	}
	if len(auth) == 2 {
		req.SetBasicAuth(auth[0], auth[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// register registers schema under subject and returns its id.
func register(t *testing.T, url, subject, schema string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	status, got := srDo(t, http.MethodPost, url+"/subjects/"+subject+"/versions", string(body))
	var reg struct{ ID int }
	if status != 200 || json.Unmarshal([]byte(got), &reg) != nil || reg.ID < 1 {
		t.Fatalf("register %s: %d %s", subject, status, got)
	}
	return reg.ID
}

// idOf is the id GET /subjects/{s}/versions/{v} answers.
func idOf(t *testing.T, url, subject string, version int) int {
	t.Helper()
	status, got := srDo(t, http.MethodGet, url+"/subjects/"+subject+"/versions/"+strconv.Itoa(version), "")
	var v struct {
		Subject string
		Version int
		ID      int
	}
	if status != 200 || json.Unmarshal([]byte(got), &v) != nil || v.Subject != subject || v.Version != version {
		t.Fatalf("GET %s version %d: %d %s", subject, version, status, got)
	}
	return v.ID
}

// A registration is a record of _schemas in Confluent's format, which a
// consumer reads back; the schema reads back by id.
func TestSchemaRegistryRecordsInSchemasTopic(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	url := c.SchemaRegistryURL()
	id := register(t, url, "orders-value", orderV1)
	status, got := srDo(t, http.MethodGet, url+"/schemas/ids/"+strconv.Itoa(id), "")
	if status != 200 || !strings.Contains(got, `Order`) {
		t.Fatalf("GET /schemas/ids/%d: %d %s", id, status, got)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		for _, r := range fs.Records() {
			if r.Offset == 0 { // Confluent's store writes a NOOP at start
				if string(r.Key) != `{"keytype":"NOOP","magic":0}` || r.Value != nil {
					t.Fatalf("offset 0: %s %s", r.Key, r.Value)
				}
				continue
			}
			if want := `{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}`; string(r.Key) != want {
				t.Fatalf("key %s, want %s", r.Key, want)
			}
			var v struct {
				Subject string
				Version int
				ID      int
				Schema  string
				Deleted bool
			}
			if err := json.Unmarshal(r.Value, &v); err != nil || v.Subject != "orders-value" || v.Version != 1 || v.ID != id || v.Deleted ||
				!strings.Contains(v.Schema, `"name":"Order"`) {
				t.Fatalf("value %s: %v", r.Value, err)
			}
			return
		}
	}
}

// The _schemas leader crashes: what was registered reads back with the
// same ids from the new leader, and registering goes on there.
func TestSchemaRegistryLeaderFailover(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	url := c.SchemaRegistryURL()
	id1 := register(t, url, "orders-value", orderV1)
	id2 := register(t, url, "users-value", `"string"`)
	before, _ := c.Partition("_schemas", 0)
	if err := c.StopBroker(before.Leader, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	if after, _ := c.Partition("_schemas", 0); after.Leader == before.Leader || after.Leader < 0 {
		t.Fatalf("leader %d after crashing %d", after.Leader, before.Leader)
	}
	if got := idOf(t, url, "orders-value", 1); got != id1 {
		t.Fatalf("orders-value 1 has id %d after failover, %d before", got, id1)
	}
	if got := idOf(t, url, "users-value", 1); got != id2 {
		t.Fatalf("users-value 1 has id %d after failover, %d before", got, id2)
	}
	id3 := register(t, url, "orders-value", orderV(2))
	if id3 == id1 || id3 == id2 || idOf(t, url, "orders-value", 2) != id3 {
		t.Fatalf("id %d after failover (had %d and %d)", id3, id1, id2)
	}
	if again := register(t, url, "orders-value", orderV1); again != id1 {
		t.Fatalf("registering version 1 again: id %d, want %d", again, id1)
	}
}

// With a data dir, subjects, versions and ids survive a restart of the
// whole cluster, and the next id follows them.
func TestSchemaRegistryDataDirRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := server.Config{DataDir: dir, SchemaRegistry: &server.SchemaRegistryConfig{}}
	c1, err := server.NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := c1.SchemaRegistryURL()
	id1 := register(t, url, "orders-value", orderV1)
	id2 := register(t, url, "orders-value", orderV(2))
	c1.Close()

	c2 := server.NewTestCluster(t, cfg)
	url = c2.SchemaRegistryURL()
	status, got := srDo(t, http.MethodGet, url+"/subjects", "")
	if status != 200 || strings.TrimSpace(got) != `["orders-value"]` {
		t.Fatalf("subjects after restart: %d %s", status, got)
	}
	if idOf(t, url, "orders-value", 1) != id1 || idOf(t, url, "orders-value", 2) != id2 {
		t.Fatal("ids changed across the restart")
	}
	if id3 := register(t, url, "users-value", `"string"`); id3 <= id2 {
		t.Fatalf("new id %d after restart, ids so far %d and %d", id3, id1, id2)
	}
}

// Too few in-sync replicas of _schemas: a registration fails as
// Confluent's does after kafkastore.timeout.ms (500, error_code 50002),
// naming NOT_ENOUGH_REPLICAS; it succeeds once the ISR heals.
func TestSchemaRegistryNotEnoughReplicas(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	url := c.SchemaRegistryURL()
	ps, _ := c.Partition("_schemas", 0)
	var followers []int32
	for _, r := range ps.Replicas {
		if r.Broker != ps.Leader {
			followers = append(followers, r.Broker)
			if err := c.PauseReplica("_schemas", 0, r.Broker); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.SetISR("_schemas", 0, []int32{ps.Leader}); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"schema": orderV1})
	start := time.Now()
	status, got := srDo(t, http.MethodPost, url+"/subjects/orders-value/versions", string(body))
	took := time.Since(start)
	var e struct {
		ErrorCode int `json:"error_code"`
		Message   string
	}
	if status != 500 || json.Unmarshal([]byte(got), &e) != nil || e.ErrorCode != 50002 || !strings.Contains(e.Message, "NOT_ENOUGH_REPLICAS") {
		t.Fatalf("register with ISR [%d]: %d %s", ps.Leader, status, got)
	}
	if took < 500*time.Millisecond {
		t.Fatalf("answered after %v, before kafkastore.timeout.ms", took)
	}
	t.Logf("after %v: %d %s", took.Round(time.Millisecond), status, got)
	if status, got := srDo(t, http.MethodGet, url+"/subjects", ""); status != 200 || strings.TrimSpace(got) != "[]" {
		t.Fatalf("a failed registration left %d %s", status, got)
	}
	for _, f := range followers {
		if err := c.ResumeReplica("_schemas", 0, f); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, 10*time.Second, "the ISR of _schemas to heal", func() bool {
		ps, _ := c.Partition("_schemas", 0)
		return len(ps.ISR) == 3
	})
	register(t, url, "orders-value", orderV1)
}

// With SASL users the registry takes HTTP basic auth with one of them,
// as they are now (added and removed at runtime); without SASL, no auth.
func TestSchemaRegistryBasicAuth(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		SchemaRegistry: &server.SchemaRegistryConfig{},
		SASLUsers:      map[string]string{"alice": "alice-secret"},
	})
	url := c.SchemaRegistryURL() + "/subjects"
	unauthorized := func(what string, auth ...string) {
		t.Helper()
		status, got := srDo(t, http.MethodGet, url, "", auth...)
		var e struct {
			ErrorCode int `json:"error_code"`
		}
		if status != 401 || json.Unmarshal([]byte(got), &e) != nil || e.ErrorCode != 401 {
			t.Fatalf("%s: %d %s", what, status, got)
		}
	}
	unauthorized("no credentials")
	unauthorized("a wrong password", "alice", "nope")
	unauthorized("an unknown user", "bob", "bob-secret")
	if status, got := srDo(t, http.MethodGet, url, "", "alice", "alice-secret"); status != 200 {
		t.Fatalf("alice: %d %s", status, got)
	}
	if err := c.AddSASLUser("bob", "bob-secret"); err != nil {
		t.Fatal(err)
	}
	if status, got := srDo(t, http.MethodGet, url, "", "bob", "bob-secret"); status != 200 {
		t.Fatalf("bob once added: %d %s", status, got)
	}
	c.RemoveSASLUser("alice")
	unauthorized("alice removed", "alice", "alice-secret")

	// A user with only a SCRAM credential (AlterUserScramCredentials, as
	// kafka-configs --alter --add-config SCRAM-SHA-256=... makes one).
	adm := kadm.NewClient(testkit.NewClient(t, c))
	res, err := adm.AlterUserSCRAMs(context.Background(), nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "carol-secret"}})
	if err != nil || res.Error() != nil {
		t.Fatalf("AlterUserSCRAMs: %v %v", err, res.Error())
	}
	if status, got := srDo(t, http.MethodGet, url, "", "carol", "carol-secret"); status != 200 {
		t.Fatalf("carol (SCRAM only): %d %s", status, got)
	}
	unauthorized("carol with a wrong password", "carol", "alice-secret")

	open := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	if status, got := srDo(t, http.MethodGet, open.SchemaRegistryURL()+"/subjects", ""); status != 200 {
		t.Fatalf("without SASL: %d %s", status, got)
	}
}

// Off by default; Close closes the listener and leaves no goroutine of
// the registry behind.
func TestSchemaRegistryLifecycle(t *testing.T) {
	off := server.NewTestCluster(t, server.Config{})
	if off.SchemaRegistryURL() != "" || off.SchemaRegistry() != nil {
		t.Fatal("a registry without Config.SchemaRegistry")
	}
	if _, ok := off.Partition("_schemas", 0); ok {
		t.Fatal("_schemas created without a registry")
	}

	c, err := server.NewCluster(server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.SchemaRegistry() == nil {
		t.Fatal("no Registry")
	}
	url := c.SchemaRegistryURL()
	addr := strings.TrimPrefix(url, "http://")
	// A kept-alive connection open at Close.
	if status, _ := srDo(t, http.MethodGet, url+"/subjects", ""); status != 200 {
		t.Fatalf("GET /subjects: %d", status)
	}
	c.Close()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts after Close", addr)
	}
	buf := make([]byte, 1<<20)
	testkit.WaitFor(t, 5*time.Second, "the registry's goroutines to end after Close", func() bool {
		stacks := string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(stacks, "startSchemaRegistry") && !strings.Contains(stacks, "schemaregistry.(*Registry).ServeHTTP")
	})
}

// Compacting _schemas (superseded versions of a key, tombstones) changes
// nothing the registry answers after it loads the compacted log again on
// a new leader.
func TestSchemaRegistryCompactedLogReloads(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}, MinInsyncReplicas: 2})
	// Small segments, as only closed ones are compacted (Kafka's own
	// test-only config; its minimum segment.bytes is 1 MiB).
	if err := c.AlterTopicConfig("_schemas", map[string]string{"internal.segment.bytes": "300"}, nil); err != nil {
		t.Fatal(err)
	}
	url := c.SchemaRegistryURL()
	register(t, url, "orders-value", orderV1)
	register(t, url, "orders-value", orderV(2))
	register(t, url, "orders-value", orderV(3))
	register(t, url, "users-value", `"string"`)
	for _, q := range []string{"", "?permanent=true"} { // a soft delete rewrites the key, a hard one tombstones it
		if status, got := srDo(t, http.MethodDelete, url+"/subjects/orders-value/versions/1"+q, ""); status != 200 {
			t.Fatalf("DELETE version 1%s: %d %s", q, status, got)
		}
	}
	paths := []string{"/subjects", "/subjects/orders-value/versions", "/subjects/orders-value/versions/2", "/subjects/orders-value/versions/3",
		"/subjects/users-value/versions/1", "/subjects/orders-value/versions?deleted=true"}
	answers := func() []string {
		var out []string
		for _, p := range paths {
			status, got := srDo(t, http.MethodGet, url+p, "")
			out = append(out, strconv.Itoa(status)+" "+got)
		}
		return out
	}
	before := answers()
	if before[0] != `200 ["orders-value","users-value"]` || !strings.HasPrefix(before[1], "200 [2,3]") {
		t.Fatalf("before: %q", before)
	}
	rs, err := c.CleanTopic("_schemas")
	if err != nil || len(rs) != 1 || !rs[0].Compacted || rs[0].RecordsRemoved == 0 {
		t.Fatalf("CleanTopic: %+v, %v", rs, err)
	}
	ps, _ := c.Partition("_schemas", 0)
	if err := c.StopBroker(ps.Leader, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	after := answers()
	for i := range paths {
		if before[i] != after[i] {
			t.Errorf("GET %s: %s before, %s after compaction and failover", paths[i], before[i], after[i])
		}
	}
}

// No leader for _schemas: reads answer what was loaded, a registration
// fails after kafkastore.timeout.ms naming LEADER_NOT_AVAILABLE, and
// succeeds once a leader is back.
func TestSchemaRegistryNoLeader(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, SchemaRegistry: &server.SchemaRegistryConfig{}})
	url := c.SchemaRegistryURL()
	id := register(t, url, "orders-value", orderV1)
	if err := c.StopBroker(1, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	if got := idOf(t, url, "orders-value", 1); got != id {
		t.Fatalf("id %d without a leader, %d before", got, id)
	}
	body, _ := json.Marshal(map[string]string{"schema": orderV(2)})
	status, got := srDo(t, http.MethodPost, url+"/subjects/orders-value/versions", string(body))
	if status != 500 || !strings.Contains(got, `"error_code":50002`) || !strings.Contains(got, "LEADER_NOT_AVAILABLE") {
		t.Fatalf("register without a leader: %d %s", status, got)
	}
	if err := c.StartBroker(1); err != nil {
		t.Fatal(err)
	}
	if id2 := register(t, url, "orders-value", orderV(2)); id2 == id {
		t.Fatalf("version 2 got version 1's id %d", id)
	}
}

// A SASL listener that checks passwords (PLAIN, SCRAM) turns basic auth on
// even before any user exists; one with OAUTHBEARER alone has no passwords
// to check, and leaves the registry open.
func TestSchemaRegistryAuthFollowsSASLListeners(t *testing.T) {
	for _, c := range []struct {
		mechanisms []string
		want       int
	}{
		{nil, 401},
		{[]string{"OAUTHBEARER"}, 200},
	} {
		cl := server.NewTestCluster(t, server.Config{
			Brokers:        1,
			Listeners:      []server.Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
			SASLMechanisms: c.mechanisms,
			SchemaRegistry: &server.SchemaRegistryConfig{},
		})
		if status, got := srDo(t, http.MethodGet, cl.SchemaRegistryURL()+"/subjects", ""); status != c.want {
			t.Errorf("mechanisms %v: %d %s, want %d", c.mechanisms, status, got, c.want)
		}
	}
}

// A schema whose record is larger than the producer's max.request.size
// (1 MiB) is refused as Confluent refuses it (422, 42209), and nothing
// reaches _schemas.
func TestSchemaRegistrySchemaTooLarge(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
	url := c.SchemaRegistryURL()
	before, _ := c.Partition("_schemas", 0)
	big := `{"type":"record","name":"Big","doc":"` + strings.Repeat("x", 1<<20) + `","fields":[{"name":"id","type":"long"}]}`
	body, _ := json.Marshal(map[string]string{"schema": big})
	status, got := srDo(t, http.MethodPost, url+"/subjects/big-value/versions", string(body))
	if status != 422 || !strings.Contains(got, `"error_code":42209`) {
		t.Fatalf("register %d bytes: %d %.300s", len(big), status, got)
	}
	if after, _ := c.Partition("_schemas", 0); after.Replicas[0].LogEndOffset != before.Replicas[0].LogEndOffset {
		t.Fatalf("_schemas grew from %d to %d", before.Replicas[0].LogEndOffset, after.Replicas[0].LogEndOffset)
	}
	register(t, url, "small-value", orderV1) // and the next write goes on (after Confluent's NOOP)
}
