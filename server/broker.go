package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// broker is one broker: its listener and its client connections.
type broker struct {
	c         *Cluster
	id        int32
	listeners []*brokerListener // as Config.Listeners
	up        atomic.Bool

	mu       sync.Mutex
	conns    map[*conn]struct{}
	fence    *clock.Timer // pending controller fencing after a crash or isolation
	isolated atomic.Bool  // changed under the cluster's ctlMu; State reads it without

	fencePending atomic.Bool // crashed, not yet fenced by the controller

	// faults are the fault-injection rules that can fire here (faults.go),
	// nil when there are none so that requests pay one atomic load.
	faults atomic.Pointer[[]*FaultRule]

	sessions *fetchsession.Cache // Fetch sessions (fetch_session.go)
}

// registered says whether the controller still counts the broker as
// alive: it is up, or it crashed and the broker session timeout has not yet
// fenced it (KRaft keeps listing it, so clients keep trying it meanwhile).
func (b *broker) registered() bool { return b.up.Load() || b.fencePending.Load() }

// addr is the broker's advertised address on the first listener.
func (b *broker) addr() string { return b.listeners[0].advertised().String() }

func (b *broker) serve(bl *brokerListener, ln net.Listener) {
	defer b.c.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // listener closed
		}
		cn := b.newConn(bl, nc)
		b.mu.Lock()
		select {
		case <-b.c.closing:
			b.mu.Unlock()
			nc.Close()
			return
		default:
		}
		b.conns[cn] = struct{}{}
		b.mu.Unlock()
		b.c.wg.Add(1)
		go cn.serve()
	}
}

// closeConns closes the listeners and every connection, as a broker that
// stops does.
func (b *broker) closeConns() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bl := range b.listeners {
		bl.ln.Close()
	}
	for cn := range b.conns {
		cn.close()
	}
}

// listen opens the broker's listeners on their ports again and serves
// them.
func (b *broker) listen() error {
	lns := make([]net.Listener, len(b.listeners))
	for i, bl := range b.listeners {
		ln, err := net.Listen("tcp", net.JoinHostPort(bl.bindHost, strconv.Itoa(int(bl.port))))
		if err != nil {
			for _, ln := range lns[:i] {
				ln.Close()
			}
			return fmt.Errorf("broker %d, listener %s: %w", b.id, bl.name, err)
		}
		lns[i] = ln
	}
	b.mu.Lock()
	for i, bl := range b.listeners {
		bl.ln = lns[i]
	}
	b.mu.Unlock()
	for i, bl := range b.listeners {
		b.c.wg.Add(1)
		go b.serve(bl, lns[i])
	}
	return nil
}

// conn is one client connection: one goroutine reads a request, handles it,
// writes the response, then reads the next, so responses stay in order and
// a request that waits (acks=all, long poll) blocks only its own connection.
type conn struct {
	b   *broker
	bl  *brokerListener // the listener it came in on
	nc  net.Conn
	hdr protocol.RequestHeader // the request being handled
	// principal is who the connection is, as Kafka's authorizer names it
	// ("User:alice"): User:ANONYMOUS until SASL or a client certificate
	// says otherwise. Only the connection's own goroutine touches it.
	principal string
	// tokenAuthenticated: the principal logged in with a delegation token
	// (SCRAM with tokenauth=true); it may not create, renew or expire one.
	tokenAuthenticated bool
	// shownPrincipal is principal for other goroutines (Security);
	// denied holds what the request being handled was denied (denials.go).
	shownPrincipal atomic.Pointer[string]
	denied         []denialKey
	remoteHost     string // the client's IP address, set before serve starts
	principalErr   error  // no principal for the client certificate: closed at the first request
	// reqSize is the size of the request being handled; throttle is the
	// quota throttle its handler decided (quotas.go).
	reqSize  int
	throttle time.Duration
	// parked is how long the request being handled waited without
	// holding a handler in Kafka's terms, parkedAt when its current wait
	// began (quotas_request.go).
	parked     time.Duration
	parkedAt   time.Time
	timed      bool      // the request being handled counts handler time
	sasl       *saslConn // on SASL listeners (sasl_conn.go)
	out        []byte
	fetchSpace fetchSpace // a Fetch response's gathered records (response_bufs.go)
	fetchState fetchState // a Fetch's reused scratch (fetch_session.go)
	chaosAcks  []chaosAck // writes of the request being handled (chaos_record.go)
	parking    connPark   // reused by every parked request (conn_park.go)
	closed     chan struct{}
	once       sync.Once
}

