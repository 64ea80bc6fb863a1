package server

// Where brokers get the keys that signed OAUTHBEARER tokens, as Kafka's
// VerificationKeyResolverFactory: a file:// JWKS (read again when it
// changes), an http(s):// JWKS refreshed every
// sasl.oauthbearer.jwks.endpoint.refresh.ms and, when a token names a kid
// it does not know, once ahead of time (at most once a minute per kid, as
// Kafka's RefreshingHttpsJwks), or the built-in issuer's key. The token
// that found the kid missing is still refused: the refresh is for the next
// one. Intervals are on the cluster's clock; a failed fetch is retried on
// the wall clock, 100 ms doubling to 10 s (Kafka's retry backoff
// defaults), since it waits on the network.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
)

type jwksSource interface {
	keys() []sasl.JWK
	// missing is told of a kid no key matched; it says whether that asked
	// for a refresh.
	missing(kid string) bool
}

// oauthValidation is how the brokers validate signed tokens.
type oauthValidation struct {
	v   *sasl.JWTValidator
	src jwksSource
}

// newOAuthValidation sets up signed-token validation, nil when neither a
// JWKS URL nor the issuer is configured (unsecured tokens then).
func (c *Cluster) newOAuthValidation() (*oauthValidation, error) {
	o := c.cfg.OAuth
	var src jwksSource
	switch {
	case o.JWKSEndpointURL != "":
		u, _ := url.Parse(o.JWKSEndpointURL)
		if u.Scheme == "file" {
			f := &fileJWKS{c: c, path: u.Path}
			if _, err := f.load(); err != nil {
				return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url: %w", err)
			}
			src = f
		} else {
			src = c.newHTTPJWKS(o.JWKSEndpointURL)
		}
	case c.issuer != nil:
		src = staticJWKS(c.issuer.jwks)
	default:
		return nil, nil
	}
	return &oauthValidation{v: o.validator(), src: src}, nil
}

// validate is the OAUTHBEARER validator callback: a token checked at
// now() when it arrives.
func (ov *oauthValidation) validate(now func() time.Time) func(string) (sasl.Token, error) {
	return func(token string) (sasl.Token, error) {
		tok, err := ov.v.Validate(token, ov.src.keys(), now())
		var ke *sasl.KeyError
		if errors.As(err, &ke) {
			ov.src.missing(ke.KeyID)
		}
		return tok, err
	}
}

type staticJWKS []sasl.JWK

func (s staticJWKS) keys() []sasl.JWK  { return s }
func (staticJWKS) missing(string) bool { return false }

// fileJWKS is a JWKS file, read again when its size or time changes; a
// file that no longer parses leaves the keys it had.
type fileJWKS struct {
	c    *Cluster
	path string
	mu   sync.Mutex
	stat os.FileInfo
	jwks []sasl.JWK
}

func (f *fileJWKS) load() ([]sasl.JWK, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.path)
	if err != nil {
		return f.jwks, err
	}
	if f.stat != nil && st.ModTime().Equal(f.stat.ModTime()) && st.Size() == f.stat.Size() {
		return f.jwks, nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return f.jwks, err
	}
	keys, err := sasl.ParseJWKS(b)
	if err != nil {
		return f.jwks, fmt.Errorf("%s: %w", f.path, err)
	}
	f.stat, f.jwks = st, keys
	if f.c != nil {
		f.c.emit(EventJWKSRefreshed, func(e *Event) { e.Reason, e.Detail = "file://"+f.path, keyIDs(keys) })
	}
	return keys, nil
}

func (f *fileJWKS) keys() []sasl.JWK  { k, _ := f.load(); return k }
func (*fileJWKS) missing(string) bool { return false }

// missingKidInterval is Kafka's MISSING_KEY_ID_CACHE_IN_FLIGHT_MS.
const missingKidInterval = time.Minute

// httpJWKS is a JWKS fetched over HTTP by one goroutine, woken by the
// refresh job and by missing kids.
type httpJWKS struct {
	c    *Cluster
	url  string
	wake chan struct{}

	mu          sync.Mutex
	jwks        []sasl.JWK
	missingKids map[string]time.Time // kid -> when a refresh was last asked for it
}

func (c *Cluster) newHTTPJWKS(u string) *httpJWKS {
	h := &httpJWKS{c: c, url: u, wake: make(chan struct{}, 1), missingKids: map[string]time.Time{}}
	h.wake <- struct{}{} // the first fetch, in the background: the URL may be this process's control port
	c.wg.Add(1)
	go h.run()
	c.jwksRefresh = c.every(func() time.Duration { return c.cfg.OAuth.JWKSEndpointRefresh }, h.kick)
	return h
}

func (h *httpJWKS) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *httpJWKS) keys() []sasl.JWK {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.jwks
}

func (h *httpJWKS) missing(kid string) bool {
	now := h.c.now()
	h.mu.Lock()
	last, seen := h.missingKids[kid]
	if seen && now.Sub(last) < missingKidInterval {
		h.mu.Unlock()
		return false
	}
	if len(h.missingKids) >= 16 { // Kafka keeps 16 kids; forget them all rather than track age
		clear(h.missingKids)
	}
	h.missingKids[kid] = now
	h.mu.Unlock()
	h.kick()
	return true
}

func (h *httpJWKS) run() {
	defer h.c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.c.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-h.c.closing:
			return
		case <-h.wake:
		}
		backoff := 100 * time.Millisecond
		for {
			err := h.fetch(ctx)
			if err == nil {
				break
			}
			h.c.log.Warn("JWKS fetch failed", "url", h.url, "err", err, "retry in", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-h.c.closing:
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, 10*time.Second)
		}
	}
}

func (h *httpJWKS) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", h.url, resp.Status)
	}
	keys, err := sasl.ParseJWKS(body)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.jwks = keys
	h.mu.Unlock()
	h.c.emit(EventJWKSRefreshed, func(e *Event) { e.Reason, e.Detail = h.url, keyIDs(keys) })
	return nil
}

func keyIDs(keys []sasl.JWK) string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.KeyID
	}
	return strings.Join(ids, ",")
}
