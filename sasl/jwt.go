package sasl

// Signed JWT validation as Kafka 4.4's broker does it with
// sasl.oauthbearer.jwks.endpoint.url set (BrokerJwtValidator on jose4j's
// JwtConsumer): the signature must verify with a key of the JWKS ("none" is
// refused), exp and iat are required, exp and nbf are checked against the
// time given with clock.skew.seconds of leeway, the issuer and audience
// against the expected ones (a token naming an audience is refused when
// none is expected, as jose4j does), then the sub and scope claims are
// read under their configured names. The caller passes the keys and the
// time: this file touches no network and no clock.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// JWTValidator holds the broker's sasl.oauthbearer.* validation settings.
type JWTValidator struct {
	// ExpectedAudience is sasl.oauthbearer.expected.audience: when set the
	// token's aud must name one of them.
	ExpectedAudience []string
	// AllowUnverifiedAudience is sasl.oauthbearer.allow.unverified.audience
	// (Kafka 4.4): aud is not checked at all.
	AllowUnverifiedAudience bool
	// ExpectedIssuer is sasl.oauthbearer.expected.issuer: when set the
	// token's iss must be it.
	ExpectedIssuer string
	// ScopeClaimName and SubClaimName are sasl.oauthbearer.scope.claim.name
	// and sasl.oauthbearer.sub.claim.name; defaults "scope" and "sub".
	ScopeClaimName, SubClaimName string
	// ClockSkew is sasl.oauthbearer.clock.skew.seconds (Kafka's default is
	// 30 s; zero here is zero). Whole seconds count, as jose4j's.
	ClockSkew time.Duration
}

// Token is a validated OAUTHBEARER token.
type Token struct {
	Subject  string   // the sub claim (under its configured name), trimmed
	Scopes   []string // the scope claim, sorted
	Expiry   time.Time
	IssuedAt time.Time // zero if the token has none (unsecured tokens)
}

// TokenError is a token the validator refused; Message says why, in the
// words Kafka logs. The client is told only {"status":"invalid_token"}.
type TokenError struct{ Message string }

func (e *TokenError) Error() string { return e.Message }

// KeyError is a token whose header no key of the JWKS matches: Kafka then
// refreshes the JWKS ahead of time, once per kid a minute.
type KeyError struct {
	KeyID  string
	Header string
}

func (e *KeyError) Error() string {
	return "Could not validate the access token: Unable to find a suitable verification key for JWS w/ header " + e.Header
}

func tokenErr(format string, args ...any) error {
	return &TokenError{Message: fmt.Sprintf(format, args...)}
}

// Validate checks a signed token against keys at now.
func (v *JWTValidator) Validate(token string, keys []JWK, now time.Time) (Token, error) {
	header, claims, signed, sig, err := splitJWT(token)
	if err != nil {
		return Token{}, err
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(header, &hdr); err != nil {
		return Token{}, tokenErr("Could not validate the access token: Unable to parse the JWS header: %v", err)
	}
	if hdr.Alg == "none" {
		return Token{}, tokenErr("Could not validate the access token: 'none' is a blocked algorithm for this context.")
	}
	if _, ok := jwsAlgs[hdr.Alg]; !ok {
		return Token{}, tokenErr("Could not validate the access token: %q is an unknown, unsupported or unavailable alg algorithm.", hdr.Alg)
	}
	cands := candidates(keys, hdr.Alg, hdr.Kid)
	if len(cands) == 0 {
		return Token{}, &KeyError{KeyID: hdr.Kid, Header: string(header)}
	}
	var verr error
	for _, k := range cands {
		if verr = verify(hdr.Alg, k.Key, signed, sig); verr == nil {
			break
		}
	}
	if verr != nil {
		return Token{}, tokenErr("Could not validate the access token: JWS signature is invalid: %v", verr)
	}
	c, err := parseClaims(claims)
	if err != nil {
		return Token{}, err
	}
	if problems := v.checkClaims(c, now); len(problems) > 0 {
		return Token{}, tokenErr("Could not validate the access token: JWT rejected due to invalid claims or other invalid content. Additional details: [%s]", strings.Join(problems, ", "))
	}
	return v.token(c)
}

// splitJWT checks the three sections (Kafka's SerializedJwt) and decodes
// the header, payload and signature.
func splitJWT(token string) (header, claims, signed, sig []byte, err error) {
	token = strings.TrimSpace(token)
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, nil, nil, nil, tokenErr("Malformed JWT provided; expected three sections (header, payload, and signature), but %d sections provided", len(parts))
	}
	for i, name := range []string{"header", "payload", "signature"} {
		if strings.TrimSpace(parts[i]) == "" {
			return nil, nil, nil, nil, tokenErr("Malformed JWT provided; expected at least a %s section", name)
		}
	}
	dec := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	if header, err = dec(parts[0]); err == nil {
		if claims, err = dec(parts[1]); err == nil {
			sig, err = dec(parts[2])
		}
	}
	if err != nil {
		return nil, nil, nil, nil, tokenErr("Could not validate the access token: invalid base64url encoding: %v", err)
	}
	return header, claims, []byte(parts[0] + "." + parts[1]), sig, nil
}

