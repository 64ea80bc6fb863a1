package reference

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is one raw connection to one broker that sends a request at exactly
// the version set on it, so that both targets see byte-identical requests.
type Conn struct {
	c    net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

// Dial connects to addr.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("reference"))}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Do sends req at req.GetVersion() and reads its response.
func (c *Conn) Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	_ = c.c.SetDeadline(deadline)
	c.corr++
	if _, err := c.c.Write(c.f.AppendRequest(nil, req, c.corr)); err != nil {
		return nil, err
	}
	if acks, ok := req.(*kmsg.ProduceRequest); ok && acks.Acks == 0 {
		return nil, nil // no response to acks=0
	}
	var size [4]byte
	if _, err := io.ReadFull(c.c, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.c, body); err != nil {
		return nil, err
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != c.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", corr, c.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if req.Key() == kmsg.ApiVersions.Int16() && req.GetVersion() > req.MaxVersion() {
		// A broker answers an ApiVersions newer than it knows at v0, with
		// UNSUPPORTED_VERSION and its own list, so the client can retry.
		resp.SetVersion(0)
	}
	// Flexible responses carry a tag buffer in their header, except
	// ApiVersions, whose header stays v0 so that any client can read it.
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		var err error
		if body, err = skipTags(body); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return resp, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

// RoundTrip dials addr, sends req and closes.
func RoundTrip(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(ctx, req)
}

// metadataBrokers is how many brokers addr lists in Metadata.
func metadataBrokers(ctx context.Context, addr string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	resp, err := RoundTrip(ctx, addr, req)
	if err != nil {
		return 0, err
	}
	return len(resp.(*kmsg.MetadataResponse).Brokers), nil
}

// skipTags skips a tagged-field buffer: a count, then per field a tag, a
// size and that many bytes, all unsigned varints but the bytes.
func skipTags(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, fmt.Errorf("bad tag buffer")
	}
	b = b[w:]
	for ; n > 0; n-- {
		if _, w = binary.Uvarint(b); w <= 0 {
			return nil, fmt.Errorf("bad tag")
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < size {
			return nil, fmt.Errorf("bad tag size")
		}
		b = b[w+int(size):]
	}
	return b, nil
}
