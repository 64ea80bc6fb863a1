package sasl

import (
	"crypto/hmac"
	"crypto/subtle"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// scram is the server side of SCRAM (RFC 5802) without channel binding,
// as Kafka runs it: client-first, server-first, client-final, server-final.
type scram struct {
	mech  string
	users Users
	nonce string // the server's part

	step        int
	gs2Header   string // "n,," as the client sent it, echoed in c=
	clientFirst string // client-first-message-bare
	serverFirst string
	fullNonce   string
	user        string
	cred        ScramCredential
	principal   string
	token       bool      // tokenauth=true: user is a delegation token id
	owner       string    // the token's owner
	expiry      time.Time // the token's expiry
}

func (s *scram) Step(token []byte) ([]byte, bool, error) {
	switch s.step {
	case 0:
		s.step = 1
		reply, err := s.first(string(token))
		return reply, false, err
	case 1:
		s.step = 2
		reply, err := s.final(string(token))
		return reply, err == nil, err
	}
	return nil, false, fail(s.mech)
}

// first reads "gs2-header n=user,r=cnonce[,ext...]" and answers
// "r=cnonce+snonce,s=salt,i=iterations".
func (s *scram) first(msg string) ([]byte, error) {
	// gs2-header: cbind flag "n" or "y" (the client could bind but thinks
	// we cannot), an optional a=authzid, then the bare message.
	flag, rest, ok := strings.Cut(msg, ",")
	if !ok || (flag != "n" && flag != "y") {
		return nil, fail(s.mech)
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, fail(s.mech)
	}
	s.gs2Header = flag + "," + authz + ","
	s.clientFirst = bare
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, fail(s.mech)
	}
	user, ok := decodeSaslName(attrs[0][2:])
	cnonce := attrs[1][2:]
	if !ok || user == "" || cnonce == "" || strings.ContainsAny(cnonce, ",") {
		return nil, fail(s.mech)
	}
	if authz != "" {
		a, ok := strings.CutPrefix(authz, "a=")
		if id, dok := decodeSaslName(a); !ok || !dok || id != user {
			return nil, &Failure{Message: "Authentication failed: Client requested an authorization id that is different from username"}
		}
	}
	// Extensions follow the nonce; Kafka reads tokenauth (any case of
	// "true") and ignores the others.
	for _, ext := range attrs[2:] {
		if k, v, _ := strings.Cut(ext, "="); k == "tokenauth" {
			s.token = strings.EqualFold(v, "true")
		}
	}
	var cred ScramCredential
	if s.token {
		tokens, _ := s.users.(Tokens)
		if tokens != nil {
			cred, s.owner, s.expiry, ok = tokens.Token(s.mech, user)
		}
		if tokens == nil || !ok {
			// Kafka's SaslException ("Invalid tokenId"), which the
			// client sees as the generic failure.
			return nil, fail(s.mech)
		}
	} else if cred, ok = s.users.Scram(s.mech, user); !ok {
		return nil, fail(s.mech)
	}
	s.user, s.cred = user, cred
	s.fullNonce = cnonce + s.nonce
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(cred.Iterations)
	return []byte(s.serverFirst), nil
}

// final reads "c=gs2,r=nonce[,ext...],p=proof", checks the proof and
// answers "v=server-signature".
func (s *scram) final(msg string) ([]byte, error) {
	withoutProof, proof64, ok := strings.Cut(msg, ",p=")
	if !ok {
		return nil, fail(s.mech)
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
		return nil, fail(s.mech)
	}
	// Kafka accepts any nonce that ends with the server's full nonce:
	// librdkafka (2.0 at least) sends its own nonce in front of it again.
	if !strings.HasPrefix(attrs[1], "r=") || !strings.HasSuffix(attrs[1], s.fullNonce) {
		return nil, fail(s.mech)
	}
	proof, err := base64.StdEncoding.DecodeString(proof64)
	if err != nil {
		return nil, fail(s.mech)
	}
	h, _ := hashOf(s.mech)
	authMessage := s.clientFirst + "," + s.serverFirst + "," + withoutProof
	signature := hmacOf(h, s.cred.StoredKey, authMessage)
	// Kafka's ScramSaslServer throws a plain SaslException for every
	// failure (an unknown user, a wrong nonce or proof, a token's), which
	// its authenticator answers with the generic message (checked against
	// Kafka 4.4).
	wrong := fail(s.mech)
	if len(proof) != len(signature) {
		return nil, wrong
	}
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ signature[i]
	}
	sum := h()
	sum.Write(clientKey)
	if subtle.ConstantTimeCompare(sum.Sum(nil), s.cred.StoredKey) != 1 {
		return nil, wrong
	}
	s.principal = "User:" + s.user
	if s.token {
		s.principal = "User:" + s.owner
	}
	server := hmac.New(h, s.cred.ServerKey)
	server.Write([]byte(authMessage))
	return []byte("v=" + base64.StdEncoding.EncodeToString(server.Sum(nil))), nil
}

// decodeSaslName undoes RFC 5802's escaping of ',' and '=' in names.
func decodeSaslName(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ',':
			return "", false
		case s[i] != '=':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
			i += 2
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

func (s *scram) Principal() string { return s.principal }
func (s *scram) Expiry() time.Time { return s.expiry }

func (s *scram) TokenAuthenticated() bool { return s.token && s.principal != "" }
