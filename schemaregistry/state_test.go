package schemaregistry

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

func rec(key, value string) Record {
	r := Record{Key: []byte(key)}
	if value != "" {
		r.Value = []byte(value)
	}
	return r
}

// Records as Confluent's registry writes them to _schemas, old (no
// schemaType) and new, replay into the same state.
func TestReplayConfluentRecords(t *testing.T) {
	s := NewState()
	for i, r := range []Record{
		rec(`{"keytype":"NOOP","magic":0}`, ""),
		rec(`{"keytype":"SCHEMA","subject":"test","version":1,"magic":1}`, `{"subject":"test","version":1,"id":1,"schema":"\"string\"","deleted":false}`),
		rec(`{"keytype":"SCHEMA","subject":"test","version":2,"magic":1}`, `{"subject":"test","version":2,"id":2,"schemaType":"AVRO","schema":"\"long\"","deleted":false}`),
		rec(`{"keytype":"SCHEMA","subject":"other","version":1,"magic":1}`, `{"subject":"other","version":1,"id":1,"md5":"x","schema":"\"string\"","deleted":false}`),
		rec(`{"keytype":"SCHEMA","subject":"p","version":1,"magic":1}`, `{"subject":"p","version":1,"id":3,"schemaType":"PROTOBUF","references":[{"name":"a.proto","subject":"a","version":1}],"schema":"syntax = \"proto3\";","deleted":false}`),
		rec(`{"keytype":"CONFIG","subject":null,"magic":0}`, `{"compatibilityLevel":"FULL"}`),
		rec(`{"keytype":"CONFIG","subject":"test","magic":0}`, `{"subject":"test","compatibilityLevel":"NONE","normalize":true}`),
		rec(`{"keytype":"MODE","subject":"test","magic":0}`, `{"subject":"test","mode":"READONLY"}`),
		rec(`{"keytype":"MODE","subject":null,"magic":0}`, `{"mode":"IMPORT"}`),
		rec(`{"keytype":"CONTEXT","tenant":"default","context":".ctx","magic":0}`, `{"tenant":"default","context":".ctx"}`),
		rec(`{"keytype":"DELETE_SUBJECT","subject":"test","magic":0}`, `{"subject":"test","version":1}`),
		rec(`{"keytype":"MODE","subject":null,"magic":0}`, ""),
	} {
		if err := s.Replay(r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if got := s.Subjects(false); !reflect.DeepEqual(got, []string{"other", "p", "test"}) {
		t.Fatalf("subjects %v", got)
	}
	want := []SubjectVersion{
		{Subject: "test", Version: 1, ID: 1, SchemaType: schema.Avro, Schema: `"string"`, Deleted: true},
		{Subject: "test", Version: 2, ID: 2, SchemaType: schema.Avro, Schema: `"long"`},
	}
	if got := s.Versions("test", true); !reflect.DeepEqual(got, want) {
		t.Fatalf("versions\n got %+v\nwant %+v", got, want)
	}
	if got, _ := s.Version("p", 1); !reflect.DeepEqual(got.References, []schema.Reference{{Name: "a.proto", Subject: "a", Version: 1}}) || got.SchemaType != schema.Protobuf {
		t.Fatalf("p v1 %+v", got)
	}
	if got, ok := s.SchemaByID(1); !ok || got.Subject != "other" || got.Deleted {
		t.Fatalf("id 1 is %+v (the version not deleted first)", got)
	}
	if c, _ := s.Config(""); c.CompatibilityLevel != "FULL" {
		t.Fatalf("global config %+v", c)
	}
	if c, _ := s.Config("test"); c.CompatibilityLevel != "NONE" || c.Normalize == nil || !*c.Normalize {
		t.Fatalf("subject config %+v", c)
	}
	if m, ok := s.Mode("test"); !ok || m != "READONLY" {
		t.Fatalf("subject mode %q", m)
	}
	if _, ok := s.Mode(""); ok {
		t.Fatal("the global mode's tombstone left it set")
	}
	if s.MaxID() != 3 {
		t.Fatalf("max id %d", s.MaxID())
	}

	// A tombstone hard-deletes; CLEAR_SUBJECT drops soft-deleted versions.
	for _, r := range []Record{
		rec(`{"keytype":"SCHEMA","subject":"test","version":2,"magic":1}`, ""),
		rec(`{"keytype":"CLEAR_SUBJECT","subject":"test","magic":0}`, `{"subject":"test"}`),
		rec(`{"keytype":"CONFIG","subject":"test","magic":0}`, ""),
	} {
		if err := s.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Versions("test", true); len(got) != 0 {
		t.Fatalf("test still has %+v", got)
	}
	if _, ok := s.Config("test"); ok {
		t.Fatal("config tombstone ignored")
	}
	if s.MaxID() != 3 {
		t.Fatal("the max id went down: ids would be reused")
	}

	// What cannot be read is an error and changes nothing.
	for _, r := range []Record{
		rec(`not json`, ""),
		rec(`{"keytype":"SCHEMA","subject":"x","magic":1}`, `{}`),
		rec(`{"keytype":"SCHEMA","subject":"x","version":1,"magic":1}`, `{"id":"one"}`),
		// id 1 is already another schema's
		rec(`{"keytype":"SCHEMA","subject":"x","version":1,"magic":1}`, `{"subject":"x","version":1,"id":1,"schema":"\"int\"","deleted":false}`),
	} {
		if err := s.Replay(r); err == nil {
			t.Errorf("%s / %s replayed", r.Key, r.Value)
		}
	}
	if s.hasSubject("x", true) {
		t.Fatal("a refused record was applied")
	}
}

// The records the registry writes are Confluent's, byte for byte.
func TestRecordFormat(t *testing.T) {
	c := newClient(t)
	c.register("s", avroBody(`"string"`))
	c.do("DELETE", "/subjects/s/versions/1", "")
	c.register("s", avroBody(`"long"`))
	c.do("DELETE", "/subjects/s", "")
	c.do("PUT", "/mode/s", `{"mode":"READONLY"}`)
	var got []string
	for _, r := range c.store.Records() {
		got = append(got, string(r.Key)+" "+string(r.Value))
	}
	want := []string{
		`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1} {"subject":"s","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":false}`,
		`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1} {"subject":"s","version":1,"id":1,"schemaType":"AVRO","schema":"\"string\"","deleted":true}`,
		`{"keytype":"SCHEMA","subject":"s","version":2,"magic":1} {"subject":"s","version":2,"id":2,"schemaType":"AVRO","schema":"\"long\"","deleted":false}`,
		`{"keytype":"DELETE_SUBJECT","subject":"s","magic":0} {"subject":"s","version":2}`,
		`{"keytype":"MODE","subject":"s","magic":0} {"subject":"s","mode":"READONLY"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records\n got %q\nwant %q", got, want)
	}
	if got := string(NoopRecord().Key); got != `{"keytype":"NOOP","magic":0}` {
		t.Fatal(got)
	}
	if r := ClearSubjectRecord(""); string(r.Key) != `{"keytype":"CLEAR_SUBJECT","subject":null,"magic":0}` || string(r.Value) != `{}` {
		t.Fatalf("%s %s", r.Key, r.Value)
	}
}

// A registry over a fresh state replayed from the records answers as the
// one that wrote them.
func TestReplayGivesSameAnswers(t *testing.T) {
	c := newClient(t)
	addr := `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"}]}`
	c.register("address", avroBody(addr))
	c.register("order", `{"schema":"{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"com.acme\",\"fields\":[{\"name\":\"a\",\"type\":\"com.acme.Address\"}]}","references":[{"name":"com.acme.Address","subject":"address","version":1}]}`)
	c.register("u", avroBody(userV1))
	c.register("u", avroBody(userV2))
	c.register("gone", avroBody(`"int"`))
	c.do("DELETE", "/subjects/u/versions/1", "")
	c.do("DELETE", "/subjects/gone", "")
	c.do("DELETE", "/subjects/gone?permanent=true", "")
	c.do("PUT", "/config", `{"compatibility":"FULL"}`)
	c.do("PUT", "/config/u", `{"compatibility":"NONE"}`)
	c.do("PUT", "/mode/order", `{"mode":"READONLY"}`)

	fresh := NewMemStore()
	if err := fresh.Write(context.Background(), c.store.Records()); err != nil {
		t.Fatal(err)
	}
	d := newClientWith(t, fresh, Options{})
	for _, path := range []string{
		"/subjects", "/subjects?deleted=true", "/subjects/u/versions", "/subjects/u/versions?deleted=true",
		"/subjects/u/versions/1?deleted=true", "/subjects/u/versions/latest", "/subjects/order/versions/1",
		"/subjects/address/versions/1/referencedby", "/schemas", "/schemas/ids/1", "/schemas/ids/2", "/schemas/ids/3/versions",
		"/schemas/ids/5", "/subjects/gone/versions", "/config", "/config/u", "/mode", "/mode/order",
	} {
		s1, b1 := c.do("GET", path, "")
		s2, b2 := d.do("GET", path, "")
		if s1 != s2 || b1 != b2 {
			t.Errorf("GET %s\nwriter  %d %s\nreplay  %d %s", path, s1, b1, s2, b2)
		}
	}
	// The next id continues after the highest, also after the replay.
	c.expect("POST", "/subjects/next/versions", avroBody(`"bytes"`), 200, `{"id":6,"version":1,"schemaType":"AVRO","schema":"\"bytes\""}`)
	d.expect("POST", "/subjects/next/versions", avroBody(`"bytes"`), 200, `{"id":6,"version":1,"schemaType":"AVRO","schema":"\"bytes\""}`)
}

// Concurrent registrations get distinct ids and consecutive versions;
// reads run beside them (go test -race).
func TestConcurrentRegistrations(t *testing.T) {
	c := newClient(t)
	c.do("PUT", "/config", `{"compatibility":"NONE"}`)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan string, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			subject := fmt.Sprintf("s%d", i%3)
			status, body := c.register(subject, avroBody(fmt.Sprintf(`{"type":"fixed","name":"F%d","size":%d}`, i, i+1)))
			if status != 200 {
				errs <- body
			}
		}()
		go func() {
			defer wg.Done()
			if status, body := c.do("GET", "/schemas", ""); status != 200 {
				errs <- body
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	st := c.store.State()
	if ids := st.IDs(); len(ids) != n || ids[0] != 1 || ids[n-1] != n {
		t.Fatalf("ids %v", ids)
	}
	total := 0
	for _, subj := range st.Subjects(false) {
		for i, v := range st.Versions(subj, false) {
			if v.Version != i+1 {
				t.Fatalf("%s versions %+v", subj, st.Versions(subj, false))
			}
			total++
		}
	}
	if total != n {
		t.Fatalf("%d versions, want %d", total, n)
	}
}
