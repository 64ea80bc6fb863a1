package fakekafka_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	fakekafka "github.com/fakekafka/fakekafka/testcontainers"
)

// The registry's controls through the typed client against a live
// container: a fault answers one registration with 50001, the next is
// registered; the rule's hit, the registry's content and the subject's
// event read back; clear removes the rule.
func TestSchemaRegistryControlsInTheContainer(t *testing.T) {
	needDocker(t)
	ctx := testContext(t)
	ctr := run(t)
	ctl, err := ctr.Control(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url, err := ctr.SchemaRegistryURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ctl.InjectSchemaRegistryFault(ctx, fakekafka.SchemaRegistryFault{Method: "POST", Path: "/subjects/*/versions", ErrorCode: 50001, Count: 1})
	if err != nil || f.Status != 500 || f.Remaining != 1 {
		t.Fatalf("inject: %+v %v", f, err)
	}
	register := func() int {
		t.Helper()
		resp, err := http.Post(url+"/subjects/orders-value/versions", "application/vnd.schemaregistry.v1+json", strings.NewReader(`{"schema":"\"string\""}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if first, second := register(), register(); first != 500 || second != 200 {
		t.Fatalf("registrations: %d then %d, want 500 then 200", first, second)
	}
	faults, err := ctl.SchemaRegistryFaults(ctx)
	if err != nil || len(faults) != 1 || faults[0].ID != f.ID || faults[0].Hits != 1 || faults[0].Remaining != 0 {
		t.Fatalf("faults: %+v %v", faults, err)
	}
	st, err := ctl.SchemaRegistry(ctx)
	if err != nil || len(st.Subjects) != 1 || st.Subjects[0].Subject != "orders-value" || st.Subjects[0].Versions[0].Schema != `"string"` {
		t.Fatalf("registry: %+v %v", st, err)
	}
	evs, _, err := ctl.Events(ctx, 0, fakekafka.EventFilter{Subject: "orders-value"})
	if err != nil || len(evs) != 1 || evs[0].Type != "schema_registered" || evs[0].Version != 1 {
		t.Fatalf("events: %+v %v", evs, err)
	}
	if cleared, err := ctl.ClearSchemaRegistryFaults(ctx); err != nil || len(cleared) != 1 {
		t.Fatalf("clear: %+v %v", cleared, err)
	}
	var apiErr *fakekafka.APIError
	if _, err := ctl.RemoveSchemaRegistryFault(ctx, f.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
		t.Fatalf("remove a cleared rule: %v, want a 404", err)
	}
}
