package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// TestSchemaRegistryClients runs each client's schema registry scenario
// (process_registry.go) against fakekafka's registry: confluent-kafka's
// SchemaRegistryClient with AvroSerializer and AvroDeserializer (Python),
// @kafkajs/confluent-schema-registry with kafkajs, and Spring Cloud
// Stream's ConfluentSchemaRegistryClient with Apache Avro and
// kafka-clients (Java). Each registers two
// compatible versions as it produces, gets its own error with status 409
// for an incompatible third, and reads both records on either version.
// It runs when MATRIX_CLIENTS selects the client (CI's "langs" step); an
// adapter that is not installed fails it unless MATRIX_SKIP_ABSENT is set.
func TestSchemaRegistryClients(t *testing.T) {
	for _, tc := range []struct {
		client  Client
		run     Process
		refused AdapterError // the client's error for the incompatible version: name, status, code
		// subjectConfig is the subject's own compatibility afterwards: ""
		// for none (40408).
		subjectConfig string
	}{
		{ConfluentPython, RegistryPython, AdapterError{Name: "SchemaRegistryError", Status: 409, Code: 409}, ""},
		// kafkajs's register sets the subject's level on its first
		// registration (PUT /config/users-value).
		{KafkaJS, RegistryKafkaJS, AdapterError{Name: "ResponseError", Status: 409}, "BACKWARD"},
		// The Spring client wraps the HTTP error in a RuntimeException; its
		// cause is spring-web's HttpClientErrorException.Conflict.
		{KafkaClients, RegistryJava, AdapterError{Name: "Conflict", Status: 409, Code: 409}, ""},
	} {
		t.Run(tc.client.Name(), func(t *testing.T) {
			requireLangCell(t, tc.client, tc.run)
			c := server.NewTestCluster(t, server.Config{SchemaRegistry: &server.SchemaRegistryConfig{}})
			must(t, c.CreateTopic("users", 1, 3, nil))
			url := c.SchemaRegistryURL()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			got, err := tc.run.SchemaRegistryAvro(ctx, c.Bootstrap(), url, "users")
			must(t, err)

			// The ids in the records are the registry's for versions 1 and
			// 2; the refused version was not registered.
			var versions []int
			registryGet(t, url+"/subjects/users-value/versions", &versions)
			if !slices.Equal(versions, []int{1, 2}) {
				t.Fatalf("versions of users-value: %v, want [1 2]", versions)
			}
			var ids []int
			for v := 1; v <= 2; v++ {
				var sv struct{ ID int }
				registryGet(t, fmt.Sprintf("%s/subjects/users-value/versions/%d", url, v), &sv)
				ids = append(ids, sv.ID)
			}
			if !slices.Equal(got.IDs, ids) || ids[0] == ids[1] {
				t.Errorf("ids in the records: %v; the registry's versions 1 and 2: %v", got.IDs, ids)
			}

			status, body := registryAnswer(t, url+"/config/users-value")
			var cfg struct {
				Level string `json:"compatibilityLevel"`
				Code  int    `json:"error_code"`
			}
			must(t, json.Unmarshal(body, &cfg))
			if tc.subjectConfig == "" && (status != http.StatusNotFound || cfg.Code != 40408) || tc.subjectConfig != "" && (status != http.StatusOK || cfg.Level != tc.subjectConfig) {
				t.Errorf("users-value's own config: %d %s, want %q (none: 40408)", status, body, tc.subjectConfig)
			}

			if r := got.Refused; r == nil || r.Name != tc.refused.Name || r.Status != tc.refused.Status || r.Code != tc.refused.Code {
				t.Errorf("the incompatible version: %+v, want %s with status %d code %d", r, tc.refused.Name, tc.refused.Status, tc.refused.Code)
			}

			want := map[string][]string{
				"v2": {`{"name":"ada","age":36,"email":"unknown"}`, `{"name":"alan","age":41,"email":"alan@example.com"}`},
				"v1": {`{"name":"ada","age":36}`, `{"name":"alan","age":41}`},
			}
			for reader, values := range want {
				if len(got.Decoded[reader]) != len(values) {
					t.Errorf("reader %s decoded %d records, want %d", reader, len(got.Decoded[reader]), len(values))
					continue
				}
				for i, w := range values {
					if !sameJSON(t, got.Decoded[reader][i], w) {
						t.Errorf("reader %s, record %d: %s, want %s", reader, i, got.Decoded[reader][i], w)
					}
				}
			}
		})
	}
}

// requireLangCell skips a test of client unless MATRIX_CLIENTS selects it,
// and fails it when run, its program, is not installed unless
// MATRIX_SKIP_ABSENT is set.
func requireLangCell(t *testing.T, client Client, run Process) {
	t.Helper()
	sel, err := selectClients(Clients(), os.Getenv("MATRIX_CLIENTS"))
	must(t, err)
	if !slices.ContainsFunc(sel, func(c Client) bool { return c.Name() == client.Name() }) {
		t.Skipf("MATRIX_CLIENTS does not select %s (MATRIX_CLIENTS=langs runs it)", client.Name())
	}
	if err := run.Available(); err != nil {
		if os.Getenv("MATRIX_SKIP_ABSENT") != "" {
			t.Skipf("MATRIX_SKIP_ABSENT: %v", err)
		}
		t.Fatalf("%v (MATRIX_SKIP_ABSENT=1 skips it)", err)
	}
}

// registryGet decodes the registry's JSON answer to a GET of url.
func registryGet(t *testing.T, url string, into any) {
	t.Helper()
	status, body := registryAnswer(t, url)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	must(t, json.Unmarshal(body, into))
}

// registryAnswer is the registry's status and body for a GET of url.
func registryAnswer(t *testing.T, url string) (int, []byte) {
	t.Helper()
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get(url)
	must(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, body
}

// sameJSON says whether got and want are the same JSON value.
func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return false
	}
	must(t, json.Unmarshal([]byte(want), &w))
	return reflect.DeepEqual(g, w)
}