// claims is a JWT claims set with its numbers kept exact.
type claims map[string]any

func parseClaims(b []byte) (claims, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var c claims
	if err := d.Decode(&c); err != nil || c == nil {
		return nil, tokenErr("Could not validate the access token: Unable to parse the JWT claims: %v", err)
	}
	return c, nil
}

// numericDate reads a NumericDate claim as whole seconds (jose4j drops
// the fraction); present is false if the claim is absent or null.
func (c claims) numericDate(name string) (secs int64, present bool, err error) {
	v, ok := c[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, true, fmt.Errorf("The value of the '%s' claim is not the expected type (%v - not a number)", name, v)
	}
	if i, err := n.Int64(); err == nil {
		return i, true, nil
	}
	f, err := n.Float64()
	if err != nil {
		return 0, true, fmt.Errorf("The value of the '%s' claim is not the expected type (%v - not a number)", name, v)
	}
	return int64(f), true, nil
}

// audience reads aud, a string or an array of strings.
func (c claims) audience() ([]string, bool, error) {
	switch a := c["aud"].(type) {
	case nil:
		return nil, false, nil
	case string:
		return []string{a}, true, nil
	case []any:
		out := make([]string, 0, len(a))
		for _, x := range a {
			s, ok := x.(string)
			if !ok {
				return nil, true, fmt.Errorf("The value of the 'aud' claim is not the expected type (%v)", c["aud"])
			}
			out = append(out, s)
		}
		return out, true, nil
	}
	return nil, true, fmt.Errorf("The value of the 'aud' claim is not the expected type (%v)", c["aud"])
}

// checkClaims applies jose4j's claim validators in its order: audience,
// issuer, then the dates; it lists every problem, as jose4j does.
func (v *JWTValidator) checkClaims(c claims, now time.Time) []string {
	var problems []string
	aud, hasAud, err := c.audience()
	switch {
	case v.AllowUnverifiedAudience:
	case err != nil:
		problems = append(problems, err.Error())
	case !hasAud && len(v.ExpectedAudience) > 0:
		problems = append(problems, "No Audience (aud) claim present.")
	case hasAud && !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(v.ExpectedAudience, a) }):
		msg := fmt.Sprintf("Audience (aud) claim [%s]", strings.Join(aud, ", "))
		if len(v.ExpectedAudience) == 0 {
			msg += " present in the JWT but no expected audience value(s) were provided to the JWT Consumer."
		} else {
			msg += " doesn't contain an acceptable identifier."
		}
		if len(v.ExpectedAudience) == 1 {
			msg += " Expected " + v.ExpectedAudience[0] + " as an aud value."
		} else {
			msg += " Expected one of [" + strings.Join(v.ExpectedAudience, ", ") + "] as an aud value."
		}
		problems = append(problems, msg)
	}
	if v.ExpectedIssuer != "" {
		iss, ok := c["iss"].(string)
		switch {
		case c["iss"] == nil:
			problems = append(problems, "No Issuer (iss) claim present but was expecting "+v.ExpectedIssuer)
		case !ok:
			problems = append(problems, fmt.Sprintf("The value of the 'iss' claim is not the expected type (%v)", c["iss"]))
		case iss != v.ExpectedIssuer:
			problems = append(problems, fmt.Sprintf("Issuer (iss) claim value (%s) doesn't match expected value of %s", iss, v.ExpectedIssuer))
		}
	}
	return append(problems, v.checkDates(c, now)...)
}

