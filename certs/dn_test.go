package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
	"time"
)

// TestDistinguishedNameAsJava: each subject renders as Java 17's
// X500Principal.getName() rendered the same certificate (the expected
// strings are Java's output), which is what Kafka maps.
func TestDistinguishedNameAsJava(t *testing.T) {
	cn := asn1.ObjectIdentifier{2, 5, 4, 3}
	raw := func(tag int, b []byte) []pkix.AttributeTypeAndValue {
		return []pkix.AttributeTypeAndValue{{Type: cn, Value: asn1.RawValue{Tag: tag, Bytes: b}}}
	}
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	ca, err := NewAuthority(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		subject pkix.Name
		java    string
	}{
		{pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"acme"}}, `CN=alice,OU=eng,O=acme`},
		{pkix.Name{CommonName: "a,b+c", Organization: []string{`x"y`}}, `CN=a\,b\+c,O=x\"y`},
		{pkix.Name{CommonName: " lead", OrganizationalUnit: []string{"trail "}}, `CN=\ lead,OU=trail\ `},
		{pkix.Name{CommonName: "#hash", Country: []string{"DE"}, Province: []string{"BY"}, Locality: []string{"Munich"}}, `CN=\#hash,L=Munich,ST=BY,C=DE`},
		{pkix.Name{CommonName: "multi", OrganizationalUnit: []string{"b", "a"}}, `CN=multi,OU=a+OU=b`},
		{pkix.Name{CommonName: "Jürgen", SerialNumber: "42"}, `2.5.4.5=#13023432,CN=Jürgen`},
		{pkix.Name{CommonName: "dc", ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"}}}, `DC=example,CN=dc`},
		{pkix.Name{CommonName: "uid", ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, Value: "u1"}}}, `UID=u1,CN=uid`},
		{pkix.Name{CommonName: "mail", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "a@b.c"}}}, `1.2.840.113549.1.9.1=#0c056140622e63,CN=mail`},
		{pkix.Name{CommonName: "ia5", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: asn1.RawValue{Tag: 22, Bytes: []byte("a@b.c")}}}}, `1.2.840.113549.1.9.1=#16056140622e63,CN=ia5`},
		{pkix.Name{CommonName: `a<b>c;d=e\f`, StreetAddress: []string{"Main St 1"}, PostalCode: []string{"12345"}}, `CN=a\<b\>c\;d\=e\\f,2.5.4.17=#13053132333435,STREET=Main St 1`},
		{pkix.Name{ExtraNames: raw(20, []byte("t\xc3\xbc61\xfc"))}, "CN=tü61\uFFFD"},
		{pkix.Name{ExtraNames: raw(30, []byte{0, 'b', 0, 'm', 0x20, 0xac})}, "CN=\\00b\\00m \uFFFD"},
		{pkix.Name{ExtraNames: raw(22, []byte("ia5 cn"))}, `CN=ia5 cn`},
		{pkix.Name{CommonName: "a#b  ", Organization: []string{"  x=y, z"}}, `CN=a\#b\ \ ,O=\ \ x\=y\, z`},
		{pkix.Name{CommonName: "nul\x00x", Locality: []string{"tab\there"}}, "CN=nul\\00x,L=tab\there"},
	} {
		c, err := ca.Issue(tc.subject, nil, x509.ExtKeyUsageClientAuth, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := DistinguishedName(leaf); got != tc.java {
			t.Errorf("got  %q\nJava %q", got, tc.java)
		}
	}
}
