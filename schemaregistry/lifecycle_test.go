package schemaregistry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func record(fields string) string { return `{"type":"record","name":"R","fields":[` + fields + `]}` }

func TestCompatibility(t *testing.T) {
	c := newClient(t)
	c.register("u", avroBody(userV1))
	want409 := `{"error_code":409,"message":"Schema being registered is incompatible with an earlier schema for subject \"u\", details: [` +
		`{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'age' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'age'}, ` +
		`{oldSchemaVersion: 1}, {oldSchema: '` + strings.ReplaceAll(userV1, `"`, `\"`) + `'}, {validateFields: 'false', compatibility: 'BACKWARD'}]"}`
	c.expect("POST", "/subjects/u/versions", avroBody(userBad), 409, want409)
	obs := c.observed()
	if last := obs[len(obs)-1]; last.Kind != SchemaIncompatible || last.Subject != "u" || len(last.Messages) != 4 {
		t.Fatalf("observed %+v", last)
	}
	c.expect("POST", "/compatibility/subjects/u/versions/latest", avroBody(userBad), 200, `{"is_compatible":false}`)
	c.expect("POST", "/compatibility/subjects/u/versions/1?verbose=true", avroBody(userV2), 200, `{"is_compatible":true,"messages":[]}`)
	c.expect("POST", "/compatibility/subjects/u/versions?verbose=true", avroBody(userBad), 200,
		`{"is_compatible":false,"messages":["{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'age' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'age'}","{oldSchemaVersion: 1}","{oldSchema: '`+strings.ReplaceAll(userV1, `"`, `\"`)+`'}","{validateFields: 'false', compatibility: 'BACKWARD'}"]}`)
	// No subject yet: anything is compatible with "latest".
	c.expect("POST", "/compatibility/subjects/new/versions/latest", avroBody(userBad), 200, `{"is_compatible":true}`)
	c.expect("POST", "/compatibility/subjects/u/versions/latest?verbose=true", avroBody(`{"type":"record"}`), 200,
		`{"is_compatible":false,"messages":["Invalid schema {subject=u,version=0,id=-1,schemaType=AVRO,references=[],metadata=null,ruleSet=null,schema={\"type\":\"record\"}}, details: invalid Avro schema: avro: non-empty name key required"]}`)

	// FORWARD: the old schema must read the new one; removing a field
	// without default breaks it.
	c.expect("PUT", "/config/u", `{"compatibility":"FORWARD"}`, 200, `{"compatibility":"FORWARD"}`)
	removed := `{"type":"record","name":"User","namespace":"com.acme","fields":[]}`
	status, body := c.register("u", avroBody(removed))
	if status != 409 || !strings.Contains(body, `The field 'id' at path '/fields/0' in the old schema has no default value and is missing in the new schema`) ||
		!strings.Contains(body, `compatibility: 'FORWARD'`) {
		t.Fatalf("FORWARD: %d %s", status, body)
	}
	// NONE lets it through.
	c.expect("PUT", "/config/u", `{"compatibility":"none"}`, 200, `{"compatibility":"NONE"}`)
	if status, body := c.register("u", avroBody(removed)); status != 200 || !strings.HasPrefix(body, `{"id":2,"version":2,`) {
		t.Fatalf("NONE: %d %s", status, body)
	}
}

// The _TRANSITIVE levels check every version, the others the latest only.
func TestCompatibilityTransitive(t *testing.T) {
	c := newClient(t)
	c.expect("PUT", "/config/t", `{"compatibility":"BACKWARD"}`, 200, `{"compatibility":"BACKWARD"}`)
	v1 := record(`{"name":"a","type":"int"}`)
	v2 := record(`{"name":"a","type":"int"},{"name":"b","type":"int","default":0}`)
	v3 := record(`{"name":"b","type":"int","default":0}`)
	for _, s := range []string{v1, v2, v3} {
		if status, body := c.register("t", avroBody(s)); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
	}
	// A reader needing a field only v1 lacks: fails against v1 only.
	needsB := record(`{"name":"b","type":"int"}`)
	c.expect("POST", "/compatibility/subjects/t/versions", avroBody(needsB), 200, `{"is_compatible":true}`)
	c.expect("PUT", "/config/t", `{"compatibility":"BACKWARD_TRANSITIVE"}`, 200, `{"compatibility":"BACKWARD_TRANSITIVE"}`)
	status, body := c.do("POST", "/compatibility/subjects/t/versions?verbose=true", avroBody(needsB))
	if status != 200 || !strings.Contains(body, `"is_compatible":false`) || !strings.Contains(body, `{oldSchemaVersion: 1}`) ||
		!strings.Contains(body, `compatibility: 'BACKWARD_TRANSITIVE'`) {
		t.Fatalf("transitive: %d %s", status, body)
	}
	// FULL_TRANSITIVE with the same schema is compatible with itself.
	c.expect("PUT", "/config/t", `{"compatibility":"FULL_TRANSITIVE"}`, 200, `{"compatibility":"FULL_TRANSITIVE"}`)
	c.expect("POST", "/compatibility/subjects/t/versions/3", avroBody(v3), 200, `{"is_compatible":true}`)
}