func (cn *conn) close() {
	cn.once.Do(func() {
		close(cn.closed)
		cn.nc.Close()
	})
}

// errCloseConn makes serve close the connection without a response, which
// is how Kafka answers a failed acks=0 produce.
var errCloseConn = errors.New("close connection")

func (cn *conn) serve() {
	c := cn.b.c
	defer c.wg.Done()
	defer func() {
		cn.close()
		cn.closeShareSessions() // share sessions end with their connection
		cn.b.mu.Lock()
		delete(cn.b.conns, cn)
		cn.b.mu.Unlock()
	}()
	remote := cn.nc.RemoteAddr().String()
	if err := cn.tlsHandshake(); err != nil {
		c.log.Warn("closing connection", "broker", cn.b.id, "remote", remote, "reason", err)
		return
	}
	r := protocol.NewFrameReader(cn.nc, 64<<10, c.cfg.MaxRequestBytes)
	for {
		frame, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.log.Warn("closing connection", "broker", cn.b.id, "remote", remote, "reason", err)
			}
			return
		}
		if cn.principalErr != nil {
			err := cn.principalErr
			c.emit(EventAuthenticationFailed, func(e *Event) { e.Broker, e.Reason, e.Detail = cn.b.id, "SSL", err.Error() })
			c.log.Warn("closing connection", "broker", cn.b.id, "remote", remote, "reason", err)
			return
		}
		if cn.sasl != nil && cn.sasl.raw {
			err = cn.saslRawToken(frame)
		} else {
			err = cn.handle(frame)
		}
		if err != nil {
			if !errors.Is(err, errCloseConn) {
				c.log.Warn("closing connection", "broker", cn.b.id, "remote", remote, "api", cn.hdr.APIKey, "version", cn.hdr.APIVersion, "client", cn.hdr.ClientID, "reason", err)
			}
			return
		}
	}
}

