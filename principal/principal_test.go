package principal

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// mapErr is the error of parsing or applying rules, "" when there is none.
func mapErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSSLRulesAsKafka(t *testing.T) {
	for _, c := range sslCases {
		name, err := "", error(nil)
		m, err := ParseSSLRules(c.rules)
		if err == nil {
			name, err = m.Name(c.name)
		}
		if name != c.want || mapErr(err) != c.err {
			t.Errorf("rules %q, DN %q: got %q, error %q; Kafka gives %q, error %q", c.rules, c.name, name, mapErr(err), c.want, c.err)
		}
	}
}

func TestKerberosRulesAsKafka(t *testing.T) {
	for _, c := range kerberosCases {
		name, err := "", error(nil)
		n, err := ParseKerberosRules(c.rules, "EXAMPLE.COM")
		if err == nil {
			name, err = n.ShortName(c.name)
		}
		if name != c.want || mapErr(err) != c.err {
			t.Errorf("rules %q, name %q: got %q, error %q; Kafka gives %q, error %q", c.rules, c.name, name, mapErr(err), c.want, c.err)
		}
	}
}

func TestNoMatchingRuleIsTyped(t *testing.T) {
	m, err := ParseSSLRules(`RULE:^CN=(.*?),OU=.*$/$1/L`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Name("CN=bob,O=acme")
	var nm *NoMatchingRuleError
	if !errors.As(err, &nm) {
		t.Fatalf("want a NoMatchingRuleError, got %v", err)
	}
}

// Java patterns RE2 cannot run are refused when parsed, never at a
// connection.
func TestUnsupportedJavaPatternRefused(t *testing.T) {
	for _, rules := range []string{`RULE:^CN=(?=a)(.*)$/$1/`, `RULE:^CN=(a)\1$/$1/`} {
		if _, err := ParseSSLRules(rules); err == nil || !strings.Contains(err.Error(), "RE2") {
			t.Errorf("%s: want a parse error naming RE2, got %v", rules, err)
		}
	}
	if _, err := ParseKerberosRules(`RULE:[1:$1](?=a)`, ""); err == nil {
		t.Error("kerberos rule with look-ahead: want a parse error")
	}
}

func TestRulesRender(t *testing.T) {
	m, err := ParseSSLRules(` RULE:^CN=(.*?),OU=.*$/$1/L , RULE:a/b/U,RULE:c/d/, DEFAULT `)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.String(), `[RULE:^CN=(.*?),OU=.*$/$1/L, RULE:a/b/U, RULE:c/d, DEFAULT]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string]string{"": "", "  ": "", "a": "a", " a , b,c ": "a|b|c", "a,,b": "a||b"} {
		if got := strings.Join(SplitList(in), "|"); got != want {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSSLRulesRandomAsKafka: 400 random combinations of rules (patterns
// with lazy and greedy groups, anchors, \b, named groups, escaped
// slashes; replacements with missing, multi-digit and escaped group
// references; L and U) and DNs, each line the rules, the DN and what
// Kafka 4.4's SslPrincipalMapper made of them ("OK name" or "ERR
// Exception: message").
func TestSSLRulesRandomAsKafka(t *testing.T) {
	data, err := os.ReadFile("testdata/kafka_ssl_random.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("bad line %q", line)
		}
		n++
		var got string
		m, err := ParseSSLRules(f[0])
		if err == nil {
			var name string
			if name, err = m.Name(f[1]); err == nil {
				got = "OK " + name
			}
		}
		want := f[2]
		if err != nil {
			got = "ERR " + err.Error()
			if i := strings.Index(want, ": "); strings.HasPrefix(want, "ERR ") && i > 0 && want[i+2:] == err.Error() {
				continue // the exception's class is Java's
			}
		}
		if got != want {
			t.Errorf("rules %q, DN %q:\n got   %s\n Kafka %s", f[0], f[1], got, want)
		}
	}
	if n != 400 {
		t.Fatalf("%d cases, want 400", n)
	}
}

// TestKerberosRulesRandomAsKafka: 300 random auth_to_local rule lists
// and names, each with what Kafka 4.4's KerberosShortNamer (default realm
// EXAMPLE.COM) made of them.
func TestKerberosRulesRandomAsKafka(t *testing.T) {
	data, err := os.ReadFile("testdata/kafka_kerberos_random.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		var got string
		n, err := ParseKerberosRules(f[0], "EXAMPLE.COM")
		if err == nil {
			var name string
			if name, err = n.ShortName(f[1]); err == nil {
				got = "OK " + name
			}
		}
		want := f[2]
		if err != nil {
			got = "ERR " + err.Error()
			if i := strings.Index(want, ": "); strings.HasPrefix(want, "ERR ") && i > 0 && want[i+2:] == err.Error() {
				continue
			}
		}
		if got != want {
			t.Errorf("rules %q, name %q:\n got   %s\n Kafka %s", f[0], f[1], got, want)
		}
	}
}
