package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// withSecurity sets the adapter's security settings from cfg: SASL_SSL
// with cfg's mechanism, user and CA file; without a mechanism, SSL with
// cfg's client certificate (mutual TLS).
func (a adapterConfig) withSecurity(cfg SecurityConfig) adapterConfig {
	a.SecurityProtocol = "SASL_SSL"
	if cfg.Mechanism == "" {
		a.SecurityProtocol = "SSL"
	}
	a.SASLMechanism, a.SASLUsername, a.SASLPassword = cfg.Mechanism, cfg.User, cfg.Password
	a.SSLCAFile, a.SASLTokenAuth = cfg.CAFile, cfg.TokenAuth
	a.SSLCertFile, a.SSLKeyFile = cfg.CertFile, cfg.KeyFile
	a.OAuthTokenEndpointURL, a.OAuthScope = cfg.TokenEndpointURL, cfg.Scope
	return a
}

// SecureRoundTrip runs the adapter's produce (acks=all, to partition 0),
// then its consume from offset 0, both with the SASL_SSL settings. An
// adapter ends either with "fatal" when its client reports failed
// authentication, since the clients on librdkafka keep retrying it.
func (p Process) SecureRoundTrip(ctx context.Context, sc SecurityConfig, records []Record) ([]Record, error) {
	pc := newAdapterConfig(sc.Bootstrap, sc.ClientID).withSecurity(sc)
	pc.Topic, pc.Acks, pc.Codec = sc.Topic, AcksAll, "none"
	ds, err := p.produce(ctx, pc, slices.Values(records))
	if err != nil {
		return nil, err
	}
	for i, d := range ds {
		if d.Err != nil {
			return nil, fmt.Errorf("record %d: %w", i, d.Err)
		}
	}
	cc := newAdapterConfig(sc.Bootstrap, sc.ClientID).withSecurity(sc)
	cc.Topic = sc.Topic
	s, err := p.stream("consume", cc)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var got []Record
	for len(got) < len(records) {
		ev, err := s.Next(ctx)
		if err != nil {
			return got, err
		}
		var ae *AdapterError
		switch {
		case ev.Err == nil:
			got = append(got, ev.Record)
		case errors.As(ev.Err, &ae) && ae.Connection:
			// a connection the client retries
		default:
			return got, ev.Err
		}
	}
	return got, nil
}
