package main

// The subcommands a container runs on itself or on another container:
// healthcheck (for Docker's HEALTHCHECK: the image has no shell or curl)
// and probe (proves that a cluster's advertised addresses are reachable
// from where it runs, with nothing but this binary).

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// runHealthcheck exits 0 when the control API's GET /readyz (or /healthz
// with --live) answers 200.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakekafka healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	control := fs.String("control", "127.0.0.1:9099", "HOST:PORT of the control API (env FAKEKAFKA_CONTROL, as the server reads it)")
	live := fs.Bool("live", false, "check liveness (/healthz) instead of readiness (/readyz)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	if v := getenv("FAKEKAFKA_CONTROL"); v != "" {
		*control = v
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakekafka healthcheck: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	host, port, err := net.SplitHostPort(*control)
	if err != nil || *control == "" {
		fmt.Fprintf(stderr, "fakekafka healthcheck: control address %q: want HOST:PORT\n", *control)
		return 2
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1" // listening everywhere: ask over loopback
	}
	path := "/readyz"
	if *live {
		path = "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "fakekafka healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%s %s", resp.Status, body)
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

// runProbe fetches metadata from a bootstrap address, then dials every
// advertised broker and asks it for ApiVersions, reporting each. It exits
// 1 unless every broker answered.
func runProbe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakekafka probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: fakekafka probe [--timeout 10s] HOST:PORT[,HOST:PORT...]")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var meta *kmsg.MetadataResponse
	var errs []string
	for _, addr := range strings.Split(fs.Arg(0), ",") {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 4
		resp, err := roundTrip(ctx, strings.TrimSpace(addr), req)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		meta = resp.(*kmsg.MetadataResponse)
		fmt.Fprintf(stdout, "bootstrap %s: cluster %s, %d brokers\n", addr, deref(meta.ClusterID), len(meta.Brokers))
		break
	}
	if meta == nil {
		fmt.Fprintf(stderr, "fakekafka probe: no bootstrap address answered: %s\n", strings.Join(errs, "; "))
		return 1
	}
	failed := 0
	for _, b := range meta.Brokers {
		addr := net.JoinHostPort(b.Host, fmt.Sprint(b.Port))
		start := time.Now()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 0
		if _, err := roundTrip(ctx, addr, req); err != nil {
			failed++
			fmt.Fprintf(stdout, "broker %d %s: FAILED: %v\n", b.NodeID, addr, err)
			continue
		}
		fmt.Fprintf(stdout, "broker %d %s: ok (%v)\n", b.NodeID, addr, time.Since(start).Round(time.Millisecond))
	}
	if failed > 0 || len(meta.Brokers) == 0 {
		fmt.Fprintf(stdout, "%d of %d brokers unreachable\n", failed, len(meta.Brokers))
		return 1
	}
	fmt.Fprintf(stdout, "all %d brokers reachable\n", len(meta.Brokers))
	return 0
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// roundTrip sends one non-flexible request on a new connection and reads
// its response.
func roundTrip(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	const correlationID = 1
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fakekafka-probe")).AppendRequest(nil, req, correlationID)
	if _, err := nc.Write(frame); err != nil {
		return nil, err
	}
	r := bufio.NewReader(nc)
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, fmt.Errorf("%s: reading response: %w", addr, err)
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("%s: response size %d out of range", addr, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%s: reading response: %w", addr, err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != correlationID {
		return nil, fmt.Errorf("%s: correlation id %d, want %d", addr, got, correlationID)
	}
	resp := req.ResponseKind()
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, fmt.Errorf("%s: malformed %s response: %w", addr, kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}
