package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// hdr builds a request header by hand: key, version, correlation id, then
// the client id (nil = null) and, if tags is not nil, a raw tag buffer.
func hdr(key, version int16, corr int32, clientID *string, tags []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	return append(b, tags...)
}

func strp(s string) *string { return &s }

func TestParseRequestHeader(t *testing.T) {
	body := []byte("BODY")
	cat := func(a ...[]byte) []byte { return bytes.Join(a, nil) }
	tests := []struct {
		name     string
		in       []byte
		want     RequestHeader
		wantBody []byte
		wantErr  error
	}{
		{
			name:     "v1 metadata",
			in:       cat(hdr(3, 8, 7, strp("cli"), nil), body),
			want:     RequestHeader{APIKey: 3, APIVersion: 8, CorrelationID: 7, ClientID: "cli"},
			wantBody: body,
		},
		{
			name:     "v1 null client id",
			in:       cat(hdr(0, 3, -5, nil, nil), body),
			want:     RequestHeader{APIKey: 0, APIVersion: 3, CorrelationID: -5},
			wantBody: body,
		},
		{
			name:     "v1 empty client id, empty body",
			in:       hdr(0, 8, 1, strp(""), nil),
			want:     RequestHeader{APIKey: 0, APIVersion: 8, CorrelationID: 1},
			wantBody: []byte{},
		},
		{
			name:     "v2 metadata, no tags",
			in:       cat(hdr(3, 9, 7, strp("cli"), []byte{0}), body),
			want:     RequestHeader{APIKey: 3, APIVersion: 9, CorrelationID: 7, ClientID: "cli", Flexible: true},
			wantBody: body,
		},
		{
			name:     "v2 null client id",
			in:       cat(hdr(3, 12, 7, nil, []byte{0}), body),
			want:     RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 7, Flexible: true},
			wantBody: body,
		},
		{
			name: "v2 tagged fields skipped",
			// two fields: tag 0 with 3 bytes, tag 300 (two-byte uvarint) empty
			in:       cat(hdr(1, 12, 9, strp("c"), []byte{2, 0, 3, 'x', 'y', 'z', 0xac, 0x02, 0}), body),
			want:     RequestHeader{APIKey: 1, APIVersion: 12, CorrelationID: 9, ClientID: "c", Flexible: true},
			wantBody: body,
		},
		{
			name:     "api versions v3 uses header v2",
			in:       cat(hdr(18, 3, 1, strp("c"), []byte{0}), body),
			want:     RequestHeader{APIKey: 18, APIVersion: 3, CorrelationID: 1, ClientID: "c", Flexible: true},
			wantBody: body,
		},
		{
			name:     "version above kmsg's max is still flexible",
			in:       cat(hdr(0, 99, 1, nil, []byte{0}), body),
			want:     RequestHeader{APIKey: 0, APIVersion: 99, CorrelationID: 1, Flexible: true},
			wantBody: body,
		},
		{
			name:    "unknown key keeps the first fields",
			in:      cat(hdr(12345, 2, 77, strp("c"), nil), body),
			want:    RequestHeader{APIKey: 12345, APIVersion: 2, CorrelationID: 77},
			wantErr: ErrUnknownAPIKey,
		},
		{
			name:    "unknown key, header only",
			in:      []byte{0x7f, 0, 0, 1, 0, 0, 0, 9},
			want:    RequestHeader{APIKey: 0x7f00, APIVersion: 1, CorrelationID: 9},
			wantErr: ErrUnknownAPIKey,
		},
		{name: "empty", in: nil, wantErr: ErrMalformed},
		{name: "seven bytes", in: []byte{0, 3, 0, 1, 0, 0, 0}, wantErr: ErrMalformed},
		{
			name:    "no client id",
			in:      hdr(3, 1, 2, nil, nil)[:8],
			want:    RequestHeader{APIKey: 3, APIVersion: 1, CorrelationID: 2},
			wantErr: ErrMalformed,
		},
		{
			name:    "client id cut short",
			in:      hdr(3, 1, 2, strp("abcdef"), nil)[:12],
			want:    RequestHeader{APIKey: 3, APIVersion: 1, CorrelationID: 2},
			wantErr: ErrMalformed,
		},
		{
			name:    "client id length -2",
			in:      cat(hdr(3, 1, 2, strp(""), nil)[:8], []byte{0xff, 0xfe}, body),
			want:    RequestHeader{APIKey: 3, APIVersion: 1, CorrelationID: 2},
			wantErr: ErrMalformed,
		},
		{
			name:    "flexible without tag buffer",
			in:      hdr(3, 9, 2, strp("c"), nil),
			want:    RequestHeader{APIKey: 3, APIVersion: 9, CorrelationID: 2, ClientID: "c", Flexible: true},
			wantErr: ErrMalformed,
		},
		{
			name:    "tag size past the end",
			in:      hdr(3, 9, 2, strp("c"), []byte{1, 0, 5, 'x'}),
			want:    RequestHeader{APIKey: 3, APIVersion: 9, CorrelationID: 2, ClientID: "c", Flexible: true},
			wantErr: ErrMalformed,
		},
		{
			name:    "absurd tag count",
			in:      hdr(3, 9, 2, strp("c"), []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}),
			want:    RequestHeader{APIKey: 3, APIVersion: 9, CorrelationID: 2, ClientID: "c", Flexible: true},
			wantErr: ErrMalformed,
		},
		{
			name:    "overlong tag count varint",
			in:      hdr(3, 9, 2, strp("c"), bytes.Repeat([]byte{0x80}, 11)),
			want:    RequestHeader{APIKey: 3, APIVersion: 9, CorrelationID: 2, ClientID: "c", Flexible: true},
			wantErr: ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rest, err := ParseRequestHeader(tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("header = %+v, want %+v", got, tt.want)
			}
			if !bytes.Equal(rest, tt.wantBody) {
				t.Fatalf("body = %q, want %q", rest, tt.wantBody)
			}
		})
	}
}

