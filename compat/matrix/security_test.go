package matrix

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// scSecurity produces and consumes over a SASL_SSL listener with
// SCRAM-SHA-512, trusting the CA the cluster wrote, and checks the broker
// authenticated the client as the user.
func scSecurity(r *cell, cl Client) {
	sc, ok := cl.(SecureClient)
	if !ok {
		r.notSupported("the adapter has no SASL_SSL settings yet")
		return
	}
	dir := r.TempDir()
	c := server.NewTestCluster(r, server.Config{
		Listeners: []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_SSL", Listen: "127.0.0.1:0"}},
		SASLUsers: map[string]string{"alice": "alice-secret"},
		TLSDir:    dir,
	})
	must(r, c.CreateTopic("secure", 1, 3, nil))
	var bootstrap []string
	for _, b := range c.Listeners()[1].Brokers {
		bootstrap = append(bootstrap, b.Advertised)
	}
	var recs []Record
	for i := range 10 {
		recs = append(recs, Record{Key: fmt.Sprint("k", i), Value: fmt.Sprint("secret-", i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := sc.SecureRoundTrip(ctx, SecurityConfig{Bootstrap: bootstrap, ClientID: clientID(cl, "security"), CAFile: filepath.Join(dir, "ca.pem"),
		Mechanism: "SCRAM-SHA-512", User: "alice", Password: "alice-secret", Topic: "secure"}, recs)
	r.check(err, "round trip over SASL_SSL")
	for i, rec := range recs {
		if i >= len(got) || got[i].Offset != int64(i) || got[i].Key != rec.Key || got[i].Value != rec.Value {
			r.Fatalf("consumed %v, want %v at offsets 0..9", got, recs)
		}
	}
	if _, err := c.WaitFor(ctx, func(e server.Event) bool {
		return e.Type == server.EventClientAuthenticated && e.Reason == "SCRAM-SHA-512" && e.Detail == "User:alice"
	}); err != nil {
		r.Fatalf("no client_authenticated event for User:alice: %v", err)
	}
}
