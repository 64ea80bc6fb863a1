package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func TestSecurityFlagsFromEnvironment(t *testing.T) {
	o, err := parseFlags([]string{"--sasl-user", "carol:c"}, env(map[string]string{
		"FAKEKAFKA_SASL_USERS":                             "alice:a,bob:b:with:colons",
		"FAKEKAFKA_TLS_DIR":                                "/tmp/x",
		"FAKEKAFKA_TLS_CLIENT_AUTH":                        "required",
		"FAKEKAFKA_SASL_SESSION_LIFETIME":                  "60000",
		"FAKEKAFKA_DELEGATION_TOKEN_SECRET_KEY":            "k3y",
		"FAKEKAFKA_DELEGATION_TOKEN_MAX_LIFETIME":          "3600000",
		"FAKEKAFKA_DELEGATION_TOKEN_EXPIRY_TIME":           "60000",
		"FAKEKAFKA_DELEGATION_TOKEN_EXPIRY_CHECK_INTERVAL": "1000",
		"FAKEKAFKA_SSL_PRINCIPAL_MAPPING_RULES":            "RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT",
		"FAKEKAFKA_SASL_KERBEROS_PRINCIPAL_TO_LOCAL_RULES": "RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*//,DEFAULT",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alice": "a", "bob": "b:with:colons", "carol": "c"}
	if len(o.cfg.SASLUsers) != 3 || o.cfg.SASLUsers["alice"] != want["alice"] || o.cfg.SASLUsers["bob"] != want["bob"] || o.cfg.SASLUsers["carol"] != want["carol"] {
		t.Fatalf("users %v, want %v", o.cfg.SASLUsers, want)
	}
	if o.cfg.TLSDir != "/tmp/x" || o.cfg.TLSClientAuth != "required" || o.cfg.SASLSessionLifetime != time.Minute {
		t.Fatalf("tls dir %q, client auth %q, lifetime %v", o.cfg.TLSDir, o.cfg.TLSClientAuth, o.cfg.SASLSessionLifetime)
	}
	if o.cfg.DelegationTokenSecretKey != "k3y" || o.cfg.DelegationTokenMaxLifetime != time.Hour ||
		o.cfg.DelegationTokenExpiryTime != time.Minute || o.cfg.DelegationTokenExpiryCheckInterval != time.Second {
		t.Fatalf("delegation token settings %q %v %v %v", o.cfg.DelegationTokenSecretKey, o.cfg.DelegationTokenMaxLifetime,
			o.cfg.DelegationTokenExpiryTime, o.cfg.DelegationTokenExpiryCheckInterval)
	}
	if o.cfg.SSLPrincipalMappingRules != "RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT" || o.cfg.SASLKerberosPrincipalToLocalRules != "RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*//,DEFAULT" {
		t.Fatalf("mapping rules %q, kerberos rules %q", o.cfg.SSLPrincipalMappingRules, o.cfg.SASLKerberosPrincipalToLocalRules)
	}
}

// TestBinaryServesSASLSSL: the binary with --tls-dir and --sasl-user
// writes its CA, and franz-go produces over SASL_SSL trusting it.
func TestBinaryServesSASLSSL(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--brokers", "1", "--listeners", "SASL_SSL://127.0.0.1:0", "--control", "", "--tls-dir", dir,
			"--sasl-user", "alice:alice-secret"}, env(nil), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	var bootstrap string
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "bootstrap="); ok {
			bootstrap = v
		}
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("secure"), kgo.AllowAutoTopicCreation(),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pool}), kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
	err = cl.ProduceSync(pctx, &kgo.Record{Value: []byte("hi")}).FirstErr()
	pcancel()
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fakekafka did not stop")
	}
}