// TestParseRequestHeaderKmsg parses requests as franz-go's own formatter
// writes them and checks that kmsg can read the body that is left.
func TestParseRequestHeaderKmsg(t *testing.T) {
	for _, r := range Supported {
		for v := r.Min; v <= r.Max; v++ {
			for _, clientID := range []*string{nil, strp("fakekafka-test")} {
				req := kmsg.RequestForKey(r.Key)
				req.SetVersion(v)
				var opts []kmsg.RequestFormatterOpt
				if clientID != nil {
					opts = append(opts, kmsg.FormatterClientID(*clientID))
				}
				wire := kmsg.NewRequestFormatter(opts...).AppendRequest(nil, req, 1234)
				body, err := ReadFrame(bytes.NewReader(wire), DefaultMaxRequestBytes)
				if err != nil {
					t.Fatal(err)
				}
				h, rest, err := ParseRequestHeader(body)
				if err != nil {
					t.Fatalf("%s v%d: %v", r.Name(), v, err)
				}
				want := RequestHeader{APIKey: r.Key, APIVersion: v, CorrelationID: 1234, Flexible: req.IsFlexible()}
				if clientID != nil {
					want.ClientID = *clientID
				}
				if h != want {
					t.Fatalf("%s v%d: header %+v, want %+v", r.Name(), v, h, want)
				}
				back := kmsg.RequestForKey(r.Key)
				back.SetVersion(v)
				if err := back.ReadFrom(rest); err != nil {
					t.Fatalf("%s v%d: kmsg cannot read the body: %v", r.Name(), v, err)
				}
			}
		}
	}
}

