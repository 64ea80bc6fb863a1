package matrix

import (
	"strings"
	"testing"
)

func TestSelectClients(t *testing.T) {
	names := func(cls []Client) string {
		var out []string
		for _, cl := range cls {
			out = append(out, cl.Name())
		}
		return strings.Join(out, ",")
	}
	all := Clients()
	for _, tc := range []struct{ spec, want string }{
		{"", "franz-go,sarama,kafka-go,confluent-kafka-go,kcat"},
		{"default", "franz-go,sarama,kafka-go,confluent-kafka-go,kcat"},
		{"langs", "kafka-clients,confluent-kafka-python,kafka-python,aiokafka,kafkajs,confluent-kafka-javascript,rust-rdkafka"},
		{"all", names(all)},
		// Table order, whatever the order asked; duplicates once.
		{"kafkajs, franz-go,kafkajs", "franz-go,kafkajs"},
		{"default,aiokafka", "franz-go,sarama,kafka-go,confluent-kafka-go,kcat,aiokafka"},
	} {
		got, err := selectClients(all, tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if names(got) != tc.want {
			t.Errorf("%q: %s, want %s", tc.spec, names(got), tc.want)
		}
	}
	if _, err := selectClients(all, "franz-go,nosuch"); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("an unknown client: %v", err)
	}
}

// TestProcessAbsent: an adapter that is not installed says how to install
// it, and its version reads "not installed".
func TestProcessAbsent(t *testing.T) {
	p := newProcess("ghost", t.TempDir(), "bin/ghost", "ghost", "bin/ghost")
	err := p.Available()
	if err == nil || !strings.Contains(err.Error(), "scripts/matrix-clients.sh ghost") {
		t.Fatalf("Available: %v", err)
	}
	if v := p.Version(); v != "not installed" {
		t.Fatalf("Version: %q", v)
	}
	if _, err := p.Produce(t.Context(), ProducerConfig{Topic: "t", Codec: "none"}, values("v", 1)); err == nil {
		t.Fatal("Produce with an absent adapter succeeded")
	}
}