func TestConfig(t *testing.T) {
	c := newClient(t)
	c.expect("GET", "/config", "", 200, `{"compatibilityLevel":"BACKWARD"}`)
	c.expect("GET", "/config/s", "", 404, `{"error_code":40408,"message":"Subject 's' does not have subject-level compatibility configured"}`)
	c.expect("GET", "/config/s?defaultToGlobal=true", "", 200, `{"compatibilityLevel":"BACKWARD"}`)
	c.expect("PUT", "/config", `{"compatibility":"SIDEWAYS"}`, 422, `{"error_code":42203,"message":"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive"}`)
	c.expect("PUT", "/config", `{"compatibility":"FULL_TRANSITIVE"}`, 200, `{"compatibility":"FULL_TRANSITIVE"}`)
	c.expect("GET", "/config", "", 200, `{"compatibilityLevel":"FULL_TRANSITIVE"}`)
	c.expect("GET", "/config/s?defaultToGlobal=true", "", 200, `{"compatibilityLevel":"FULL_TRANSITIVE"}`)
	c.expect("PUT", "/config/s", `{"compatibility":"FORWARD","normalize":true}`, 200, `{"compatibility":"FORWARD","normalize":true}`)
	c.expect("GET", "/config/s", "", 200, `{"compatibilityLevel":"FORWARD","normalize":true}`)
	c.expect("DELETE", "/config/s", "", 200, `{"compatibilityLevel":"FORWARD","normalize":true}`)
	c.expect("DELETE", "/config/s", "", 404, `{"error_code":40401,"message":"Subject 's' not found."}`)
	c.expect("DELETE", "/config", "", 200, `{"compatibilityLevel":"FULL_TRANSITIVE"}`)
	c.expect("GET", "/config", "", 200, `{"compatibilityLevel":"BACKWARD"}`)
	var kinds []string
	for _, ch := range c.observed() {
		kinds = append(kinds, string(ch.Kind)+":"+ch.Subject)
	}
	if want := []string{"schema_config_changed:", "schema_config_changed:s", "schema_config_changed:s", "schema_config_changed:"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("observed %v, want %v", kinds, want)
	}
	// The records are Confluent's: a global key has "subject":null.
	recs := c.store.Records()
	if got := string(recs[0].Key); got != `{"keytype":"CONFIG","subject":null,"magic":0}` {
		t.Fatalf("global config key %s", got)
	}
	if got := string(recs[0].Value); got != `{"compatibilityLevel":"FULL_TRANSITIVE"}` {
		t.Fatalf("global config value %s", got)
	}
	if got := string(recs[1].Key) + " " + string(recs[1].Value); got != `{"keytype":"CONFIG","subject":"s","magic":0} {"subject":"s","compatibilityLevel":"FORWARD","normalize":true}` {
		t.Fatalf("subject config record %s", got)
	}
	if recs[2].Value != nil || recs[3].Value != nil {
		t.Fatal("config deletes are not tombstones")
	}
}