func TestAppendResponse(t *testing.T) {
	tests := []struct {
		name    string
		hdr     RequestHeader
		resp    kmsg.Response
		wantTag bool
	}{
		{
			name: "metadata v8, header v0",
			hdr:  RequestHeader{APIKey: 3, APIVersion: 8, CorrelationID: 42},
			resp: &kmsg.MetadataResponse{Version: 8, Brokers: []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "localhost", Port: 9092}}},
		},
		{
			name:    "metadata v12, header v1",
			hdr:     RequestHeader{APIKey: 3, APIVersion: 12, CorrelationID: 43, Flexible: true},
			resp:    &kmsg.MetadataResponse{Version: 12, Brokers: []kmsg.MetadataResponseBroker{{NodeID: 2, Host: "h", Port: 1}}},
			wantTag: true,
		},
		{
			name: "api versions v4 keeps header v0",
			hdr:  RequestHeader{APIKey: 18, APIVersion: 4, CorrelationID: -1, Flexible: true},
			resp: ApiVersionsResponse(4),
		},
		{
			name: "api versions fallback",
			hdr:  RequestHeader{APIKey: 18, APIVersion: 9, CorrelationID: 7, Flexible: true},
			resp: ApiVersionsResponse(9),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("previous")
			out := AppendResponse(append([]byte(nil), prefix...), tt.hdr, tt.resp)
			if !bytes.HasPrefix(out, prefix) {
				t.Fatal("dst was not appended to")
			}
			body, err := ReadFrame(bytes.NewReader(out[len(prefix):]), DefaultMaxRequestBytes)
			if err != nil {
				t.Fatal(err)
			}
			if len(body) != len(out)-len(prefix)-4 {
				t.Fatalf("size prefix %d, frame has %d", len(body), len(out)-len(prefix)-4)
			}
			if corr := int32(binary.BigEndian.Uint32(body)); corr != tt.hdr.CorrelationID {
				t.Fatalf("correlation id %d, want %d", corr, tt.hdr.CorrelationID)
			}
			body = body[4:]
			if tt.wantTag {
				if body[0] != 0 {
					t.Fatalf("tag buffer %#x, want empty", body[0])
				}
				body = body[1:]
			}
			back := kmsg.ResponseForKey(tt.hdr.APIKey)
			back.SetVersion(tt.resp.GetVersion())
			if err := back.ReadFrom(body); err != nil {
				t.Fatalf("kmsg cannot read the body back: %v", err)
			}
			if got, want := back.AppendTo(nil), tt.resp.AppendTo(nil); !bytes.Equal(got, want) {
				t.Fatalf("round trip differs:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// TestAppendResponseFetchSize checks that the size AppendResponse reserves
// for a Fetch response covers its encoding at every version, so the
// buffer grows once, and that the frame is still right.
func TestAppendResponseFetchSize(t *testing.T) {
	rack := "rack-with-a-long-name"
	for v := int16(4); v <= 17; v++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		for ti := range 3 {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic = strings.Repeat("t", 100*ti)
			rt.TopicID[0] = byte(ti + 1)
			for pi := range 50 {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition, rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = int32(pi), 1<<40, 1<<40, 1<<39
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = 2, 1<<30
				rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = 1<<30, 1<<40
				rp.PreferredReadReplica = 3
				for range pi % 4 {
					rp.AbortedTransactions = append(rp.AbortedTransactions, kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: 1 << 50, FirstOffset: 1 << 40})
				}
				if pi%3 != 0 {
					rp.RecordBatches = bytes.Repeat([]byte{byte(pi)}, 100*pi)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		for id := range int32(3) {
			resp.Brokers = append(resp.Brokers, kmsg.FetchResponseBroker{NodeID: id, Host: "broker.example.com", Port: 9092, Rack: &rack})
		}
		hdr := RequestHeader{APIKey: 1, APIVersion: v, CorrelationID: 5, Flexible: v >= 12}
		want := resp.AppendTo(nil)
		if n := FetchResponseSize(resp); n < len(want)+5 {
			t.Fatalf("v%d: reserved %d bytes for a %d byte body", v, n, len(want))
		}
		out := AppendResponse([]byte("prefix"), hdr, resp)
		body := out[len("prefix")+8:]
		if hdr.Flexible {
			body = body[1:]
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("v%d: body differs from kmsg's encoding", v)
		}
	}
}

func FuzzParseRequestHeader(f *testing.F) {
	f.Add([]byte{})
	f.Add(hdr(3, 8, 7, strp("cli"), []byte("body")))
	f.Add(hdr(3, 9, 7, nil, []byte{0, 'b'}))
	f.Add(hdr(1, 12, 9, strp("c"), []byte{2, 0, 3, 'x', 'y', 'z', 0xac, 0x02, 0}))
	f.Add(hdr(18, 4, 1, strp("c"), []byte{1, 0, 0xff}))
	f.Add(hdr(3, 9, 2, strp("c"), []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}))
	f.Add(hdr(12345, 0, 0, nil, nil))
	f.Add([]byte{0, 3, 0, 1, 0, 0, 0, 1, 0x80, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		h, rest, err := ParseRequestHeader(in)
		if err != nil {
			if rest != nil {
				t.Fatal("body with an error")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownAPIKey) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(rest) > len(in)-10 {
			t.Fatalf("%d byte body from a %d byte frame", len(rest), len(in))
		}
		if len(rest) > 0 && &rest[len(rest)-1] != &in[len(in)-1] {
			t.Fatal("body is not the tail of the frame")
		}
		if h.APIKey != int16(binary.BigEndian.Uint16(in)) {
			t.Fatal("key mismatch")
		}
	})
}

// The flexibility table answers as kmsg does, for every key (known or
// not) and every version, including ones above what kmsg knows.
func TestIsFlexibleAgreesWithKmsg(t *testing.T) {
	for key := int16(-2); key <= kmsg.MaxKey+2; key++ {
		for _, v := range []int16{-1, 0, 1, 2, 3, 5, 8, 9, 12, 13, 20, 40, 100, 32767} {
			flexible, known := isFlexible(key, v)
			req := kmsg.RequestForKey(key)
			if known != (req != nil) {
				t.Fatalf("key %d: known %v", key, known)
			}
			if req == nil {
				continue
			}
			req.SetVersion(v)
			if flexible != req.IsFlexible() {
				t.Fatalf("key %d v%d: flexible %v, kmsg says %v", key, v, flexible, req.IsFlexible())
			}
		}
	}
}

// Parse keeps the previous client id string when it repeats, and a header
// reused across requests carries nothing over from the last one.
func TestRequestHeaderParseReuse(t *testing.T) {
	var h RequestHeader
	if _, err := h.Parse(hdr(3, 8, 1, strp("cli"), nil)); err != nil || h.ClientID != "cli" {
		t.Fatalf("%+v %v", h, err)
	}
	again := hdr(3, 8, 2, strp("cli"), nil)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := h.Parse(again); err != nil {
			t.Fatal(err)
		}
	}); n != 0 && !raceEnabled { // the race detector allocates
		t.Fatalf("%v allocations for a repeated client id", n)
	}
	if _, err := h.Parse(hdr(0, 9, 3, nil, []byte{0})); err != nil {
		t.Fatal(err)
	}
	if want := (RequestHeader{APIKey: 0, APIVersion: 9, CorrelationID: 3, Flexible: true}); h != want {
		t.Fatalf("%+v, want %+v", h, want)
	}
	if _, err := h.Parse(hdr(3, 8, 4, strp("other"), nil)); err != nil || h.ClientID != "other" {
		t.Fatalf("%+v %v", h, err)
	}
}
