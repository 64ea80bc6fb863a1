package server

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fakekafka/fakekafka/sasl"
)

// saltedFor is the salted password a client sends for mech (1: SHA-256,
// 2: SHA-512; others get any bytes).
func saltedFor(t *testing.T, mech int8, password string, iter int32) []byte {
	name := scramMechanismNames[mech]
	if name == "" || iter < 1 {
		return []byte("x")
	}
	b, err := sasl.SaltedPassword(name, password, []byte("salt"), int(iter))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUserScramCredentialsThroughKadm(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c)) // over PLAINTEXT
	saslSeeds := kgo.SeedBrokers(listenerBootstrap(t, c, "SASL_PLAINTEXT")...)

	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 2 || len(described["alice"].CredInfos) != 2 || described["alice"].CredInfos[0].Iterations != 4096 {
		t.Fatalf("described %+v", described)
	}

	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "carol-pw"}})
	if err != nil || altered["carol"].Err != nil {
		t.Fatalf("upsert: %v %+v", err, altered)
	}
	if err := firstRequestErr(t, saslSeeds, kgo.SASL(scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha256Mechanism())); err != nil {
		t.Fatalf("carol over SCRAM-SHA-256: %v", err)
	}
	if err := firstRequestErr(t, saslSeeds, kgo.SASL(scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("carol over SCRAM-SHA-512 (no credential): %v", err)
	}
	d, err := adm.DescribeUserSCRAMs(ctx, "carol", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if ci := d["carol"].CredInfos; d["carol"].Err != nil || len(ci) != 1 || ci[0].Mechanism != kadm.ScramSha256 || ci[0].Iterations != 8192 {
		t.Fatalf("carol %+v", d["carol"])
	}
	if !errors.Is(d["nobody"].Err, kerr.ResourceNotFound) {
		t.Fatalf("nobody: %+v", d["nobody"])
	}

	// Deleting alice's SCRAM-SHA-256 credential leaves SHA-512 and PLAIN.
	altered, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || altered["alice"].Err != nil {
		t.Fatalf("delete: %v %+v", err, altered)
	}
	if err := firstRequestErr(t, saslSeeds, kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("alice over deleted SCRAM-SHA-256: %v", err)
	}
	for _, m := range []kgo.Opt{
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()),
	} {
		if err := firstRequestErr(t, saslSeeds, m); err != nil {
			t.Fatalf("alice after the deletion: %v", err)
		}
	}

	// Kafka's errors, per user; the valid change of bob applies. kadm
	// checks iterations itself, so this is the raw request.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, d := range []struct {
		user string
		mech int8
	}{{"alice", 1}, {"dave", 2}, {"gina", 3}} {
		req.Deletions = append(req.Deletions, kmsg.AlterUserSCRAMCredentialsRequestDeletion{Name: d.user, Mechanism: d.mech})
	}
	for _, u := range []struct {
		user string
		mech int8
		iter int32
	}{{"erin", 1, 1000}, {"frank", 1, 20000}, {"dave", 2, 4096}, {"bob", 1, 4096}, {"", 1, 4096}} {
		req.Upsertions = append(req.Upsertions, kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
			Name: u.user, Mechanism: u.mech, Iterations: u.iter, Salt: []byte("salt"), SaltedPassword: saltedFor(t, u.mech, "bob-new", u.iter)})
	}
	// Kafka takes an empty salt, but not an empty salted password (its HMAC
	// refuses an empty key).
	req.Upsertions = append(req.Upsertions,
		kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: "hal", Mechanism: 1, Iterations: 4096, SaltedPassword: []byte("k")},
		kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: "ivy", Mechanism: 1, Iterations: 4096, Salt: []byte("salt")})
	resp, err := req.RequestWith(ctx, newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*kerr.Error{
		"alice": kerr.ResourceNotFound, "erin": kerr.UnacceptableCredential, "frank": kerr.UnacceptableCredential,
		"dave": kerr.DuplicateResource, "gina": kerr.UnsupportedSaslMechanism, "": kerr.UnacceptableCredential, "bob": nil,
		"hal": nil, "ivy": kerr.UnknownServerError,
	}
	if len(resp.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(resp.Results), len(want), resp.Results)
	}
	for _, r := range resp.Results {
		w := want[r.User]
		if (w == nil && r.ErrorCode != 0) || (w != nil && r.ErrorCode != w.Code) {
			t.Errorf("%q: error %d (%v), want %v", r.User, r.ErrorCode, r.ErrorMessage, w)
		}
	}
	if err := firstRequestErr(t, saslSeeds, kgo.SASL(scram.Auth{User: "bob", Pass: "bob-new"}.AsSha256Mechanism())); err != nil {
		t.Fatalf("bob with the new password: %v", err)
	}
	d, _ = adm.DescribeUserSCRAMs(ctx, "dave")
	if !errors.Is(d["dave"].Err, kerr.ResourceNotFound) {
		t.Fatalf("dave was created by a failed request: %+v", d["dave"])
	}
}
