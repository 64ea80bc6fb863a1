package server

import (
	"net"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions v3 lists only the supported features whose range does not
// start at 0 (KIP-1022), as Kafka 4.4 does; v4 lists them all.
func TestApiVersionsV3OmitsFeaturesFromZero(t *testing.T) {
	c := NewTestCluster(t, Config{})
	// Raw: a client library always sends its newest ApiVersions.
	names := func(v int16) []string {
		nc, err := net.Dial("tcp", c.Bootstrap()[0])
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "fakekafka-test", "1.0"
		if _, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 1)); err != nil {
			t.Fatal(err)
		}
		f, err := protocol.ReadFrame(nc, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		if err := resp.ReadFrom(f[4:]); err != nil { // ApiVersions answers with header v0
			t.Fatal(err)
		}
		var out []string
		for _, f := range resp.SupportedFeatures {
			if v < 4 && f.MinVersion == 0 {
				t.Errorf("v%d lists %s from 0", v, f.Name)
			}
			out = append(out, f.Name)
		}
		return out
	}
	if got := names(3); len(got) != 1 || got[0] != "metadata.version" {
		t.Errorf("v3 supported features %v, want [metadata.version]", got)
	}
	if got := names(4); len(got) < 2 {
		t.Errorf("v4 supported features %v, want all of Kafka 4.4's", got)
	}
}
