package server

// Principal mapping (ssl.principal.mapping.rules, package principal): the
// subject of a verified client certificate on an SSL listener becomes the
// connection's principal through the rules, as Kafka's
// DefaultKafkaPrincipalBuilder does. A certificate no rule maps is refused:
// Kafka fails to build the principal and closes the connection.
//
// sasl.kerberos.principal.to.local.rules is parsed for its errors only:
// Kafka applies it to GSSAPI logins alone (DefaultKafkaPrincipalBuilder
// checks the mechanism), and fakekafka has no GSSAPI.

import (
	"crypto/x509"
	"fmt"

	"github.com/fakekafka/fakekafka/certs"
	"github.com/fakekafka/fakekafka/principal"
)

// sslRules is the value of ssl.principal.mapping.rules, Kafka's default
// when unset.
func (c *Config) sslRules() string {
	if c.SSLPrincipalMappingRules == "" {
		return principal.DefaultSSLRules
	}
	return c.SSLPrincipalMappingRules
}

// kerberosRealm is the realm DEFAULT rules accept: Kafka takes it from the
// Kerberos configuration, which fakekafka does not have.
const kerberosRealm = ""

// checkPrincipalRules refuses rules Kafka would refuse.
func (c *Config) checkPrincipalRules() error {
	if _, err := principal.ParseSSLRules(c.sslRules()); err != nil {
		return fmt.Errorf("ssl.principal.mapping.rules: %v", err)
	}
	if c.SASLKerberosPrincipalToLocalRules != "" {
		if _, err := principal.ParseKerberosRules(c.SASLKerberosPrincipalToLocalRules, kerberosRealm); err != nil {
			return fmt.Errorf("sasl.kerberos.principal.to.local.rules: %v", err)
		}
	}
	return nil
}

// newSSLMapper parses the checked rules.
func newSSLMapper(cfg Config) *principal.SSLMapper {
	m, err := principal.ParseSSLRules(cfg.sslRules())
	if err != nil { // checkPrincipalRules passed them
		panic(err)
	}
	return m
}

// sslPrincipal is the principal of a client certificate: "User:" and the
// name the rules map its subject to.
func (c *Cluster) sslPrincipal(cert *x509.Certificate) (string, error) {
	dn := certs.DistinguishedName(cert)
	name, err := c.sslMapper.Name(dn)
	if err != nil {
		return "", fmt.Errorf("Failed to map name for '%s' based on SSL principal mapping rules: %w", dn, err)
	}
	return "User:" + name, nil
}
