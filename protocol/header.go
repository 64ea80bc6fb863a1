package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsKey is special in the response header: Kafka always answers
// ApiVersions with response header v0, so that a client that does not yet
// know the broker's versions can always parse the answer (KIP-511).
const apiVersionsKey = 18

// RequestHeader is a parsed Kafka request header (v1 or v2).
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      string // "" when null
	// Flexible is true when the request uses header v2, i.e. the version is
	// a flexible version of its API key. It selects response header v1,
	// except for ApiVersions which is always answered with header v0.
	Flexible bool
}

var (
	// ErrUnknownAPIKey is returned for an API key kmsg does not know.
	ErrUnknownAPIKey = errors.New("protocol: unknown API key")
	// ErrMalformed is returned for a request header that is truncated or
	// otherwise cannot be decoded.
	ErrMalformed = errors.New("protocol: malformed request")
)

// ParseRequestHeader parses the request header at the start of frame and
// returns it together with the request body that follows it. The body
// aliases frame.
//
// Non-flexible versions use header v1 (key, version, correlation id, nullable
// client id); flexible versions use header v2, which adds a tag buffer.
// Flexibility is decided by kmsg for the key and version, which also works
// for versions above the ones kmsg knows.
//
// For an unknown API key the error wraps ErrUnknownAPIKey and the header
// still carries the key, version and correlation id, so the caller can log
// them. Any truncated or malformed input gives an error wrapping ErrMalformed.
func ParseRequestHeader(frame []byte) (RequestHeader, []byte, error) {
	var h RequestHeader
	body, err := h.Parse(frame)
	return h, body, err
}

// Parse is ParseRequestHeader into h, for a connection that keeps one
// header for every request it reads: the client id string of the last
// request is kept when the new one is the same, so it is not allocated
// again.
func (h *RequestHeader) Parse(frame []byte) ([]byte, error) {
	clientID := h.ClientID
	*h = RequestHeader{}
	if len(frame) < 8 {
		return nil, fmt.Errorf("%w: header needs 8 bytes, frame has %d", ErrMalformed, len(frame))
	}
	h.APIKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.APIVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))

	flexible, known := isFlexible(h.APIKey, h.APIVersion)
	if !known {
		return nil, fmt.Errorf("%w: %d", ErrUnknownAPIKey, h.APIKey)
	}
	h.Flexible = flexible

	b := frame[8:]
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: truncated client id length", ErrMalformed)
	}
	n := int16(binary.BigEndian.Uint16(b))
	b = b[2:]
	switch {
	case n == -1: // null client id
	case n < -1:
		return nil, fmt.Errorf("%w: client id length %d", ErrMalformed, n)
	case int(n) > len(b):
		return nil, fmt.Errorf("%w: client id length %d, %d bytes left", ErrMalformed, n, len(b))
	default:
		if string(b[:n]) == clientID {
			h.ClientID = clientID
		} else {
			h.ClientID = string(b[:n])
		}
		b = b[n:]
	}

	if h.Flexible {
		var err error
		if b, err = skipTags(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// flexibleFrom is, per API key, the first version kmsg encodes as flexible
// (every key turns flexible at one version and stays so); -1 for a key kmsg
// does not know, above any version for one never flexible. A table instead
// of a kmsg request per header.
var flexibleFrom = func() (t [kmsg.MaxKey + 1]int32) {
	for key := range t {
		req := kmsg.RequestForKey(int16(key))
		if req == nil {
			t[key] = -1
			continue
		}
		t[key] = math.MaxInt16 + 1
		for v := req.MaxVersion(); v >= 0; v-- {
			req.SetVersion(v)
			if !req.IsFlexible() {
				break
			}
			t[key] = int32(v)
		}
	}
	return t
}()

// isFlexible says whether version of key is flexible (header v2), as kmsg
// would; known is false for a key kmsg does not know.
func isFlexible(key, version int16) (flexible, known bool) {
	if key < 0 || int(key) >= len(flexibleFrom) || flexibleFrom[key] < 0 {
		return false, false
	}
	return int32(version) >= flexibleFrom[key], true
}

// skipTags skips a tag buffer: an unsigned varint count, then per field an
// unsigned varint tag, an unsigned varint size and size bytes. No request
// header tag is defined yet, so they are all ignored.
func skipTags(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad tag count", ErrMalformed)
	}
	b = b[n:]
	// Each field takes at least two bytes, which bounds the loop for
	// absurd counts.
	if count > uint64(len(b))/2 {
		return nil, fmt.Errorf("%w: %d tagged fields in %d bytes", ErrMalformed, count, len(b))
	}
	for range count {
		_, tn := binary.Uvarint(b)
		if tn <= 0 {
			return nil, fmt.Errorf("%w: bad tag", ErrMalformed)
		}
		b = b[tn:]
		size, sn := binary.Uvarint(b)
		if sn <= 0 || size > uint64(len(b)-sn) {
			return nil, fmt.Errorf("%w: bad tagged field size", ErrMalformed)
		}
		b = b[sn+int(size):]
	}
	return b, nil
}

// AppendResponse appends a complete response frame to dst: the 4-byte size
// prefix, the response header (correlation id, plus an empty tag buffer for
// flexible requests other than ApiVersions) and resp encoded at its own
// version. The caller sets resp's version, normally to hdr.APIVersion.
//
// A Fetch response is mostly record bytes, so dst first grows once to hold
// them all: appending them piece by piece would copy a large response
// several times over as the slice doubles.
func AppendResponse(dst []byte, hdr RequestHeader, resp kmsg.Response) []byte {
	if fr, ok := resp.(*kmsg.FetchResponse); ok {
		if n := FetchResponseSize(fr); cap(dst)-len(dst) < n {
			dst = append(make([]byte, 0, len(dst)+n), dst...)
		}
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // size, patched below
	dst = binary.BigEndian.AppendUint32(dst, uint32(hdr.CorrelationID))
	if hdr.Flexible && hdr.APIKey != apiVersionsKey {
		dst = append(dst, 0) // response header v1: empty tag buffer
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// FetchResponseSize is at least the encoded size of resp: its record bytes
// plus a generous allowance for every other field. It is only a hint: were
// it short, append would still grow dst.
func FetchResponseSize(resp *kmsg.FetchResponse) int {
	n := 256
	for i := range resp.Topics {
		t := &resp.Topics[i]
		n += 64 + len(t.Topic)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			n += 128 + len(p.RecordBatches) + 32*len(p.AbortedTransactions)
		}
	}
	for i := range resp.Brokers {
		b := &resp.Brokers[i]
		n += 64 + len(b.Host)
		if b.Rack != nil {
			n += len(*b.Rack)
		}
	}
	return n
}