func TestNormalize(t *testing.T) {
	c := newClient(t)
	a := `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}],"z":1,"b":2}`
	b := `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}],"b":2,"z":1}`
	c.expect("POST", "/subjects/n/versions?normalize=true", avroBody(a), 200, `{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(b)+`}`)
	c.expect("POST", "/subjects/n/versions?normalize=true", avroBody(b), 200, `{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(b)+`}`)
	c.expect("POST", "/subjects/n?normalize=true", avroBody(a), 200, `{"subject":"n","version":1,"id":1,"schemaType":"AVRO","schema":`+jsonString(b)+`}`)
	// Without normalize the other order is another schema.
	c.expect("POST", "/subjects/n", avroBody(a), 404, `{"error_code":40403,"message":"Schema not found"}`)
	// A config with normalize=true normalises every request.
	c.expect("PUT", "/config/m", `{"normalize":true}`, 200, `{"normalize":true}`)
	c.expect("POST", "/subjects/m/versions", avroBody(a), 200, `{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(b)+`}`)
}

func TestMode(t *testing.T) {
	c := newClient(t)
	c.expect("GET", "/mode", "", 200, `{"mode":"READWRITE"}`)
	c.expect("GET", "/mode/s", "", 404, `{"error_code":40409,"message":"Subject 's' does not have subject-level mode configured"}`)
	c.expect("GET", "/mode/s?defaultToGlobal=true", "", 200, `{"mode":"READWRITE"}`)
	c.expect("PUT", "/mode", `{"mode":"SLEEPY"}`, 422, `{"error_code":42204,"message":"Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD."}`)
	c.register("s", avroBody(userV1))
	c.expect("PUT", "/mode/s", `{"mode":"READONLY"}`, 200, `{"mode":"READONLY"}`)
	c.expect("POST", "/subjects/s/versions", avroBody(userV2), 422, `{"error_code":42205,"message":"Subject s in context . is in read-only mode"}`)
	c.expect("DELETE", "/subjects/s/versions/1", "", 422, `{"error_code":42205,"message":"Subject s in context . is in read-only mode"}`)
	c.expect("PUT", "/config/s", `{"compatibility":"NONE"}`, 422, `{"error_code":42205,"message":"Subject s in context . is in read-only mode"}`)
	// Reads still work; another subject is still writable.
	c.expect("GET", "/subjects/s/versions", "", 200, `[1]`)
	if status, _ := c.register("other", avroBody(userV1)); status != 200 {
		t.Fatalf("other subject: %d", status)
	}
	c.expect("DELETE", "/mode/s", "", 200, `{"mode":"READONLY"}`)
	c.expect("DELETE", "/mode/s", "", 404, `{"error_code":40401,"message":"Subject 's' not found."}`)

	// IMPORT needs an empty registry (or subject), then takes ids and versions.
	c.expect("PUT", "/mode", `{"mode":"IMPORT"}`, 422, `{"error_code":42205,"message":"Cannot import since found existing subjects"}`)
	c.expect("PUT", "/mode/imp", `{"mode":"IMPORT"}`, 200, `{"mode":"IMPORT"}`)
	c.expect("POST", "/subjects/imp/versions", avroBody(userV1), 422, `{"error_code":42205,"message":"Subject imp in context . is not in read-write mode"}`)
	c.expect("POST", "/subjects/imp/versions", `{"schema":`+jsonString(userV2)+`,"id":100,"version":7}`, 200,
		`{"id":100,"version":7,"schemaType":"AVRO","schema":`+jsonString(userV2)+`}`)
	// An id is never given to another schema.
	c.expect("POST", "/subjects/imp/versions", `{"schema":"\"string\"","id":100,"version":8}`, 422,
		`{"error_code":42205,"message":"Overwrite new schema with id 100 in context . is not permitted."}`)
	c.expect("POST", "/subjects/s/versions", `{"schema":"\"string\"","id":5}`, 422, `{"error_code":42205,"message":"Subject s in context . is not in import mode"}`)
	c.expect("PUT", "/mode/imp", `{"mode":"READWRITE"}`, 200, `{"mode":"READWRITE"}`)
	// New ids follow the highest imported one.
	c.expect("POST", "/subjects/imp/versions", avroBody(`{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"int"},{"name":"email","type":["null","string"],"default":null},{"name":"n","type":"int","default":1}]}`), 200,
		`{"id":101,"version":8,"schemaType":"AVRO","schema":"{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"id\",\"type\":\"int\"},{\"name\":\"email\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"n\",\"type\":\"int\",\"default\":1}]}"}`)
}

func TestDeletes(t *testing.T) {
	c := newClient(t)
	c.register("s", avroBody(userV1))
	c.register("s", avroBody(userV2))
	c.expect("DELETE", "/subjects/s/versions/1?permanent=true", "", 404, `{"error_code":40407,"message":"Subject 's' Version 1 was not deleted first before being permanently deleted"}`)
	c.expect("DELETE", "/subjects/s/versions/1", "", 200, `1`)
	c.expect("DELETE", "/subjects/s/versions/1", "", 404, `{"error_code":40406,"message":"Subject 's' Version 1 was soft deleted.Set permanent=true to delete permanently"}`)
	c.expect("GET", "/subjects/s/versions", "", 200, `[2]`)
	c.expect("GET", "/subjects/s/versions?deleted=true", "", 200, `[1,2]`)
	c.expect("GET", "/subjects/s/versions/1", "", 404, `{"error_code":40402,"message":"Version 1 not found."}`)
	c.expect("GET", "/subjects/s/versions/1?deleted=true", "", 200, `{"subject":"s","version":1,"id":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("POST", "/subjects/s", avroBody(userV1), 404, `{"error_code":40403,"message":"Schema not found"}`)
	c.expect("POST", "/subjects/s?deleted=true", avroBody(userV1), 200, `{"subject":"s","version":1,"id":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	// The schema keeps its id by id.
	c.expect("GET", "/schemas/ids/1", "", 200, `{"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("DELETE", "/subjects/s?permanent=true", "", 404, `{"error_code":40405,"message":"Subject 's' was not deleted first before being permanently deleted"}`)
	c.expect("DELETE", "/subjects/s", "", 200, `[2]`)
	c.expect("DELETE", "/subjects/s", "", 404, `{"error_code":40404,"message":"Subject 's' was soft deleted.Set permanent=true to delete permanently"}`)
	c.expect("GET", "/subjects", "", 200, `[]`)
	c.expect("GET", "/subjects?deleted=true", "", 200, `["s"]`)
	c.expect("GET", "/subjects/s/versions", "", 404, `{"error_code":40401,"message":"Subject 's' not found."}`)
	// Registering again after a soft delete continues the versions and keeps the id.
	c.expect("POST", "/subjects/s/versions", avroBody(userV1), 200, `{"id":1,"version":3,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	c.expect("GET", "/subjects/s/versions?deleted=true", "", 200, `[2,3]`) // version 1 (same id) was tombstoned
	c.expect("DELETE", "/subjects/s/versions/latest", "", 200, `3`)
	c.expect("DELETE", "/subjects/s/versions/2?permanent=true", "", 200, `2`)
	c.expect("PUT", "/config/s", `{"compatibility":"NONE"}`, 200, `{"compatibility":"NONE"}`)
	c.expect("DELETE", "/subjects/s?permanent=true", "", 200, `[3]`)
	c.expect("GET", "/subjects?deleted=true", "", 200, `[]`)
	c.expect("DELETE", "/subjects/s", "", 404, `{"error_code":40401,"message":"Subject 's' not found."}`)
	// The subject's config went with its last version.
	c.expect("GET", "/config/s", "", 404, `{"error_code":40408,"message":"Subject 's' does not have subject-level compatibility configured"}`)
	c.expect("GET", "/schemas/ids/1", "", 404, `{"error_code":40403,"message":"Schema 1 not found"}`)
	// Ids are never reused.
	c.expect("POST", "/subjects/s/versions", avroBody(`"string"`), 200, `{"id":3,"version":1,"schemaType":"AVRO","schema":"\"string\""}`)

	var got []string
	for _, ch := range c.observed() {
		if ch.Kind == SchemaDeleted {
			got = append(got, sprintf("%s/%d/%d/%t", ch.Subject, ch.Version, ch.ID, ch.Permanent))
		}
	}
	want := []string{"s/1/1/false", "s/2/2/false", "s/3/1/false", "s/2/2/true", "s/3/1/true"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("observed deletions %v, want %v", got, want)
	}
}

func TestReferences(t *testing.T) {
	c := newClient(t)
	addr := `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]}`
	c.expect("POST", "/subjects/address/versions", avroBody(addr), 200, `{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(addr)+`}`)
	order := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"com.acme.Address"}]}`
	orderCanon := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"ship","type":"Address"}]}`
	body := `{"schema":` + jsonString(order) + `,"references":[{"name":"com.acme.Address","subject":"address","version":1}]}`
	refs := `"references":[{"name":"com.acme.Address","subject":"address","version":1}]`
	c.expect("POST", "/subjects/order/versions", body, 200, `{"id":2,"version":1,"schemaType":"AVRO",`+refs+`,"schema":`+jsonString(orderCanon)+`}`)
	c.expect("GET", "/subjects/order/versions/1", "", 200, `{"subject":"order","version":1,"id":2,"schemaType":"AVRO",`+refs+`,"schema":`+jsonString(orderCanon)+`}`)
	c.expect("GET", "/schemas/ids/2", "", 200, `{"schemaType":"AVRO","schema":`+jsonString(orderCanon)+`,`+refs+`}`)
	c.expect("POST", "/subjects/order", body, 200, `{"subject":"order","version":1,"id":2,"schemaType":"AVRO",`+refs+`,"schema":`+jsonString(orderCanon)+`}`)
	c.expect("GET", "/subjects/address/versions/1/referencedby", "", 200, `[2]`)
	c.expect("GET", "/subjects/order/versions/1/referencedby", "", 200, `[]`)
	// A reference to "latest" (-1) is stored as the version it resolved to.
	c.expect("POST", "/subjects/order2/versions", `{"schema":`+jsonString(order)+`,"references":[{"name":"com.acme.Address","subject":"address","version":-1}]}`, 200,
		`{"id":2,"version":1,"schemaType":"AVRO",`+refs+`,"schema":`+jsonString(orderCanon)+`}`)
	// Without its reference the schema is invalid.
	status, got := c.register("order3", avroBody(order))
	if status != 422 || !strings.HasPrefix(got, `{"error_code":42201,"message":"Invalid schema {subject=order3,`) {
		t.Fatalf("missing reference: %d %s", status, got)
	}
	// A referenced schema cannot be deleted.
	c.expect("DELETE", "/subjects/address/versions/1", "", 422, `{"error_code":42206,"message":"One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=address,version=1}."}`)
	c.expect("DELETE", "/subjects/address", "", 422, `{"error_code":42206,"message":"One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=address,version=1}."}`)
	c.expect("DELETE", "/subjects/order", "", 200, `[1]`)
	c.expect("DELETE", "/subjects/order2", "", 200, `[1]`)
	// Soft-deleted referrers still hold it against a hard delete.
	c.expect("DELETE", "/subjects/address", "", 200, `[1]`)
	c.expect("DELETE", "/subjects/address?permanent=true", "", 422, `{"error_code":42206,"message":"One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=address,version=1}."}`)
	c.expect("DELETE", "/subjects/order?permanent=true", "", 200, `[1]`)
	c.expect("DELETE", "/subjects/order2?permanent=true", "", 200, `[1]`)
	c.expect("DELETE", "/subjects/address?permanent=true", "", 200, `[1]`)
}

