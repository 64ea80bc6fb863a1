package server

import (
	"errors"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestACLTransactions: a franz-go transactional producer without WRITE on
// its transactional id is refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
// with WRITE on the id and the topic it commits.
func TestACLTransactions(t *testing.T) {
	c := aclCluster(t, Config{TransactionStatePartitions: 1})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpWrite))
	ctx := testContext(t)
	run := func() error {
		cl := newClient(t, c, kgo.TransactionalID("tx"), kgo.RecordRetries(1))
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
			return err
		}
		return cl.EndTransaction(ctx, kgo.TryCommit)
	}
	if err := run(); !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("transaction without WRITE on its id: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
	mustGrant(t, c, grant(authorizer.ResourceTransactionalID, "tx", authorizer.OpWrite))
	if err := run(); err != nil {
		t.Fatalf("transaction with WRITE on its id: %v", err)
	}
	// The markers are written after EndTxn answers, as in Kafka.
	waitFor(t, 10*time.Second, "the commit marker (LSO 2)", func() bool {
		ps, _ := c.Partition("t", 0)
		return ps.Replicas[0].LastStableOffset == 2
	})
}

// TestACLDescribeClusterOperations: DescribeCluster's authorized
// operations are 0 without DESCRIBE on the cluster, else what the ACLs
// allow.
func TestACLDescribeClusterOperations(t *testing.T) {
	c := aclCluster(t, Config{})
	cl := newClient(t, c)
	ops := func() int32 {
		t.Helper()
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeClusterAuthorizedOperations = true
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("DescribeCluster: %+v %v", resp, err)
		}
		return resp.ClusterAuthorizedOperations
	}
	if got := ops(); got != 0 {
		t.Fatalf("operations without DESCRIBE: %b", got)
	}
	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpAlter, authorizer.OpIdempotentWrite))
	if got, want := ops(), int32(1<<authorizer.OpAlter|1<<authorizer.OpDescribe|1<<authorizer.OpIdempotentWrite); got != want {
		t.Fatalf("operations %b, want ALTER|DESCRIBE|IDEMPOTENT_WRITE %b", got, want)
	}
}

// TestACLMetadataClusterOperations: Metadata v8-10 reports the cluster's
// authorized operations only with DESCRIBE on the cluster, else 0.
func TestACLMetadataClusterOperations(t *testing.T) {
	c := aclCluster(t, Config{})
	cl := newClient(t, c, kgo.MaxVersions(kversion.V2_7_0())) // Metadata v10, the last with cluster operations
	ops := func() int32 {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.IncludeClusterAuthorizedOperations = true
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.AuthorizedOperations
	}
	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpCreate))
	if got := ops(); got != 0 {
		t.Fatalf("operations without DESCRIBE: %b", got)
	}
	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpDescribe))
	if got, want := ops(), int32(1<<authorizer.OpCreate|1<<authorizer.OpDescribe); got != want {
		t.Fatalf("operations %b, want CREATE|DESCRIBE %b", got, want)
	}
}
