package reference

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOAuthReference sends the same OAUTHBEARER tokens and client messages to Kafka 4.4's
// broker validator (sasl.oauthbearer.jwks.endpoint.url, a one-node KRaft
// cluster of its own) and to fakekafka configured the same, and compares
// what each answers on the wire: the SaslAuthenticate error code, its
// bytes (the invalid_token challenge), the answer to the client's %x01,
// the session lifetime, and whether the connection is closed.
func TestOAuthReference(t *testing.T) {
	if !enabled() {
		t.Skip("needs Java and Maven: set FAKEKAFKA_REFERENCE=1 (scripts/reference.sh)")
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	encKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sasl.MarshalJWKS([]sasl.JWK{
		{KeyID: "rs-1", Use: "sig", Algorithm: "RS256", Key: rsaKey.Public()},
		{KeyID: "ec-1", Use: "sig", Key: ecKey.Public()},
		{KeyID: "enc-1", Use: "enc", Key: encKey.Public()},
		{KeyID: "ec384-1", Key: ec384.Public()},
		{KeyID: "ed-1", Key: edKey.Public()},
		{KeyID: "rs-small", Key: small.Public()},
	})
	if err != nil {
		t.Fatal(err)
	}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	defer idp.Close()
	jwksURL := idp.URL + "/jwks"

	kafkaAddr := startOAuthKafka(t, jwksURL)
	fk, err := server.NewCluster(server.Config{Brokers: 1,
		Listeners: []server.Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
		OAuth: server.OAuthConfig{JWKSEndpointURL: jwksURL, ExpectedAudience: []string{"kafka"},
			ExpectedIssuer: "https://idp.test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := fk.WaitFor(ctx, func(e server.Event) bool { return e.Type == server.EventJWKSRefreshed }); err != nil {
		t.Fatal(err)
	}
	fkAddr := fk.Bootstrap()[0]

	now := time.Now()
	claims := func(change func(map[string]any)) map[string]any {
		m := map[string]any{"sub": "alice", "iss": "https://idp.test", "aud": "kafka", "scope": "kafka",
			"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}
		if change != nil {
			change(m)
		}
		return m
	}
	sign := func(c map[string]any, alg, kid string, key crypto.Signer) string {
		tok, err := sasl.SignJWT(c, alg, kid, key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	e := base64.RawURLEncoding.EncodeToString
	cases := []struct{ name, token string }{
		{"RS256", sign(claims(nil), "RS256", "rs-1", rsaKey)},
		{"ES256", sign(claims(nil), "ES256", "ec-1", ecKey)},
		{"ES256 without kid", sign(claims(nil), "ES256", "", ecKey)},
		{"audience list containing kafka", sign(claims(func(m map[string]any) { m["aud"] = []string{"x", "kafka"} }), "RS256", "rs-1", rsaKey)},
		{"wrong audience", sign(claims(func(m map[string]any) { m["aud"] = "billing" }), "RS256", "rs-1", rsaKey)},
		{"no audience", sign(claims(func(m map[string]any) { delete(m, "aud") }), "RS256", "rs-1", rsaKey)},
		{"wrong issuer", sign(claims(func(m map[string]any) { m["iss"] = "https://evil.test" }), "RS256", "rs-1", rsaKey)},
		{"expired", sign(claims(func(m map[string]any) { m["exp"] = now.Add(-time.Minute).Unix() }), "RS256", "rs-1", rsaKey)},
		{"expired within the skew", sign(claims(func(m map[string]any) { m["exp"] = now.Add(-10 * time.Second).Unix() }), "RS256", "rs-1", rsaKey)},
		{"not yet valid", sign(claims(func(m map[string]any) { m["nbf"] = now.Add(10 * time.Minute).Unix() }), "RS256", "rs-1", rsaKey)},
		{"no iat", sign(claims(func(m map[string]any) { delete(m, "iat") }), "RS256", "rs-1", rsaKey)},
		{"no sub", sign(claims(func(m map[string]any) { delete(m, "sub") }), "RS256", "rs-1", rsaKey)},
		{"duplicate scopes", sign(claims(func(m map[string]any) { m["scope"] = []string{"a", "a"} }), "RS256", "rs-1", rsaKey)},
		{"unknown kid", sign(claims(nil), "ES256", "ec-2", otherKey)},
		{"bad signature", sign(claims(nil), "ES256", "ec-1", otherKey)},
		{"alg bound to another key", sign(claims(nil), "PS256", "rs-1", rsaKey)},
		{"key meant for encryption", sign(claims(nil), "ES256", "enc-1", encKey)},
		{"ES384", sign(claims(nil), "ES384", "ec384-1", ec384)},
		{"EdDSA", sign(claims(nil), "EdDSA", "ed-1", edKey)},
		{"RSA key of 1024 bits", sign(claims(nil), "RS256", "rs-small", small)},
		{"exp a string", sign(claims(func(m map[string]any) { m["exp"] = "tomorrow" }), "RS256", "rs-1", rsaKey)},
		{"exp fractional", sign(claims(func(m map[string]any) { m["exp"] = float64(now.Add(time.Hour).Unix()) + 0.5 }), "RS256", "rs-1", rsaKey)},
		{"iat in the future", sign(claims(func(m map[string]any) { m["iat"] = now.Add(10 * time.Minute).Unix() }), "RS256", "rs-1", rsaKey)},
		{"sub only whitespace", sign(claims(func(m map[string]any) { m["sub"] = "  " }), "RS256", "rs-1", rsaKey)},
		{"sub a number", sign(claims(func(m map[string]any) { m["sub"] = 42 }), "RS256", "rs-1", rsaKey)},
		{"scope list with a number", sign(claims(func(m map[string]any) { m["scope"] = []any{"a", 7} }), "RS256", "rs-1", rsaKey)},
		{"scope an empty list", sign(claims(func(m map[string]any) { m["scope"] = []any{} }), "RS256", "rs-1", rsaKey)},
		{"iss a number", sign(claims(func(m map[string]any) { m["iss"] = 7 }), "RS256", "rs-1", rsaKey)},
		{"scope a number", sign(claims(func(m map[string]any) { m["scope"] = 42 }), "RS256", "rs-1", rsaKey)},
		{"aud a number", sign(claims(func(m map[string]any) { m["aud"] = 42 }), "RS256", "rs-1", rsaKey)},
		{"unsecured", e([]byte(`{"alg":"none"}`)) + "." + e([]byte(fmt.Sprintf(`{"sub":"alice","exp":%d}`, now.Add(time.Hour).Unix()))) + "."},
		{"not a JWT", "not-a-token"},
	}
	good := sign(claims(nil), "RS256", "rs-1", rsaKey)
	// Client first messages (RFC 7628) around a good token.
	framed := []struct{ name, msg string }{
		{"authzid of the subject", "n,a=alice,\x01auth=Bearer " + good + "\x01\x01"},
		{"authzid of another", "n,a=bob,\x01auth=Bearer " + good + "\x01\x01"},
		{"extensions", "n,,\x01host=kafka\x01auth=Bearer " + good + "\x01\x01"},
		{"scheme in lower case", "n,,\x01auth=bearer " + good + "\x01\x01"},
		{"Basic scheme", "n,,\x01auth=Basic " + good + "\x01\x01"},
		{"unterminated", "n,,\x01auth=Bearer " + good + "\x01"},
		{"no auth", "n,,\x01host=kafka\x01\x01"},
		{"garbage", "garbage"},
		{"token with a space", "n,,\x01auth=Bearer abc def\x01\x01"},
	}
	for _, c := range cases {
		framed = append(framed, struct{ name, msg string }{c.name, "n,,\x01auth=Bearer " + c.token + "\x01\x01"})
	}
	for _, c := range framed {
		k := oauthExchange(ctx, kafkaAddr, c.msg)
		f := oauthExchange(ctx, fkAddr, c.msg)
		if k != f {
			t.Errorf("%s:\n Kafka     %s\n fakekafka %s", c.name, k, f)
		} else {
			t.Logf("%s: %s", c.name, k)
		}
	}
}

// oauthExchange logs in with the client first message msg (SaslHandshake
// v1, SaslAuthenticate v2) and describes what the broker answered.
func oauthExchange(ctx context.Context, addr, msg string) string {
	c, err := Dial(ctx, addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "OAUTHBEARER"
	if _, err := c.Do(ctx, hs); err != nil {
		return "handshake: " + err.Error()
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SetVersion(2)
	auth.SASLAuthBytes = []byte(msg)
	resp, err := c.Do(ctx, auth)
	if err != nil {
		return "authenticate: " + err.Error()
	}
	r := resp.(*kmsg.SASLAuthenticateResponse)
	out := fmt.Sprintf("error %d message %q bytes %q", r.ErrorCode, deref(r.ErrorMessage), r.SASLAuthBytes)
	if r.ErrorCode == 0 && len(r.SASLAuthBytes) == 0 {
		// Authenticated: the session lasts until exp (to the second).
		life := time.Duration(r.SessionLifetimeMillis) * time.Millisecond
		return out + fmt.Sprintf(" lifetime ~%v", life.Round(10*time.Second))
	}
	if r.ErrorCode != 0 {
		return out + " then " + closedOrNot(c)
	}
	ack := kmsg.NewPtrSASLAuthenticateRequest()
	ack.SetVersion(2)
	ack.SASLAuthBytes = []byte{1}
	resp, err = c.Do(ctx, ack)
	if err != nil {
		return out + "; ack: " + err.Error()
	}
	r = resp.(*kmsg.SASLAuthenticateResponse)
	return out + fmt.Sprintf("; ack: error %d message %q then %s", r.ErrorCode, deref(r.ErrorMessage), closedOrNot(c))
}

// closedOrNot says whether the broker closes the connection (it should,
// after a failed authentication).
func closedOrNot(c *Conn) string {
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadAll(c.c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "open"
	}
	return "closed"
}

// startOAuthKafka starts a one-node Kafka 4.4 (broker and controller in one
// JVM) with a SASL_PLAINTEXT listener whose OAUTHBEARER tokens
// OAuthBearerValidatorCallbackHandler validates against jwksURL, and
// returns that listener's address.
func startOAuthKafka(t *testing.T, jwksURL string) string {
	t.Helper()
	cp, err := Classpath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cp, "jose4j") { // a classpath cached before pom.xml named jose4j
		if err := Resolve(); err != nil {
			t.Fatal(err)
		}
		if cp, err = Classpath(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			t.Fatal(err)
		}
	}
	plain := fmt.Sprintf("127.0.0.1:%d", ports[0])
	secured := fmt.Sprintf("127.0.0.1:%d", ports[1])
	props := []string{
		"process.roles=broker,controller",
		"node.id=1",
		fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d", ports[2]),
		"controller.listener.names=CONTROLLER",
		fmt.Sprintf("listeners=PLAINTEXT://%s,SASL_PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", plain, secured, ports[2]),
		fmt.Sprintf("advertised.listeners=PLAINTEXT://%s,SASL_PLAINTEXT://%s", plain, secured),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url=" + jwksURL,
		"sasl.oauthbearer.expected.audience=kafka",
		"sasl.oauthbearer.expected.issuer=https://idp.test",
		"log.dirs=" + filepath.Join(dir, "data"),
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1",
		"num.network.threads=2", "num.io.threads=2", "background.threads=2",
	}
	propsFile := filepath.Join(dir, "oauth.properties")
	if err := os.WriteFile(propsFile, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	format := exec.Command("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", cp, "kafka.tools.StorageTool", "format",
		"--cluster-id=oauth-reference-0000001", "--config="+propsFile)
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("format: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "kafka.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xmx384m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+jwksURL, "-cp", cp, "kafka.Kafka", propsFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		logf.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		if n, err := metadataBrokers(ctx, plain); err == nil && n == 1 {
			return secured
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("Kafka exited:\n%s", tail(string(b), 4000))
		case <-ctx.Done():
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("Kafka not ready:\n%s", tail(string(b), 4000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
