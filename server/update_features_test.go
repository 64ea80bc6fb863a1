package server

import (
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func featureUpdate(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, typ
	return u
}

func updateFeatures(t *testing.T, cl *kgo.Client, version int16, validate bool, ups ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
	t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.SetVersion(version)
	req.TimeoutMillis, req.ValidateOnly, req.FeatureUpdates = 5000, validate, ups
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestUpdateFeaturesValidation: each of Kafka 4.4's checks, in its order,
// with its message; a failing update fails the whole request.
func TestUpdateFeaturesValidation(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 3})
	cl := newClient(t, c)
	for _, tc := range []struct {
		name string
		ups  []kmsg.UpdateFeaturesRequestFeatureUpdate
		msg  string // "" for success
	}{
		{"share.version safe downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 1, 2)}, ""},
		{"same level as an upgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 2, 1)}, ""},
		{"kraft.version upgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("kraft.version", 1, 1)}, ""},
		{"unknown upgrade type", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 1, 0)},
			"Invalid update version 1 for feature share.version. The controller does not support the given upgrade type."},
		{"negative level", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", -1, 2)},
			"Invalid update version -1 for feature share.version. A feature version cannot be less than 0."},
		{"above the supported range", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("transaction.version", 3, 1)},
			"Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2"},
		{"unknown feature", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("nope", 1, 1)},
			"Invalid update version 1 for feature nope. Local controller 1 does not support this feature."},
		{"unknown feature at 0", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("nope", 0, 2)},
			"Invalid update version 0 for feature nope. Feature nope not found."},
		{"downgrade as an upgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 1, 1)},
			"Invalid update version 1 for feature share.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{"upgrade as a downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("eligible.leader.replicas.version", 1, 2)},
			"Invalid update version 1 for feature eligible.leader.replicas.version. Can't downgrade to a newer version."},
		{"metadata.version downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 32, 2)},
			"Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested downgrade because it might delete metadata information."},
		{"metadata.version unsafe downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 32, 3)},
			"Unsupported metadata.version downgrade from 33 to 32. Unsafe metadata downgrade is not supported in this version."},
		{"kraft.version downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("kraft.version", 0, 2), featureUpdate("kraft.version", 0, 3)}, ""},
		{"one bad update fails all", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 1, 2), featureUpdate("nope", 1, 1)},
			"Invalid update version 1 for feature nope. Local controller 1 does not support this feature."},
	} {
		resp := updateFeatures(t, cl, 2, true, tc.ups...)
		if tc.msg == "" {
			if resp.ErrorCode != 0 || resp.ErrorMessage != nil || resp.Results != nil {
				t.Errorf("%s: %+v, want success without results (v2)", tc.name, resp)
			}
			continue
		}
		want := "The update failed for all features since the following feature had an error: " + tc.msg
		if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != want {
			t.Errorf("%s: code %d message %v, want INVALID_UPDATE_VERSION %q", tc.name, resp.ErrorCode, strPtr(resp.ErrorMessage), want)
		}
	}
	// v0 has no upgrade type: AllowDowngrade picks safe downgrade or upgrade.
	pinned := func(v int16) *kgo.Client {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(57, v)
		return newClient(t, c, kgo.MaxVersions(vs))
	}
	v0 := featureUpdate("share.version", 1, 0)
	if resp := updateFeatures(t, pinned(0), 0, false, v0); resp.Version != 0 || resp.ErrorCode != kerr.InvalidUpdateVersion.Code ||
		!strings.Contains(*resp.ErrorMessage, "without setting the upgrade type") {
		t.Errorf("v0 downgrade without AllowDowngrade: %+v", resp)
	}
	// With AllowDowngrade it passes Kafka's checks (v0 has no validate-only,
	// so it is applied, and share.version is one fakekafka cannot change).
	v0.AllowDowngrade = true
	if resp := updateFeatures(t, pinned(0), 0, false, v0); resp.ErrorCode != kerr.InvalidUpdateVersion.Code ||
		!strings.Contains(*resp.ErrorMessage, "only transaction.version can change") {
		t.Errorf("v0 downgrade with AllowDowngrade: %+v", resp)
	}
	// From v1 the upgrade type decides: AllowDowngrade is not read.
	if resp := updateFeatures(t, cl, 2, true, v0); resp.ErrorCode != kerr.InvalidUpdateVersion.Code ||
		!strings.Contains(*resp.ErrorMessage, "does not support the given upgrade type") {
		t.Errorf("v2 with AllowDowngrade and no upgrade type: %+v", resp)
	}
	// v0-1 list each update (duplicates too) with Kafka's "NONE" message.
	resp := updateFeatures(t, pinned(1), 1, true, featureUpdate("share.version", 1, 2), featureUpdate("share.version", 2, 1))
	if resp.ErrorCode != 0 || len(resp.Results) != 2 || resp.Results[0].Feature != "share.version" || strPtr(resp.Results[1].ErrorMessage) != "NONE" {
		t.Errorf("v1 results: %+v", resp)
	}
}

