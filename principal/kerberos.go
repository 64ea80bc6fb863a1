package principal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DefaultKerberosRules is sasl.kerberos.principal.to.local.rules' default.
const DefaultKerberosRules = "DEFAULT"

// KerberosShortNamer is Kafka's KerberosShortNamer: auth_to_local rules
// (RULE:[n:format](match)s/from/to/g/L, or DEFAULT) that turn a Kerberos
// name (service/host@REALM) into a short name.
type KerberosShortNamer struct {
	rules []kerberosRule
}

type kerberosRule struct {
	defaultRealm string
	isDefault    bool
	components   int
	format       string
	match        string
	matchRE      *regexp.Regexp // anchored: Java's matches()
	from         string
	fromRE       *regexp.Regexp
	to           string
	repeat       bool
	toLower      bool
	toUpper      bool
}

var (
	kerberosRuleParser = regexp.MustCompile(`^((DEFAULT)|((RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?/?(L|U)?)))`)
	kerberosParameter  = regexp.MustCompile(`([^$]*)(\$(\d*))?`)
	kerberosNonSimple  = regexp.MustCompile(`[/@]`)
	kerberosName       = regexp.MustCompile(`^([^/@]*)(/([^/@]*))?@([^/@]*)$`)
	listSeparator      = regexp.MustCompile(`\s*,\s*`)
)

// SplitList parses a LIST config value as Kafka's ConfigDef does: trimmed,
// empty means no items, otherwise split at commas and the spaces around
// them.
func SplitList(value string) []string {
	value = strings.TrimFunc(value, func(r rune) bool { return r <= ' ' })
	if value == "" {
		return []string{}
	}
	return listSeparator.Split(value, -1)
}

// ParseKerberosRules parses sasl.kerberos.principal.to.local.rules (a LIST
// value) with the realm DEFAULT rules accept. Its errors are Kafka's: an
// empty item is refused by the config's validator, a bad rule by the
// parser.
func ParseKerberosRules(value, defaultRealm string) (*KerberosShortNamer, error) {
	items := SplitList(value)
	for _, it := range items {
		if it == "" {
			return nil, fmt.Errorf("Configuration 'sasl.kerberos.principal.to.local.rules' values must not be empty.")
		}
	}
	n := &KerberosShortNamer{}
	for _, it := range items {
		loc := kerberosRuleParser.FindStringSubmatchIndex(it)
		if loc == nil {
			return nil, fmt.Errorf("Invalid rule: %s", it)
		}
		if loc[1] != len(it) {
			return nil, fmt.Errorf("Invalid rule: `%s`, unmatched substring: `%s`", it, it[loc[1]:])
		}
		group := func(i int) (string, bool) {
			if loc[2*i] < 0 {
				return "", false
			}
			return it[loc[2*i]:loc[2*i+1]], true
		}
		if _, ok := group(2); ok {
			n.rules = append(n.rules, kerberosRule{defaultRealm: defaultRealm, isDefault: true})
			continue
		}
		digits, _ := group(5)
		components, err := strconv.ParseInt(digits, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("For input string: \"%s\"", digits)
		}
		r := kerberosRule{defaultRealm: defaultRealm, components: int(components)}
		r.format, _ = group(6)
		var hasMatch, hasFrom bool
		r.match, hasMatch = group(8)
		r.from, hasFrom = group(10)
		r.to, _ = group(11)
		g, _ := group(12)
		flag, _ := group(13)
		r.repeat, r.toLower, r.toUpper = g == "g", flag == "L", flag == "U"
		if hasMatch {
			if r.matchRE, _, err = compileJava(r.match); err != nil {
				return nil, fmt.Errorf("Invalid rule: `%s`: %v", it, err)
			}
		}
		if hasFrom {
			if _, r.fromRE, err = compileJava(r.from); err != nil {
				return nil, fmt.Errorf("Invalid rule: `%s`: %v", it, err)
			}
		}
		n.rules = append(n.rules, r)
	}
	return n, nil
}

// ShortName maps a Kerberos name (service[/host]@REALM, or a name without
// a realm, which is already short) as Kafka's shortName does.
func (n *KerberosShortNamer) ShortName(name string) (string, error) {
	m := kerberosName.FindStringSubmatchIndex(name)
	var params []string
	switch {
	case m == nil && strings.Contains(name, "@"):
		return "", fmt.Errorf("Malformed Kerberos name: %s", name)
	case m == nil:
		return name, nil
	case m[4] < 0: // no host
		params = []string{name[m[8]:m[9]], name[m[2]:m[3]]}
	default:
		params = []string{name[m[8]:m[9]], name[m[2]:m[3]], name[m[6]:m[7]]}
	}
	for _, r := range n.rules {
		short, ok, err := r.apply(params)
		if err != nil {
			return "", err
		}
		if ok {
			return short, nil
		}
	}
	return "", &NoMatchingRuleError{fmt.Sprintf("No rules apply to %s, rules %s", name, n)}
}

func (r *kerberosRule) apply(params []string) (string, bool, error) {
	var result string
	var ok bool
	if r.isDefault {
		result, ok = params[1], r.defaultRealm == params[0]
	} else if len(params)-1 == r.components {
		base, err := replaceParameters(r.format, params)
		if err != nil {
			return "", false, err
		}
		if r.matchRE == nil || r.matchRE.MatchString(base) {
			result, ok = base, true
			if r.fromRE != nil {
				if result, err = javaReplace(r.fromRE, base, r.to, r.repeat); err != nil {
					return "", false, err
				}
			}
		}
	}
	if !ok {
		return "", false, nil
	}
	if kerberosNonSimple.MatchString(result) {
		return "", false, &NoMatchingRuleError{fmt.Sprintf("Non-simple name %s after auth_to_local rule %s", result, r)}
	}
	switch {
	case r.toLower:
		result = strings.ToLower(result)
	case r.toUpper:
		result = strings.ToUpper(result)
	}
	return result, true, nil
}

// replaceParameters fills $0 (the realm), $1 and $2 (the components).
func replaceParameters(format string, params []string) (string, error) {
	var b strings.Builder
	for start := 0; start < len(format); {
		m := kerberosParameter.FindStringSubmatchIndex(format[start:])
		if m == nil {
			break
		}
		b.WriteString(format[start+m[2] : start+m[3]])
		if m[6] >= 0 {
			digits := format[start+m[6] : start+m[7]]
			num, err := strconv.ParseInt(digits, 10, 32)
			if err != nil {
				return "", fmt.Errorf("bad format in username mapping in %s", digits)
			}
			if num < 0 || int(num) >= len(params) {
				return "", fmt.Errorf("index %d from %s is outside of the valid range 0 to %d", num, format, len(params)-1)
			}
			b.WriteString(params[num])
		}
		if m[1] == 0 { // cannot happen: a match here is never empty
			break
		}
		start += m[1]
	}
	return b.String(), nil
}

// String is Kafka's rendering of the rules, as in its messages.
func (n *KerberosShortNamer) String() string {
	parts := make([]string, len(n.rules))
	for i := range n.rules {
		parts[i] = n.rules[i].String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r *kerberosRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RULE:[%d:%s]", r.components, r.format)
	if r.matchRE != nil {
		b.WriteString("(" + r.match + ")")
	}
	if r.fromRE != nil {
		b.WriteString("s/" + r.from + "/" + r.to + "/")
		if r.repeat {
			b.WriteString("g")
		}
	}
	switch {
	case r.toLower:
		b.WriteString("/L")
	case r.toUpper:
		b.WriteString("/U")
	}
	return b.String()
}
