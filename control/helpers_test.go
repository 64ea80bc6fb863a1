package control

// Helpers of the control API's tests: clusters, clients and event stories,
// written against server's exported API as the handler itself is. Those
// server's tests need too live in internal/testkit.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The helpers shared with server's tests (internal/testkit).
var (
	waitFor            = testkit.WaitFor
	testContext        = testkit.Context
	newClient          = testkit.NewClient
	scMust             = testkit.Must
	evLine             = testkit.EventLine
	containsEvent      = testkit.ContainsEvent
	txnLine            = testkit.TxnLine
	runTxn             = testkit.RunTxn
	firstRequestErr    = testkit.FirstRequestErr
	rawJoinRequest     = testkit.JoinRequest
	mustJoin           = testkit.MustJoin
	wantCode           = testkit.WantCode
	consumerAssignment = testkit.ConsumerAssignment
)

func replicaIDs(ps api.PartitionState) []int32 {
	var out []int32
	for _, r := range ps.Replicas {
		out = append(out, r.Broker)
	}
	return out
}

// lastSeq is the newest event's sequence number.
func evLastSeq(c *server.Cluster) uint64 {
	evs := c.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

// txnStory is the events of transactional id after since, in brief.
func txnStory(c *server.Cluster, since uint64, id string) []string {
	var out []string
	for _, e := range c.Events(since) {
		if e.TransactionalID == id {
			out = append(out, txnLine(e))
		}
	}
	return out
}

func checkTxnStory(t *testing.T, c *server.Cluster, since uint64, id string, want ...string) {
	t.Helper()
	if got := txnStory(c, since, id); !slices.Equal(got, want) {
		t.Errorf("events of %s:\n got %s\nwant %s", id, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func aclCluster(t *testing.T, cfg server.Config) *server.Cluster {
	cfg.Authorizer = true
	if cfg.Brokers == 0 {
		cfg.Brokers = 1
	}
	return server.NewTestCluster(t, cfg)
}

// clockStart is where the manual clocks of these tests start.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// manualCluster starts a cluster whose time moves only when the test
// advances it.
func manualCluster(t *testing.T, cfg server.Config) *server.Cluster {
	t.Helper()
	cfg.Clock = clock.NewManual(clockStart)
	return server.NewTestCluster(t, cfg)
}

// twoListeners is a cluster with an EXTERNAL listener advertised as
// 127.0.0.1 and an INTERNAL one advertised as localhost, so a client can
// tell from Metadata which listener answered.
func twoListeners(t *testing.T, cfg server.Config) *server.Cluster {
	cfg.Listeners = []server.Listener{
		{Name: "EXTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "INTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0", AdvertisedHost: "localhost"},
	}
	return server.NewTestCluster(t, cfg)
}

// txnCluster is a three-broker cluster with few coordinator shards.
func txnCluster(t *testing.T, cfg server.Config) *server.Cluster {
	t.Helper()
	if cfg.TransactionStatePartitions == 0 {
		cfg.TransactionStatePartitions = 3
	}

	return server.NewTestCluster(t, cfg)
}

// listenerBootstrap is every broker's advertised address on listener name.
func listenerBootstrap(t testing.TB, c *server.Cluster, name string) []string {
	t.Helper()
	for _, l := range c.Listeners() {
		if l.Name == name {
			var out []string
			for _, b := range l.Brokers {
				out = append(out, b.Advertised)
			}
			return out
		}
	}
	t.Fatalf("no listener %s", name)
	return nil
}

// securedCluster has a PLAINTEXT, an SSL, a SASL_PLAINTEXT and a SASL_SSL
// listener and the users alice and bob.
func securedCluster(t testing.TB, cfg server.Config) *server.Cluster {
	cfg.Listeners = []server.Listener{
		{Name: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SSL", Listen: "127.0.0.1:0"},
		{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SASL_SSL", Listen: "127.0.0.1:0"},
	}
	if cfg.SASLUsers == nil {
		cfg.SASLUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}
	}
	return server.NewTestCluster(t, cfg)
}

// rawMember is a group member driven by hand.
type rawMember struct {
	cl         *kgo.Client
	group      string
	id         string
	instance   *string
	generation int32
}

func groupCluster(t *testing.T, cfg server.Config) (*server.Cluster, *kgo.Client, context.Context) {
	t.Helper()
	if cfg.GroupMinSessionTimeout == 0 {
		cfg.GroupMinSessionTimeout = 100 * time.Millisecond
	}
	c := server.NewTestCluster(t, cfg)
	if err := c.CreateTopic("work", 4, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c, newClient(t, c, kgo.ClientID("raw")), testContext(t)
}

func (m *rawMember) sync(t *testing.T, ctx context.Context, assignments map[string][]byte) (int16, []byte) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.id, m.instance
	for id, a := range assignments {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ErrorCode, resp.MemberAssignment
}