// checkDates is jose4j's NumericDateValidator with exp and iat required.
func (v *JWTValidator) checkDates(c claims, now time.Time) []string {
	exp, hasExp, err := c.numericDate("exp")
	if err != nil {
		return []string{err.Error()}
	}
	iat, hasIat, err := c.numericDate("iat")
	if err != nil {
		return []string{err.Error()}
	}
	nbf, hasNbf, err := c.numericDate("nbf")
	if err != nil {
		return []string{err.Error()}
	}
	if !hasExp {
		return []string{"No Expiration Time (exp) claim present."}
	}
	if !hasIat {
		return []string{"No Issued At (iat) claim present."}
	}
	skew := int64(v.ClockSkew / time.Second)
	eval := now.Unix()
	skewMsg := "."
	if skew > 0 {
		skewMsg = fmt.Sprintf(" (even when providing %d seconds of leeway to account for clock skew).", skew)
	}
	nd := numericDateString
	if eval-skew >= exp {
		return []string{fmt.Sprintf("The JWT is no longer valid - the evaluation time %s is on or after the Expiration Time (exp=%s) claim value%s", nd(eval), nd(exp), skewMsg)}
	}
	if exp < iat {
		return []string{fmt.Sprintf("The Expiration Time (exp=%s) claim value cannot be before the Issued At (iat=%s) claim value.", nd(exp), nd(iat))}
	}
	if hasNbf && exp < nbf {
		return []string{fmt.Sprintf("The Expiration Time (exp=%s) claim value cannot be before the Not Before (nbf=%s) claim value.", nd(exp), nd(nbf))}
	}
	if hasNbf && eval+skew < nbf {
		return []string{fmt.Sprintf("The JWT is not yet valid as the evaluation time %s is before the Not Before (nbf=%s) claim time%s", nd(eval), nd(nbf), skewMsg)}
	}
	return nil
}

// numericDateString is jose4j's NumericDate.toString, in UTC.
func numericDateString(secs int64) string {
	return fmt.Sprintf("NumericDate{%d -> %s}", secs, time.Unix(secs, 0).UTC().Format("January 2, 2006, 3:04:05 PM UTC"))
}

// token reads the sub and scope claims as Kafka's ClaimValidationUtils.
func (v *JWTValidator) token(c claims) (Token, error) {
	scopeName, subName := cmpOr(v.ScopeClaimName, "scope"), cmpOr(v.SubClaimName, "sub")
	var scopes []string
	switch s := c[scopeName].(type) {
	case string:
		scopes = []string{s}
	case []any:
		for _, x := range s {
			str, ok := x.(string)
			if !ok {
				// Kafka's validator fails outside its error handling here
				// (a ClassCastException): the connection closes unanswered.
				return Token{}, &Failure{Message: fmt.Sprintf("the %s claim holds %v, not a string", scopeName, x), NoAnswer: true}
			}
			scopes = append(scopes, str)
		}
	}
	seen := map[string]bool{}
	for i, s := range scopes {
		s, err := claimString(scopeName, &s)
		if err != nil {
			return Token{}, err
		}
		if seen[s] {
			return Token{}, tokenErr("%s value must not contain duplicates - %s already present", scopeName, s)
		}
		seen[s], scopes[i] = true, s
	}
	slices.Sort(scopes)
	var sub *string
	switch s := c[subName].(type) {
	case nil:
	case string:
		sub = &s
	default:
		return Token{}, tokenErr("Could not extract the '%s' claim from the access token", subName)
	}
	subject, err := claimString(subName, sub)
	if err != nil {
		return Token{}, err
	}
	exp, _, _ := c.numericDate("exp")
	iat, _, _ := c.numericDate("iat")
	if exp < 0 {
		return Token{}, tokenErr("exp value must be non-negative; value given was \"%d\"", exp*1000)
	}
	if iat < 0 {
		return Token{}, tokenErr("iat value must be null or non-negative; value given was \"%d\"", iat*1000)
	}
	return Token{Subject: subject, Scopes: scopes, Expiry: time.Unix(exp, 0), IssuedAt: time.Unix(iat, 0)}, nil
}

// claimString is ClaimValidationUtils' string check: present, not empty,
// not only whitespace; the value trimmed.
func claimString(name string, v *string) (string, error) {
	switch {
	case v == nil:
		return "", tokenErr("%s value must be non-null", name)
	case *v == "":
		return "", tokenErr("%s value must be non-empty", name)
	case strings.TrimSpace(*v) == "":
		return "", tokenErr("%s value must not contain only whitespace", name)
	}
	return strings.TrimSpace(*v), nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