// handle parses and answers one request frame. An error closes the
// connection: malformed frames and unsupported versions, as in Kafka.
func (cn *conn) handle(frame []byte) error {
	c := cn.b.c
	body, err := cn.hdr.Parse(frame) // keeps the client id string when it repeats
	hdr := cn.hdr
	if err != nil {
		return err
	}
	cn.reqSize = len(frame)
	cn.denied = cn.denied[:0]
	if cn.sasl != nil {
		if handled, err := cn.saslGate(hdr, body); handled || err != nil {
			return err
		}
	}
	start := cn.requestStart()
	cn.parked, cn.parkedAt = 0, time.Time{}
	if len(cn.chaosAcks) > 0 {
		cn.ackChaosWrites(false) // the last request failed before its answer
	}
	var resp kmsg.Response
	if hdr.APIKey == apiVersionsKey {
		if resp, err = cn.answerApiVersions(hdr.APIVersion, body); err != nil {
			return err
		}
		if cn.sasl == nil || cn.sasl.phase == saslDone { // before SASL, Kafka's authenticator answers it
			cn.throttleRequest(start, resp)
		}
	} else {
		rng, ok := protocol.Lookup(hdr.APIKey)
		if !ok {
			return fmt.Errorf("unsupported API %s (key %d)", kmsg.NameForKey(hdr.APIKey), hdr.APIKey)
		}
		if hdr.APIVersion < rng.Min || hdr.APIVersion > rng.Max {
			return fmt.Errorf("unsupported version %d of %s (supported %d-%d)", hdr.APIVersion, rng.Name(), rng.Min, rng.Max)
		}
		h := handlers[hdr.APIKey]
		if h == nil {
			return fmt.Errorf("no handler for %s", rng.Name())
		}
		req := kmsg.RequestForKey(hdr.APIKey)
		req.SetVersion(hdr.APIVersion)
		if err := req.ReadFrom(body); err != nil {
			return fmt.Errorf("malformed %s v%d request: %w", rng.Name(), hdr.APIVersion, err)
		}
		if rules := cn.b.faults.Load(); rules != nil {
			resp, err = cn.serveWithFaults(*rules, h, req)
		} else {
			resp, err = h(cn, req)
		}
		if err != nil {
			return err
		}
		cn.throttleRequest(start, resp)
	}
	if c.cfg.LogRequests {
		c.log.Info("request", "broker", cn.b.id, "api", kmsg.NameForKey(hdr.APIKey), "version", hdr.APIVersion,
			"client", hdr.ClientID, "correlation_id", hdr.CorrelationID, "took", time.Since(start))
	}
	if resp == nil {
		// acks=0: no answer, but a throttled producer is still muted.
		if d := cn.throttle; d > 0 {
			cn.throttle = 0
			if !cn.waitThrottle(d) {
				return errCloseConn
			}
		}
		return nil
	}
	d, after := cn.applyThrottle(resp)
	if d > 0 && !after && !cn.waitThrottle(d) {
		return errCloseConn // an old client: the answer itself is late
	}
	if len(cn.chaosAcks) > 0 {
		cn.ackChaosWrites(true) // before the client can see the answer
	}
	err = cn.respond(hdr, resp)
	cn.fetchSpace.release()
	if err == nil && d > 0 && after && !cn.waitThrottle(d) {
		return errCloseConn // KIP-219: muted after the answer
	}
	return err
}

// respond writes resp, the answer to the request of hdr.
func (cn *conn) respond(hdr protocol.RequestHeader, resp kmsg.Response) error {
	if fr, ok := resp.(*kmsg.FetchResponse); ok {
		if n := protocol.FetchResponseSize(fr); n > maxConnOut {
			buf := getResponseBuf(n)
			*buf = protocol.AppendResponse((*buf)[:0], hdr, resp)
			_, err := cn.nc.Write(*buf)
			putResponseBuf(buf)
			return err
		}
	}
	cn.out = protocol.AppendResponse(cn.out[:0], hdr, resp)
	_, err := cn.nc.Write(cn.out)
	if cap(cn.out) > maxConnOut {
		cn.out = nil // do not pin a large response's buffer
	}
	return err
}

const apiVersionsKey = 18

// anonymousPrincipal is Kafka's principal for a connection that has not
// authenticated (PLAINTEXT, or SSL without a client certificate).
const anonymousPrincipal = "User:ANONYMOUS"

// handler answers one decoded request. A nil response sends nothing; an
// error closes the connection.
type handler func(*conn, kmsg.Request) (kmsg.Response, error)

// typed adapts a handler for one request type.
func typed[R kmsg.Request](f func(*conn, R) (kmsg.Response, error)) handler {
	return func(cn *conn, r kmsg.Request) (kmsg.Response, error) { return f(cn, r.(R)) }
}

