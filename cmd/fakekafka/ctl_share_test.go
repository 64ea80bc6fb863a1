package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ctl groups shows a share group: its type and epoch, the member's
// assignment, and the share partition's records in flight with their
// delivery counts.
func TestCtlShareGroup(t *testing.T) {
	c, ctl := ctlEnv(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ShareGroup("workers"), kgo.ConsumeTopics("t"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	poll := func() []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return cl.PollFetches(pctx).Records()
	}
	for {
		poll()
		if gs, ok := c.Group("workers"); ok && len(gs.SharePartitions) == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the share partition was never initialised")
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for len(poll()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("no records")
		}
	}
	out := mustCtl(t, ctl, "groups")
	for _, want := range []string{"workers  share  Stable", "t:0", "IN FLIGHT", "0:acquired×1 1:acquired×1"} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl groups lacks %q:\n%s", want, out)
		}
	}
}
