package sasl

// Signing JWTs: what the built-in test issuer and tests use to make tokens
// a broker validates.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
)

// SignJWT makes a JWS compact serialization of claims, signed with key
// under alg (one of the algorithms ValidateJWT verifies), with kid in its
// header if not empty.
func SignJWT(claims map[string]any, alg, kid string, key crypto.Signer) (string, error) {
	a, ok := jwsAlgs[alg]
	if !ok {
		return "", fmt.Errorf("algorithm %q is not supported", alg)
	}
	if kty(key.Public()) != a.kty {
		return "", fmt.Errorf("a %T cannot sign %s", key.Public(), alg)
	}
	header := map[string]string{"alg": alg, "typ": "JWT"}
	if kid != "" {
		header["kid"] = kid
	}
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	signed := b64(h) + "." + b64(p)
	var sig []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(signed))
	default:
		hh := a.hash.New()
		hh.Write([]byte(signed))
		digest := hh.Sum(nil)
		var opts crypto.SignerOpts = a.hash
		if a.pss {
			opts = &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: a.hash}
		}
		if sig, err = key.Sign(rand.Reader, digest, opts); err != nil {
			return "", err
		}
		if ec, ok := key.Public().(*ecdsa.PublicKey); ok {
			if ec.Curve.Params().Name != a.curve {
				return "", fmt.Errorf("%s needs a %s key", alg, a.curve)
			}
			if sig, err = fixedSizeSignature(sig, (ec.Curve.Params().BitSize+7)/8); err != nil {
				return "", err
			}
		}
	}
	return signed + "." + b64(sig), nil
}

// fixedSizeSignature turns an ASN.1 ECDSA signature into JWS's r||s.
func fixedSizeSignature(der []byte, size int) ([]byte, error) {
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &rs); err != nil {
		return nil, err
	}
	out := make([]byte, 2*size)
	rs.R.FillBytes(out[:size])
	rs.S.FillBytes(out[size:])
	return out, nil
}
