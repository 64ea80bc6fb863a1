package server

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestDataDirKeepsSecurityMetadata: what Kafka keeps in its metadata log
// beside topics comes back after a restart with --data-dir: ACLs made with
// CreateAcls, a SCRAM credential made with AlterUserScramCredentials, a
// client quota and transaction.version set with UpdateFeatures; the ACL
// that was deleted stays deleted. Everything goes through franz-go, as the
// admin user over SASL.
func TestDataDirKeepsSecurityMetadata(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Brokers: 1, DataDir: dir, Authorizer: true, SuperUsers: []string{"User:admin"},
		SASLUsers: map[string]string{"admin": "admin-pw"},
		Listeners: []Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}}}
	ctx := testContext(t)
	adminOf := func(c *Cluster) *kgo.Client {
		return newClient(t, c, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...),
			kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism()))
	}
	carolOf := func(c *Cluster) *kadm.Client {
		return kadm.NewClient(newClient(t, c, kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...),
			kgo.SASL(scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha256Mechanism())))
	}

	c1, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	admin := adminOf(c1)
	adm := kadm.NewClient(admin)
	for _, topic := range []string{"orders-1", "secret"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	acls := kmsg.NewPtrCreateACLsRequest()
	for _, a := range []struct {
		name string
		op   kmsg.ACLOperation
	}{{"orders", kmsg.ACLOperationDescribe}, {"orders", kmsg.ACLOperationRead}, {"secret", kmsg.ACLOperationDescribe}} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, a.name, kmsg.ACLResourcePatternTypePrefixed
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:carol", "*", a.op, kmsg.ACLPermissionTypeAllow
		acls.Creations = append(acls.Creations, cr)
	}
	if resp, err := acls.RequestWith(ctx, admin); err != nil || slices.ContainsFunc(resp.Results, func(r kmsg.CreateACLsResponseResult) bool { return r.ErrorCode != 0 }) {
		t.Fatalf("CreateAcls: %v %+v", err, resp)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr("secret"), kmsg.ACLResourcePatternTypePrefixed
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	if resp, err := del.RequestWith(ctx, admin); err != nil || len(resp.Results) != 1 || len(resp.Results[0].MatchingACLs) != 1 {
		t.Fatalf("DeleteAcls: %v %+v", err, resp)
	}
	if altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "carol-pw"}}); err != nil || altered["carol"].Err != nil {
		t.Fatalf("AlterUserScramCredentials: %v %+v", err, altered)
	}
	q := kmsg.NewPtrAlterClientQuotasRequest()
	qe := kmsg.NewAlterClientQuotasRequestEntry()
	qe.Entity = []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("carol")}}
	qe.Ops = []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}}
	q.Entries = append(q.Entries, qe)
	if resp, err := q.RequestWith(ctx, admin); err != nil || resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("AlterClientQuotas: %v %+v", err, resp)
	}
	uf := kmsg.NewPtrUpdateFeaturesRequest()
	fu := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	fu.Feature, fu.MaxVersionLevel, fu.UpgradeType = transactionVersionFeature, 1, 2 // SAFE_DOWNGRADE
	uf.FeatureUpdates = append(uf.FeatureUpdates, fu)
	if resp, err := uf.RequestWith(ctx, admin); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("UpdateFeatures: %v %+v", err, resp)
	}
	if topics, err := carolOf(c1).ListTopics(ctx); err != nil || !slices.Equal(topics.Names(), []string{"orders-1"}) {
		t.Fatalf("carol's topics before the restart: %v %v", topics.Names(), err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}

	c2 := NewTestCluster(t, cfg)
	if topics, err := carolOf(c2).ListTopics(ctx); err != nil || !slices.Equal(topics.Names(), []string{"orders-1"}) {
		t.Fatalf("carol's topics after the restart: %v %v", topics.Names(), err)
	}
	if _, err := carolOf(c2).CreateTopic(ctx, 1, 1, nil, "orders-2"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("carol creating a topic (no CREATE): %v", err)
	}
	admin = adminOf(c2)
	desc := kmsg.NewPtrDescribeACLsRequest()
	desc.ResourceType, desc.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	desc.Operation, desc.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dr, err := desc.RequestWith(ctx, admin)
	if err != nil || dr.ErrorCode != 0 || len(dr.Resources) != 1 || dr.Resources[0].ResourceName != "orders" || len(dr.Resources[0].ACLs) != 2 {
		t.Fatalf("DescribeAcls after the restart: %v %+v", err, dr)
	}
	dq := kmsg.NewPtrDescribeClientQuotasRequest()
	dq.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: kmsg.StringPtr("carol")}}
	qr, err := dq.RequestWith(ctx, admin)
	if err != nil || qr.ErrorCode != 0 || len(qr.Entries) != 1 || len(qr.Entries[0].Values) != 1 || qr.Entries[0].Values[0].Value != 1024 {
		t.Fatalf("DescribeClientQuotas after the restart: %v %+v", err, qr)
	}
	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	level := int16(-1)
	for _, f := range av.FinalizedFeatures {
		if f.Name == transactionVersionFeature {
			level = f.MaxVersionLevel
		}
	}
	if level != 1 {
		t.Fatalf("finalized transaction.version after the restart: %d, want 1", level)
	}
}

// TestDataDirRefusesBadSecurityMetadata: a meta.json whose ACL names an
// operation Kafka does not have stops the start with an error that says
// where, rather than starting without the binding.
func TestDataDirRefusesBadSecurityMetadata(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{Brokers: 1, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "meta.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), `"topics"`, `"acls": [{"resource_type": "TOPIC", "name": "t", "pattern": "LITERAL", "principal": "User:a", "host": "*", "operation": "FLY", "permission": "ALLOW"}], "topics"`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if c2, err := NewCluster(Config{Brokers: 1, DataDir: dir}); err == nil || !strings.Contains(err.Error(), "data dir: ACL 0") {
		if c2 != nil {
			c2.Close()
		}
		t.Fatalf("NewCluster with a bad ACL in meta.json: %v", err)
	}
}
