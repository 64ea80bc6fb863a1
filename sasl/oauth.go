package sasl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// oauth is SASL/OAUTHBEARER (RFC 7628). Its validate is Kafka's validator
// callback: by default unsecured JWS tokens (alg "none", no signature), as
// Kafka's default validator accepts for testing, or signed JWTs
// (JWTValidator) with a JWKS configured. The principal is the subject;
// the token's expiry ends the session.
type oauth struct {
	validate  func(token string) (Token, error)
	step      int
	principal string
	expiry    time.Time
	reason    string // why the token was refused, for the broker's log
}

// NewOAuthBearer starts an OAUTHBEARER exchange whose tokens validate
// checks (a *TokenError or *KeyError says why one is refused).
func NewOAuthBearer(validate func(token string) (Token, error)) Exchange {
	return &oauth{validate: validate}
}

// UnsecuredValidator checks unsecured JWS tokens at now, as Kafka's
// OAuthBearerUnsecuredValidatorCallbackHandler does.
func UnsecuredValidator(now time.Time) func(string) (Token, error) {
	return func(token string) (Token, error) {
		sub, exp, err := parseUnsecuredJWS(token, now)
		if err != nil {
			return Token{}, &TokenError{Message: "unsecured token refused: " + err.Error()}
		}
		return Token{Subject: sub, Expiry: exp}, nil
	}
}

// invalidToken is the server's error challenge (RFC 7628 section 3.2.2);
// the client answers with a lone 0x01 and the authentication fails.
var invalidToken = []byte(`{"status":"invalid_token"}`)

func (o *oauth) Step(token []byte) ([]byte, bool, error) {
	o.step++
	switch o.step {
	case 1:
		refused, err := o.first(token)
		if err != nil {
			return nil, false, err
		}
		if refused != nil {
			o.reason = refused.Error()
			return invalidToken, false, nil
		}
		return nil, true, nil
	case 2: // the client's acknowledgement of invalidToken; Kafka fails
		// with the challenge itself as the message
		return nil, false, &Failure{Message: string(invalidToken), Reason: o.reason}
	}
	return nil, false, fail(OAuthBearer)
}

// first reads "gs2-header \x01 [key=value \x01]... auth=SCHEME TOKEN \x01
// [key=value \x01]... \x01" as Kafka's OAuthBearerClientInitialResponse: a
// malformed message fails at once (err), as does an authorization id that
// is not the token's subject; a token the validator refuses is returned
// as refused, for the invalid_token challenge.
func (o *oauth) first(msg []byte) (refused, err error) {
	gs2, kvs, ok := bytes.Cut(msg, []byte{1})
	if !ok || !bytes.HasSuffix(kvs, []byte{1, 1}) {
		return nil, fail(OAuthBearer)
	}
	flag, authz, ok := strings.Cut(string(gs2), ",")
	if !ok || (flag != "n" && flag != "y") || !strings.HasSuffix(authz, ",") {
		return nil, fail(OAuthBearer)
	}
	authz = strings.TrimSuffix(authz, ",")
	if authz != "" && !strings.HasPrefix(authz, "a=") {
		return nil, fail(OAuthBearer)
	}
	authz = strings.TrimPrefix(authz, "a=")
	var scheme, bearer string
	found := false
	for _, kv := range bytes.Split(kvs[:len(kvs)-2], []byte{1}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok || !extensionKey(k) {
			return nil, fail(OAuthBearer)
		}
		if k != "auth" {
			if !extensionValue(v) {
				return nil, fail(OAuthBearer)
			}
			continue
		}
		if scheme, bearer, ok = authValue(v); !ok {
			return nil, fail(OAuthBearer)
		}
		found = true
	}
	if !found {
		return nil, fail(OAuthBearer)
	}
	if !strings.EqualFold(scheme, "bearer") {
		// Kafka's server fails outside its SASL error handling here: the
		// connection closes without an answer.
		return nil, &Failure{Message: "OAUTHBEARER scheme " + scheme + " is not Bearer", NoAnswer: true}
	}
	tok, err := o.validate(bearer)
	if f := (*Failure)(nil); errors.As(err, &f) && f.NoAnswer {
		return nil, err
	}
	if err != nil {
		return err, nil
	}
	if authz != "" && authz != tok.Subject {
		return nil, &Failure{Message: fmt.Sprintf("Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)", authz, tok.Subject)}
	}
	o.principal, o.expiry = "User:"+tok.Subject, tok.Expiry
	return nil, nil
}

// extensionKey and extensionValue are RFC 7628's key and value syntax.
func extensionKey(k string) bool {
	return k != "" && strings.IndexFunc(k, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) < 0
}

func extensionValue(v string) bool {
	return v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 0x21 && r <= 0x7e || r == ' ' || r == '\t' || r == '\r' || r == '\n')
	}) < 0
}

// authValue splits "SCHEME TOKEN": a word, spaces, and a token of
// base64url characters and dots (Kafka's pattern, matched whole).
func authValue(v string) (scheme, token string, ok bool) {
	i := strings.IndexByte(v, ' ')
	if i <= 0 {
		return "", "", false
	}
	scheme, token = v[:i], strings.TrimLeft(v[i:], " ")
	isWord := func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	notWord := func(r rune) bool { return !isWord(r) }
	notToken := func(r rune) bool { return !isWord(r) && r != '-' && r != '.' }
	if strings.IndexFunc(scheme, notWord) >= 0 || token == "" || strings.IndexFunc(token, notToken) >= 0 {
		return "", "", false
	}
	return scheme, token, true
}

// parseUnsecuredJWS checks an unsecured JWS compact serialization
// "header.payload." and returns its subject and expiry.
func parseUnsecuredJWS(token string, now time.Time) (string, time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[2] != "" {
		return "", time.Time{}, errInvalidCredentials
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims map[string]any
	if decodeJSONPart(parts[0], &header) != nil || header.Alg != "none" || decodeJSONPart(parts[1], &claims) != nil {
		return "", time.Time{}, errInvalidCredentials
	}
	sub, _ := claims["sub"].(string)
	exp, ok := claims["exp"].(float64)
	if sub == "" || !ok {
		return "", time.Time{}, errInvalidCredentials
	}
	expiry := secondsToTime(exp)
	if !expiry.After(now) {
		return "", time.Time{}, errInvalidCredentials
	}
	if iat, ok := claims["iat"]; ok {
		f, ok := iat.(float64)
		if !ok || secondsToTime(f).After(now) || f > exp {
			return "", time.Time{}, errInvalidCredentials
		}
	}
	return sub, expiry, nil
}

func secondsToTime(s float64) time.Time {
	whole, frac := math.Modf(s)
	return time.Unix(int64(whole), int64(frac*1e9))
}

func decodeJSONPart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (o *oauth) Principal() string { return o.principal }
func (o *oauth) Expiry() time.Time { return o.expiry }