func strPtr(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func finalized(t *testing.T, cl *kgo.Client) (map[string]int16, int64) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		out[f.Name] = f.MaxVersionLevel
	}
	return out, resp.FinalizedFeaturesEpoch
}

// TestUpdateFeaturesTransactionVersion: transaction.version changes for
// real: ApiVersions finalizes the new level under a new epoch, and the
// transaction rules follow it (a transactional batch to a partition not
// added to the transaction joins it implicitly under 2, and is refused
// under 1). Validate-only and the fixed features change nothing.
func TestUpdateFeaturesTransactionVersion(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("pr", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	levels, epoch := finalized(t, cl)
	if levels["transaction.version"] != 2 || epoch != 1 {
		t.Fatalf("at the start: %v epoch %d", levels, epoch)
	}
	if resp := updateFeatures(t, cl, 2, true, featureUpdate("transaction.version", 1, 2)); resp.ErrorCode != 0 {
		t.Fatalf("validate-only: %+v", resp)
	}
	if levels, epoch = finalized(t, cl); levels["transaction.version"] != 2 || epoch != 1 {
		t.Fatalf("after validate-only: %v epoch %d", levels, epoch)
	}
	resp := updateFeatures(t, cl, 2, false, featureUpdate("share.version", 1, 2))
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || !strings.Contains(strPtr(resp.ErrorMessage), "only transaction.version") {
		t.Fatalf("share.version for real: %+v", resp)
	}

	produce := func(txnID string) int16 {
		init := kmsg.NewPtrInitProducerIDRequest()
		init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60000
		ir, err := init.RequestWith(testContext(t), cl)
		if err != nil || ir.ErrorCode != 0 {
			t.Fatalf("InitProducerID: %v %v", err, ir)
		}
		b, _ := protocol.BuildBatch(protocol.BatchHeader{Attributes: protocol.AttrTransactional, ProducerID: ir.ProducerID, ProducerEpoch: ir.ProducerEpoch},
			protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
		return produceRaw(t, c, cl, kmsg.StringPtr(txnID), b)
	}
	if code := produce("tv2"); code != 0 {
		t.Fatalf("under transaction.version 2: %v, want the partition added implicitly", kerr.ErrorForCode(code))
	}
	if resp := updateFeatures(t, cl, 2, false, featureUpdate("transaction.version", 1, 2)); resp.ErrorCode != 0 {
		t.Fatalf("downgrade to 1: %+v", resp)
	}
	if levels, epoch = finalized(t, cl); levels["transaction.version"] != 1 || epoch != 2 {
		t.Fatalf("after the downgrade: %v epoch %d, want transaction.version 1 at epoch 2", levels, epoch)
	}
	if code := produce("tv1"); code != kerr.TransactionAbortable.Code {
		t.Fatalf("under transaction.version 1: %v, want TRANSACTION_ABORTABLE", kerr.ErrorForCode(code))
	}
	if resp := updateFeatures(t, cl, 2, false, featureUpdate("transaction.version", 0, 2)); resp.ErrorCode != 0 {
		t.Fatalf("downgrade to 0: %+v", resp)
	}
	if levels, epoch = finalized(t, cl); levels["transaction.version"] != 0 || epoch != 3 {
		t.Fatalf("at level 0: %v epoch %d, want transaction.version not finalized at epoch 3", levels, epoch)
	}
	if _, ok := levels["transaction.version"]; ok {
		t.Fatalf("level 0 is still finalized: %v", levels)
	}
	if resp := updateFeatures(t, cl, 2, false, featureUpdate("transaction.version", 2, 1)); resp.ErrorCode != 0 {
		t.Fatalf("upgrade to 2: %+v", resp)
	}
	if levels, _ = finalized(t, cl); levels["transaction.version"] != 2 {
		t.Fatalf("after the upgrade: %v", levels)
	}
	if code := produce("tv2b"); code != 0 {
		t.Fatalf("back under transaction.version 2: %v", kerr.ErrorForCode(code))
	}
}

// TestFeaturesWithoutTransactionVersion: a cluster configured without
// transaction.version (TransactionVersion -1, as before KIP-890) lists the
// other features only and does not know that one in UpdateFeatures.
func TestFeaturesWithoutTransactionVersion(t *testing.T) {
	c := NewTestCluster(t, Config{TransactionVersion: -1})
	cl := newClient(t, c)
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	var supported []string
	for _, f := range resp.SupportedFeatures {
		supported = append(supported, f.Name)
	}
	if len(supported) != 6 || strings.Contains(strings.Join(supported, ","), "transaction.version") {
		t.Errorf("supported features %v, want Kafka 4.4's without transaction.version", supported)
	}
	levels, _ := finalized(t, cl)
	if _, ok := levels["transaction.version"]; ok || levels["share.version"] != 2 || levels["metadata.version"] != 33 {
		t.Errorf("finalized %v", levels)
	}
	r := updateFeatures(t, cl, 2, true, featureUpdate("transaction.version", 2, 1))
	if r.ErrorCode != kerr.InvalidUpdateVersion.Code || !strings.Contains(strPtr(r.ErrorMessage), "does not support this feature") {
		t.Errorf("UpdateFeatures of transaction.version: %+v", r)
	}
}