func TestStoreFailure(t *testing.T) {
	store := NewMemStore()
	c := newClientWith(t, store, Options{})
	store.Fail = func([]Record) error {
		return errors.New("NOT_ENOUGH_REPLICAS: 1 in-sync replica of 3, min.insync.replicas=2")
	}
	c.expect("POST", "/subjects/s/versions", avroBody(userV1), 500,
		`{"error_code":50001,"message":"Register schema operation failed while writing to the Kafka store: NOT_ENOUGH_REPLICAS: 1 in-sync replica of 3, min.insync.replicas=2"}`)
	store.Fail = func([]Record) error { return context.DeadlineExceeded }
	c.expect("PUT", "/config", `{"compatibility":"NONE"}`, 500, `{"error_code":50002,"message":"Update compatibility level operation timed out: context deadline exceeded"}`)
	// Nothing of a failed write is applied; once healed it succeeds.
	c.expect("GET", "/subjects", "", 200, `[]`)
	store.Fail = nil
	c.expect("POST", "/subjects/s/versions", avroBody(userV1), 200, `{"id":1,"version":1,"schemaType":"AVRO","schema":`+jsonString(userV1)+`}`)
	if n := len(c.observed()); n != 1 {
		t.Fatalf("%d changes observed, want 1 (failed writes are not changes)", n)
	}
}
