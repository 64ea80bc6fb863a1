package server

import (
	"context"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// New members that never sync nor heartbeat, each joining with JoinGroup
// v1-v3 (no member id round trip), session and rebalance timeout 6 s, as
// the request corpus sends them. Each completed join starts the member's
// session and the pending-sync timer (both 6 s); the generation a join
// answers depends on whether the previous member is still there when it
// arrives, exactly as in Kafka's GroupMetadataManager:
//
//   - still there (CompletingRebalance): the join prepares a rebalance
//     and waits; the previous member's session expires, it is removed and
//     the join completes: one generation per join;
//   - already expired: the expiry itself rebalanced the group to Empty (a
//     generation with no members), and the join completes the next: two
//     generations per join.

const unsyncedTimeout = 6 * time.Second

// oldJoinClient is a client that sends JoinGroup at version v.
func oldJoinClient(t *testing.T, c *Cluster, v int16) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.JoinGroup.Int16(), v)
	return newClient(t, c, kgo.ClientID("unsynced"), kgo.MaxVersions(vs))
}

// unsyncedJoin sends a new member's JoinGroup at version v on its own
// goroutine and hands back the answer (nil on a transport error).
func unsyncedJoin(t *testing.T, c *Cluster, ctx context.Context, v int16) <-chan *kmsg.JoinGroupResponse {
	req := rawJoinRequest("cg", "", unsyncedTimeout, "range", "work")
	req.RebalanceTimeoutMillis = int32(unsyncedTimeout.Milliseconds())
	cl := oldJoinClient(t, c, v)
	out := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			resp = nil
		}
		out <- resp
	}()
	return out
}

func wantJoined(t *testing.T, what string, resp *kmsg.JoinGroupResponse, generation int32) {
	t.Helper()
	if resp == nil || resp.ErrorCode != 0 || resp.Generation != generation || resp.LeaderID != resp.MemberID || len(resp.Members) != 1 {
		t.Fatalf("%s: want generation %d, the joiner leading alone; got %+v", what, generation, resp)
	}
}

func notAnswered(t *testing.T, what string, ch <-chan *kmsg.JoinGroupResponse) {
	t.Helper()
	select {
	case resp := <-ch:
		t.Fatalf("%s answered early: %+v", what, resp)
	default:
	}
}

// TestUnsyncedJoinBeforeExpiry: each join arrives while the previous
// member is still in the group (Kafka's timing in the corpus): it waits
// for that member's session to expire, exactly 6 s after its join
// completed, and the generations go 1, 2, 3.
func TestUnsyncedJoinBeforeExpiry(t *testing.T) {
	c, _, ctx := groupCluster(t, Config{Clock: clock.NewManual(clockStart)})
	wantJoined(t, "v1", <-unsyncedJoin(t, c, ctx, 1), 1)
	for i, v := range []int16{2, 3} {
		joined := unsyncedJoin(t, c, ctx, v)
		waitGroup(t, c, "cg", "the new member waiting", func(gs GroupState) bool {
			return gs.State == "PreparingRebalance" && len(gs.Members) == 2
		})
		c.AdvanceClock(unsyncedTimeout - time.Millisecond)
		notAnswered(t, "the join before the previous member's session expired", joined)
		c.AdvanceClock(time.Millisecond)
		wantJoined(t, "the join after the previous member expired", <-joined, int32(2+i))
	}
	if gs, _ := c.Group("cg"); gs.State != "CompletingRebalance" || gs.Generation != 3 || len(gs.Members) != 1 {
		t.Fatalf("group %+v", gs)
	}
}

// TestUnsyncedJoinAfterExpiry: each join arrives after the previous
// member expired (fakekafka's timing in the corpus, which sends each case
// to Kafka first: Kafka's join waited the 6 s): the group is Empty one
// generation on, and the join completes at once a generation later, so
// the generations go 1, 3, 5.
func TestUnsyncedJoinAfterExpiry(t *testing.T) {
	c, _, ctx := groupCluster(t, Config{Clock: clock.NewManual(clockStart)})
	wantJoined(t, "v1", <-unsyncedJoin(t, c, ctx, 1), 1)
	for i, v := range []int16{2, 3} {
		c.AdvanceClock(unsyncedTimeout - time.Millisecond)
		if gs, _ := c.Group("cg"); gs.State != "CompletingRebalance" || gs.Generation != int32(1+2*i) {
			t.Fatalf("before the session expired: %+v", gs)
		}
		c.AdvanceClock(time.Millisecond)
		gs := waitGroup(t, c, "cg", "Empty after the expiry", func(gs GroupState) bool { return gs.State == "Empty" })
		if gs.Generation != int32(2+2*i) || len(gs.Members) != 0 {
			t.Fatalf("after the expiry: %+v", gs)
		}
		wantJoined(t, "the join to the Empty group", <-unsyncedJoin(t, c, ctx, v), int32(3+2*i))
	}
}
