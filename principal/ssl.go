// Package principal maps authenticated identities to Kafka principal names
// as Kafka 4.4 does: ssl.principal.mapping.rules (SslPrincipalMapper) for
// the distinguished name of a client certificate, and
// sasl.kerberos.principal.to.local.rules (KerberosShortNamer) for Kerberos
// names. Parse errors and the error when no rule applies carry Kafka's
// messages. It is a pure package: strings in, strings out.
package principal

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultSSLRules is ssl.principal.mapping.rules' default: the
// distinguished name is the principal name.
const DefaultSSLRules = "DEFAULT"

// SSLMapper is Kafka's SslPrincipalMapper: rules tried in order, the
// first that matches names the principal.
type SSLMapper struct {
	rules []sslRule
}

type sslRule struct {
	isDefault   bool
	pattern     string
	replacement string
	full, find  *regexp.Regexp
	toLower     bool
	toUpper     bool
}

// Kafka's grammar of a rule and of the list: DEFAULT, or
// RULE:pattern/replacement/ with an optional L or U, where a backslash
// escapes the next character (so "\/" is a slash inside a pattern); commas
// separate rules and may appear inside a pattern. Go's leftmost-first
// matching picks the same split as Java's backtracking.
const sslRulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	sslRuleSplitter = regexp.MustCompile(`\s*(` + sslRulePattern + `)\s*(,\s*|$)`)
	sslRuleParser   = regexp.MustCompile(`^(?:` + sslRulePattern + `)`)
)

// ParseSSLRules parses ssl.principal.mapping.rules. An empty string holds
// no rules, so no name maps (as in Kafka; the config's default is
// DefaultSSLRules).
func ParseSSLRules(rules string) (*SSLMapper, error) {
	m := &SSLMapper{}
	for _, r := range splitSSLRules(rules) {
		loc := sslRuleParser.FindStringSubmatchIndex(r)
		if loc == nil {
			return nil, fmt.Errorf("Invalid rule: %s", r)
		}
		if loc[1] != len(r) {
			return nil, fmt.Errorf("Invalid rule: `%s`, unmatched substring: `%s`", r, r[loc[1]:])
		}
		group := func(n int) (string, bool) {
			if loc[2*n] < 0 {
				return "", false
			}
			return r[loc[2*n]:loc[2*n+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, sslRule{isDefault: true})
			continue
		}
		pattern, ok := group(2)
		if !ok {
			continue // an empty rule is ignored
		}
		replacement, _ := group(4)
		flag, _ := group(6)
		full, find, err := compileJava(pattern)
		if err != nil {
			return nil, fmt.Errorf("Invalid rule: `%s`: %v", r, err)
		}
		m.rules = append(m.rules, sslRule{pattern: pattern, replacement: replacement, full: full, find: find,
			toLower: flag == "L", toUpper: flag == "U"})
	}
	return m, nil
}

// splitSSLRules cuts the trimmed list with the splitter, searching on as
// Java's Matcher.find does (past an empty match by one character).
func splitSSLRules(rules string) []string {
	s := strings.TrimFunc(rules, func(r rune) bool { return r <= ' ' })
	var out []string
	for from := 0; from <= len(s); {
		loc := javaFindAt(sslRuleSplitter, s, from)
		if loc == nil {
			break
		}
		out = append(out, s[loc[2]:loc[3]])
		from = loc[1]
		if loc[0] == loc[1] {
			from++
		}
	}
	return out
}

// NoMatchingRuleError says no rule applies to a name; Kafka then refuses
// the connection.
type NoMatchingRuleError struct{ Message string }

func (e *NoMatchingRuleError) Error() string { return e.Message }

// Name maps a distinguished name (RFC 2253, as Java's
// X500Principal.getName() gives it) to the principal's name. With no rule
// matching it returns a *NoMatchingRuleError; a replacement Java cannot
// expand (a bad group reference) is an error too.
func (m *SSLMapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
	}
	return "", &NoMatchingRuleError{fmt.Sprintf("No rules apply to %s, rules %s", dn, m)}
}

func (r *sslRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	if !r.full.MatchString(dn) {
		return "", false, nil
	}
	repl, err := escapeLiteralBackReferences(r.replacement, r.find.NumSubexp())
	if err != nil {
		return "", false, err
	}
	name, err := javaReplace(r.find, dn, repl, true)
	if err != nil {
		return "", false, err
	}
	switch {
	case r.toLower:
		name = strings.ToLower(name)
	case r.toUpper:
		name = strings.ToUpper(name)
	}
	return name, true, nil
}

// String is Kafka's rendering of the rules, as in its messages.
func (m *SSLMapper) String() string {
	parts := make([]string, len(m.rules))
	for i, r := range m.rules {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r *sslRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.pattern + "/" + r.replacement
	switch {
	case r.toLower:
		s += "/L"
	case r.toUpper:
		s += "/U"
	}
	return s
}