// handlers holds one handler per API key in protocol.Supported (a test
// checks the two agree). ApiVersions is answered in handle itself since its
// unsupported versions still get an answer.
var handlers = map[int16]handler{
	0:  typed((*conn).handleProduce),
	1:  typed((*conn).handleFetch),
	2:  typed((*conn).handleListOffsets),
	3:  typed((*conn).handleMetadata),
	8:  typed((*conn).handleOffsetCommitIDs),
	9:  typed((*conn).handleOffsetFetchIDs),
	10: typed((*conn).handleFindCoordinator),
	11: typed((*conn).handleJoinGroup),
	12: typed((*conn).handleHeartbeat),
	13: typed((*conn).handleLeaveGroup),
	14: typed((*conn).handleSyncGroup),
	15: typed((*conn).handleDescribeGroups),
	16: typed((*conn).handleListGroups),
	17: typed((*conn).handleSaslHandshake),
	19: typed((*conn).handleCreateTopics),
	20: typed((*conn).handleDeleteTopics),
	21: typed((*conn).handleDeleteRecords),
	22: typed((*conn).handleInitProducerID),
	23: typed((*conn).handleOffsetForLeaderEpoch),
	24: typed((*conn).handleAddPartitionsToTxn),
	25: typed((*conn).handleAddOffsetsToTxn),
	26: typed((*conn).handleEndTxn),
	27: typed((*conn).handleWriteTxnMarkers),
	28: typed((*conn).handleTxnOffsetCommitIDs),
	29: typed((*conn).handleDescribeACLs),
	30: typed((*conn).handleCreateACLs),
	31: typed((*conn).handleDeleteACLs),
	32: typed((*conn).handleDescribeConfigs),
	33: typed((*conn).handleAlterConfigs),
	34: typed((*conn).handleAlterReplicaLogDirs),
	35: typed((*conn).handleDescribeLogDirs),
	36: typed((*conn).handleSaslAuthenticate),
	37: typed((*conn).handleCreatePartitions),
	42: typed((*conn).handleDeleteGroups),
	43: typed((*conn).handleElectLeaders),
	44: typed((*conn).handleIncrementalAlterConfigs),
	45: typed((*conn).handleAlterPartitionReassignments),
	46: typed((*conn).handleListPartitionReassignments),
	47: typed((*conn).handleOffsetDelete),
	48: typed((*conn).handleDescribeClientQuotas),
	49: typed((*conn).handleAlterClientQuotas),
	50: typed((*conn).handleDescribeUserSCRAMCredentials),
	51: typed((*conn).handleAlterUserSCRAMCredentials),
	55: typed((*conn).handleDescribeQuorum),
	60: typed((*conn).handleDescribeCluster),
	61: typed((*conn).handleDescribeProducers),
	65: typed((*conn).handleDescribeTransactions),
	66: typed((*conn).handleListTransactions),
	68: typed((*conn).handleConsumerGroupHeartbeat),
	69: typed((*conn).handleConsumerGroupDescribe),
	88: typed((*conn).handleStreamsGroupHeartbeat),
	89: typed((*conn).handleStreamsGroupDescribe),
	71: typed((*conn).handleGetTelemetrySubscriptions),
	72: typed((*conn).handlePushTelemetry),
	74: typed((*conn).handleListConfigResources),
	75: typed((*conn).handleDescribeTopicPartitions),
	76: typed((*conn).handleShareGroupHeartbeat),
	77: typed((*conn).handleShareGroupDescribe),
	78: typed((*conn).handleShareFetch),
	79: typed((*conn).handleShareAcknowledge),
	83: typed((*conn).handleInitializeShareGroupState),
	84: typed((*conn).handleReadShareGroupState),
	85: typed((*conn).handleWriteShareGroupState),
	86: typed((*conn).handleDeleteShareGroupState),
	87: typed((*conn).handleReadShareGroupStateSummary),
	90: typed((*conn).handleDescribeShareGroupOffsets),
	91: typed((*conn).handleAlterShareGroupOffsets),
	92: typed((*conn).handleDeleteShareGroupOffsets),
	38: typed((*conn).handleCreateDelegationToken),
	39: typed((*conn).handleRenewDelegationToken),
	40: typed((*conn).handleExpireDelegationToken),
	41: typed((*conn).handleDescribeDelegationToken),
	57: typed((*conn).handleUpdateFeatures),
	64: typed((*conn).handleUnregisterBroker),
	80: typed((*conn).handleAddRaftVoter),
	81: typed((*conn).handleRemoveRaftVoter),
	93: typed((*conn).handleStreamsGroupTopologyDescriptionUpdate),
	94: typed((*conn).handleUnregisterController),
}
