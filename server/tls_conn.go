package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// tlsHandshakeTimeout bounds a TLS handshake on the wire (a socket
// deadline, so the wall clock: no broker timer depends on it).
const tlsHandshakeTimeout = 10 * time.Second

// newConn wraps a connection accepted on bl as its security protocol
// asks: TLS is negotiated lazily in the connection's goroutine.
func (b *broker) newConn(bl *brokerListener, nc net.Conn) *conn {
	cn := &conn{b: b, bl: bl, nc: nc, closed: make(chan struct{}), principal: anonymousPrincipal, remoteHost: hostOf(nc.RemoteAddr())}
	switch bl.protocol {
	case "SSL":
		cn.nc = tls.Server(nc, b.c.tls.ssl)
	case "SASL_SSL":
		cn.nc = tls.Server(nc, b.c.tls.saslSSL)
		cn.sasl = &saslConn{}
	case "SASL_PLAINTEXT":
		cn.sasl = &saslConn{}
	}
	return cn
}

// tlsHandshake completes the TLS handshake of an SSL or SASL_SSL
// connection; on SSL a verified client certificate names the principal.
func (cn *conn) tlsHandshake() error {
	tc, ok := cn.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	if peers := tc.ConnectionState().PeerCertificates; cn.bl.protocol == "SSL" && len(peers) > 0 {
		p, err := cn.b.c.sslPrincipal(peers[0])
		if err != nil {
			// Kafka builds the principal at the first request and closes
			// the connection there.
			cn.principalErr = err
			return nil
		}
		cn.setPrincipal(p)
		cn.b.c.emit(EventClientAuthenticated, func(e *Event) { e.Broker, e.Reason, e.Detail = cn.b.id, "SSL", cn.principal })
	}
	return nil
}
