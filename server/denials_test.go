package server

import (
	"net"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDenialOncePerRequest: a request that names a denied resource twice
// is one authorization_denied event; the next request is another; a
// Metadata listing all topics hides the denied ones without an event, as
// Kafka's authorizer does not log those filters.
func TestDenialOncePerRequest(t *testing.T) {
	c := aclCluster(t, Config{})
	for _, topic := range []string{"hidden", "open"} {
		if err := c.CreateTopic(topic, 3, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "open", authorizer.OpDescribe))
	cl := newClient(t, c)
	ctx := testContext(t)

	all := kmsg.NewPtrMetadataRequest() // every topic
	resp, err := all.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "open" {
		t.Fatalf("listing shows %d topics, want only open", len(resp.Topics))
	}
	if got := c.Security().DeniedTotal; got != 0 {
		t.Fatalf("listing all topics made %d denials, want 0", got)
	}

	req := kmsg.NewPtrListOffsetsRequest()
	for range 2 {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "hidden"
		for p := range int32(3) {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	for i := range 2 {
		if _, err := cl.Broker(1).Request(ctx, req); err != nil { // to the broker: no metadata lookup first
			t.Fatal(err)
		}
		var denials []Event
		for _, e := range c.Events(0) {
			if AuthorizationDenied(anon, "hidden")(e) {
				denials = append(denials, e)
			}
		}
		if len(denials) != i+1 {
			t.Fatalf("after %d ListOffsets: %d denials, want %d", i+1, len(denials), i+1)
		}
		if e := denials[i]; e.API != "ListOffsets" || e.Operation != "DESCRIBE" {
			t.Errorf("denial %+v", e)
		}
	}
}

// TestAllowedAllocatesNothing: an authorization that is not denied costs
// no allocation (the denial bookkeeping is only for denials).
func TestAllowedAllocatesNothing(t *testing.T) {
	c := aclCluster(t, Config{})
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpWrite))
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	cn := c.brokers[0].newConn(c.brokers[0].listeners[0], server)
	cn.principal = anon
	if !cn.allowedTopic(authorizer.OpWrite, "t") {
		t.Fatal("WRITE on t denied")
	}
	if n := testing.AllocsPerRun(100, func() { cn.denied = cn.denied[:0]; cn.allowedTopic(authorizer.OpWrite, "t") }); n != 0 {
		t.Errorf("an allowed check allocates %v times", n)
	}
}
