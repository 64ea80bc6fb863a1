package sasl

// JSON Web Keys (RFC 7517) and JWS signatures (RFC 7515, algorithms of
// RFC 7518 and RFC 8037) as the broker's OAUTHBEARER validator needs them:
// the public keys of a JWKS document, the choice of a key for a token's
// header, and the signature check. What Kafka's jose4j setup verifies with
// public keys is here: RS256/384/512, PS256/384/512, ES256/384/512 and
// EdDSA (Ed25519); HMAC needs a shared secret, which a JWKS endpoint does
// not publish.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	_ "crypto/sha256" // SHA-256 for RS256, PS256, ES256
	_ "crypto/sha512" // SHA-384 and SHA-512
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// JWK is one public key of a JWKS document.
type JWK struct {
	KeyID     string           // kid
	Use       string           // use: "sig", "enc" or empty
	Algorithm string           // alg, if the key is bound to one
	Key       crypto.PublicKey // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

type jwkJSON struct {
	Kty string `json:"kty"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
}

// ParseJWKS reads a JWKS document ({"keys":[...]}). Keys of a type it
// cannot verify with (oct, unknown curves) are skipped, as jose4j never
// selects them for a public-key signature; a malformed key of a known type
// is an error.
func ParseJWKS(doc []byte) ([]JWK, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New(`JWKS: no "keys" member`)
	}
	var out []JWK
	for i, raw := range set.Keys {
		var j jwkJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("JWKS key %d: %w", i, err)
		}
		k, err := j.publicKey()
		if err != nil {
			return nil, fmt.Errorf("JWKS key %d (kid %q): %w", i, j.Kid, err)
		}
		if k != nil {
			out = append(out, JWK{KeyID: j.Kid, Use: j.Use, Algorithm: j.Alg, Key: k})
		}
	}
	return out, nil
}

func (j jwkJSON) publicKey() (crypto.PublicKey, error) {
	b64 := func(s, name string) ([]byte, error) {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("bad %q member", name)
		}
		return b, nil
	}
	switch j.Kty {
	case "RSA":
		n, err := b64(j.N, "n")
		if err != nil {
			return nil, err
		}
		e, err := b64(j.E, "e")
		if err != nil {
			return nil, err
		}
		ev := new(big.Int).SetBytes(e)
		if !ev.IsInt64() || ev.Int64() < 3 || ev.Int64() > 1<<31-1 {
			return nil, errors.New(`bad "e" member`)
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(ev.Int64())}, nil
	case "EC":
		curve := curveByName(j.Crv)
		if curve == nil {
			return nil, nil
		}
		x, err := b64(j.X, "x")
		if err != nil {
			return nil, err
		}
		y, err := b64(j.Y, "y")
		if err != nil {
			return nil, err
		}
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return nil, fmt.Errorf("coordinates of %d bytes, want %d for %s", len(x), size, j.Crv)
		}
		// Through ecdh-style validation: the point must be on the curve.
		point := append([]byte{4}, append(x, y...)...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, point)
		if err != nil {
			return nil, fmt.Errorf("point not on %s", j.Crv)
		}
		return pub, nil
	case "OKP":
		if j.Crv != "Ed25519" {
			return nil, nil
		}
		x, err := b64(j.X, "x")
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, errors.New(`bad "x" member`)
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, nil
}

func curveByName(crv string) elliptic.Curve {
	switch crv {
	case "P-256":
		return elliptic.P256()
	case "P-384":
		return elliptic.P384()
	case "P-521":
		return elliptic.P521()
	}
	return nil
}

// MarshalJWKS writes public keys as a JWKS document, each with its kid,
// "use":"sig" and its alg.
func MarshalJWKS(keys []JWK) ([]byte, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	set := struct {
		Keys []jwkJSON `json:"keys"`
	}{Keys: []jwkJSON{}}
	for _, k := range keys {
		j := jwkJSON{Kid: k.KeyID, Use: k.Use, Alg: k.Algorithm}
		switch pub := k.Key.(type) {
		case *rsa.PublicKey:
			j.Kty, j.N, j.E = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
		case *ecdsa.PublicKey:
			raw, err := pub.Bytes()
			if err != nil {
				return nil, err
			}
			size := (len(raw) - 1) / 2
			j.Kty, j.Crv, j.X, j.Y = "EC", pub.Curve.Params().Name, b64(raw[1:1+size]), b64(raw[1+size:])
		case ed25519.PublicKey:
			j.Kty, j.Crv, j.X = "OKP", "Ed25519", b64(pub)
		default:
			return nil, fmt.Errorf("key %q: unsupported key type %T", k.KeyID, k.Key)
		}
		set.Keys = append(set.Keys, j)
	}
	return json.Marshal(set)
}

// jwsAlg is what a JWS "alg" needs of a key and how it verifies.
type jwsAlg struct {
	kty   string
	hash  crypto.Hash
	curve string // EC algorithms: the curve they are defined on
	pss   bool
}

var jwsAlgs = map[string]jwsAlg{
	"RS256": {kty: "RSA", hash: crypto.SHA256},
	"RS384": {kty: "RSA", hash: crypto.SHA384},
	"RS512": {kty: "RSA", hash: crypto.SHA512},
	"PS256": {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384": {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512": {kty: "RSA", hash: crypto.SHA512, pss: true},
	"ES256": {kty: "EC", hash: crypto.SHA256, curve: "P-256"},
	"ES384": {kty: "EC", hash: crypto.SHA384, curve: "P-384"},
	"ES512": {kty: "EC", hash: crypto.SHA512, curve: "P-521"},
	"EdDSA": {kty: "OKP"},
}

// minRSABits is jose4j's floor for RSA signature keys.
const minRSABits = 2048

func kty(k crypto.PublicKey) string {
	switch k.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "EC"
	case ed25519.PublicKey:
		return "OKP"
	}
	return ""
}

// candidates are the keys jose4j's verification key selector considers
// for a header: the kid's (when the header names one), of the algorithm's
// key type and curve, and not meant for encryption. A key's own "alg" is
// not looked at: Kafka 4.4 verifies a PS256 token with a key published as
// RS256 (compat/reference's TestOAuthReference).
func candidates(keys []JWK, alg, kid string) []JWK {
	a := jwsAlgs[alg]
	var out []JWK
	for _, k := range keys {
		if (kid != "" && k.KeyID != kid) || kty(k.Key) != a.kty || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if ec, ok := k.Key.(*ecdsa.PublicKey); ok && ec.Curve.Params().Name != a.curve {
			continue
		}
		out = append(out, k)
	}
	return out
}

// verify checks sig over signed with key under alg.
func verify(alg string, key crypto.PublicKey, signed, sig []byte) error {
	a, ok := jwsAlgs[alg]
	if !ok {
		return fmt.Errorf("algorithm %q is not supported", alg)
	}
	var digest []byte
	if a.hash != 0 {
		h := a.hash.New()
		h.Write(signed)
		digest = h.Sum(nil)
	}
	switch pub := key.(type) {
	case *rsa.PublicKey:
		if pub.N.BitLen() < minRSABits {
			return fmt.Errorf("an RSA key of size %d bits is too small: %d bits or larger must be used with the RSA algorithms", pub.N.BitLen(), minRSABits)
		}
		if a.pss {
			return rsa.VerifyPSS(pub, a.hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		}
		return rsa.VerifyPKCS1v15(pub, a.hash, digest, sig)
	case *ecdsa.PublicKey:
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return errors.New("invalid signature length")
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(pub, digest, r, s) {
			return errors.New("signature mismatch")
		}
		return nil
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, signed, sig) {
			return errors.New("signature mismatch")
		}
		return nil
	}
	return fmt.Errorf("unsupported key type %T", key)
}

// JWSAlgorithms are the algorithms JWTValidator verifies and SignJWT signs.
func JWSAlgorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// SupportedJWSAlgorithm says whether alg is one of JWSAlgorithms.
func SupportedJWSAlgorithm(alg string) bool { _, ok := jwsAlgs[alg]; return ok }
