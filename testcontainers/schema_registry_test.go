package fakekafka_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The container's schema registry, through SchemaRegistryURL: a schema
// registered over its REST API reads back by id, and the registration is
// a record of the cluster's _schemas topic.
func TestSchemaRegistryInTheContainer(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	ctr := run(t)
	url, err := ctr.SchemaRegistryURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const ct = "application/vnd.schemaregistry.v1+json"
	body := `{"schema":"{\"type\":\"record\",\"name\":\"Order\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}"}`
	resp, err := http.Post(url+"/subjects/orders-value/versions", ct, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var reg struct{ ID int }
	if resp.StatusCode != 200 || json.Unmarshal(got, &reg) != nil || reg.ID < 1 {
		t.Fatalf("register: %s %s", resp.Status, got)
	}

	resp, err = http.Get(url + "/subjects/orders-value/versions/latest")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var latest struct {
		Subject string
		Version int
		ID      int
		Schema  string
	}
	if resp.StatusCode != 200 || json.Unmarshal(got, &latest) != nil || latest.Subject != "orders-value" || latest.Version != 1 ||
		latest.ID != reg.ID || !strings.Contains(latest.Schema, `"name":"Order"`) {
		t.Fatalf("latest: %s %s", resp.Status, got)
	}

	brokers, err := ctr.Brokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		for _, r := range fs.Records() {
			if strings.Contains(string(r.Key), `"keytype":"SCHEMA"`) && strings.Contains(string(r.Key), `"subject":"orders-value"`) {
				return
			}
		}
	}
}
