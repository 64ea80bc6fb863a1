package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSupportedTable(t *testing.T) {
	if len(Supported) == 0 {
		t.Fatal("empty table")
	}
	for i, r := range Supported {
		if i > 0 && Supported[i-1].Key >= r.Key {
			t.Errorf("table not sorted by key or has duplicates at %d: %d after %d", i, r.Key, Supported[i-1].Key)
		}
		req := kmsg.RequestForKey(r.Key)
		if req == nil {
			t.Errorf("key %d: unknown to kmsg", r.Key)
			continue
		}
		if r.Min < 0 || r.Min > r.Max || r.Max > req.MaxVersion() {
			t.Errorf("%s (%d): range %d..%d, kmsg knows up to %d", r.Name(), r.Key, r.Min, r.Max, req.MaxVersion())
		}
		if got, ok := Lookup(r.Key); !ok || got != r {
			t.Errorf("Lookup(%d) = %+v, %v", r.Key, got, ok)
		}
	}
	if _, ok := Lookup(18); !ok {
		t.Error("ApiVersions must be supported")
	}
	if _, ok := Lookup(-1); ok {
		t.Error("Lookup(-1) found something")
	}
	if r, _ := Lookup(0); r.Name() != "Produce" {
		t.Errorf("Name of key 0 = %q", r.Name())
	}
}

func TestApiVersionsResponse(t *testing.T) {
	av, _ := Lookup(18)
	tests := []struct {
		version     int16
		wantVersion int16
		wantCode    int16
	}{
		{version: 0, wantVersion: 0},
		{version: 3, wantVersion: 3},
		{version: av.Max, wantVersion: av.Max},
		{version: av.Max + 1, wantVersion: 0, wantCode: 35},
		{version: 9, wantVersion: 0, wantCode: 35},
		{version: -1, wantVersion: 0, wantCode: 35},
	}
	for _, tt := range tests {
		resp := ApiVersionsResponse(tt.version)
		if resp.GetVersion() != tt.wantVersion || resp.ErrorCode != tt.wantCode {
			t.Errorf("v%d: got v%d code %d, want v%d code %d", tt.version, resp.GetVersion(), resp.ErrorCode, tt.wantVersion, tt.wantCode)
		}
		want := Supported
		if tt.wantCode != 0 { // KIP-511: only ApiVersions' own range, to retry with
			want = []APIRange{av}
		}
		if len(resp.ApiKeys) != len(want) {
			t.Fatalf("v%d: %d keys, want %d", tt.version, len(resp.ApiKeys), len(want))
		}
		for i, k := range resp.ApiKeys {
			if r := want[i]; k.ApiKey != r.Key || k.MinVersion != r.Min || k.MaxVersion != r.Max {
				t.Errorf("v%d: key %d is %+v, want %+v", tt.version, i, k, r)
			}
		}
		// The answer must decode at its own version, as a client reads it.
		back := kmsg.NewPtrApiVersionsResponse()
		back.SetVersion(resp.GetVersion())
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Errorf("v%d: kmsg cannot read it: %v", tt.version, err)
		}
	}
}
