package certs

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// The subject as Kafka sees it: the SSL session's peer principal is a
// javax.security.auth.x500.X500Principal, and Kafka maps its getName(),
// Java's RFC 2253 rendering. Go's pkix.Name.String() differs from it for
// some attributes (DC, UID, SERIALNUMBER, POSTALCODE), for '=' and '#'
// inside values and for values re-encoded from other string types, so the
// rendering here follows Java's from the certificate's own DER.

// DistinguishedName is the certificate's subject as Java's
// X500Principal.getName() renders it ("CN=alice,OU=eng,O=acme"): the
// string Kafka's ssl.principal.mapping.rules see.
func DistinguishedName(cert *x509.Certificate) string {
	var rdns []rdnSET
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return cert.Subject.String()
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i < len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, ava := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAVA(&b, ava)
		}
	}
	return b.String()
}

// rdnSET is a relative distinguished name; the name's "SET" suffix makes
// encoding/asn1 read a SET OF.
type rdnSET []rawAVA

type rawAVA struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rfc2253Keywords are the attribute names Java's RFC 2253 form uses; any
// other attribute is its dotted OID with the value's DER in hex.
var rfc2253Keywords = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
	"2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
}

func writeAVA(b *strings.Builder, ava rawAVA) {
	oid := ava.Type.String()
	name, named := rfc2253Keywords[oid]
	value, isString := derString(ava.Value)
	if !named || !isString {
		b.WriteString(map[bool]string{true: name, false: oid}[named])
		b.WriteString("=#")
		b.WriteString(hex.EncodeToString(ava.Value.FullBytes))
		return
	}
	b.WriteString(name)
	b.WriteByte('=')
	b.WriteString(escapeRFC2253(value))
}

// derString decodes the string types Java renders as text. Java 17's
// DerValue reads all of them, T61String and BMPString too, as UTF-8 bytes,
// each malformed byte becoming U+FFFD.
func derString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, asn1.TagT61String, asn1.TagBMPString, 27: // 27: GeneralString
		var b strings.Builder
		for rest := v.Bytes; len(rest) > 0; {
			r, size := utf8.DecodeRune(rest)
			b.WriteRune(r) // utf8.RuneError for a malformed byte
			rest = rest[size:]
		}
		return b.String(), true
	}
	return "", false
}

// escapeRFC2253 escapes as Java's AVA.toRFC2253String: a backslash
// before each of ,=+<>#;"\ anywhere, NUL as \00, and before every leading
// and trailing space or carriage return.
func escapeRFC2253(v string) string {
	var esc []rune
	for _, c := range v {
		switch {
		case strings.ContainsRune(`,=+<>#;"\`, c):
			esc = append(esc, '\\', c)
		case c == 0:
			esc = append(esc, '\\', '0', '0')
		default:
			esc = append(esc, c)
		}
	}
	blank := func(c rune) bool { return c == ' ' || c == '\r' }
	lead, trail := 0, len(esc)-1
	for lead < len(esc) && blank(esc[lead]) {
		lead++
	}
	for trail >= 0 && blank(esc[trail]) {
		trail--
	}
	var b strings.Builder
	for i, c := range esc {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
