package principal

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kafka's rules are Java regular expressions. Go's RE2 has the same syntax
// for what rules use in practice (groups, classes, lazy quantifiers, named
// groups) and the same leftmost-first choice of match; what RE2 lacks
// (back references, look-around, possessive quantifiers) is refused when
// the rules are parsed. Java's matches(), replaceFirst and replaceAll and
// its replacement syntax are reproduced here.

// compileJava compiles a rule's pattern, anchored for matches() and not.
func compileJava(pattern string) (full, find *regexp.Regexp, err error) {
	if find, err = regexp.Compile(pattern); err != nil {
		return nil, nil, fmt.Errorf("pattern %q does not compile (fakekafka uses Go's RE2 syntax, which has no back references or look-around): %v", pattern, err)
	}
	full = regexp.MustCompile(`^(?:` + pattern + `)$`)
	return full, find, nil
}

// javaFindAt is Matcher.find from position from: the first match starting
// at or after it. Go has no search from an offset, so a pattern that looks
// behind its match (^, \b) is matched in the whole text instead.
func javaFindAt(re *regexp.Regexp, s string, from int) []int {
	if from > 0 && needsContext(re) {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			if m[0] >= from {
				return m
			}
		}
		return nil
	}
	loc := re.FindStringSubmatchIndex(s[from:])
	for i := range loc {
		if loc[i] >= 0 {
			loc[i] += from
		}
	}
	return loc
}

// needsContext says whether a match can depend on the text before it.
func needsContext(re *regexp.Regexp) bool {
	prog, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, sub := range r.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(prog)
}

// javaReplace is Matcher.replaceAll (all true) or replaceFirst.
func javaReplace(re *regexp.Regexp, s, replacement string, all bool) (string, error) {
	var b strings.Builder
	last, from := 0, 0
	found := false
	for from <= len(s) {
		m := javaFindAt(re, s, from)
		if m == nil {
			break
		}
		found = true
		b.WriteString(s[last:m[0]])
		if err := appendReplacement(&b, re, s, m, replacement); err != nil {
			return "", err
		}
		last = m[1]
		if !all {
			break
		}
		// After an empty match Java searches on from the next character.
		from = m[1]
		if m[1] == m[0] {
			if m[1] >= len(s) {
				break
			}
			_, size := utf8.DecodeRuneInString(s[m[1]:])
			from += size
		}
	}
	if !found {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// appendReplacement expands Java's replacement syntax: \x is x, $n a
// group (as many digits as still name a group), ${name} a named group.
func appendReplacement(b *strings.Builder, re *regexp.Regexp, s string, m []int, repl string) error {
	groups := re.NumSubexp()
	group := func(n int) {
		if m[2*n] >= 0 {
			b.WriteString(s[m[2*n]:m[2*n+1]])
		}
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i == len(repl) {
				return fmt.Errorf("character to be escaped is missing")
			}
			b.WriteByte(repl[i])
		case '$':
			i++
			if i == len(repl) {
				return fmt.Errorf("Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				n := re.SubexpIndex(name)
				if n < 0 {
					return fmt.Errorf("No group with name {%s}", name)
				}
				group(n)
				i += end
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return fmt.Errorf("Illegal group reference")
			}
			n := int(repl[i] - '0')
			for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
				next := n*10 + int(repl[i+1]-'0')
				if next > groups {
					break
				}
				n = next
				i++
			}
			if n > groups {
				return fmt.Errorf("No group %d", n)
			}
			group(n)
		default:
			b.WriteByte(c)
		}
	}
	return nil
}

// escapeLiteralBackReferences is Kafka's: a $n naming no group becomes a
// literal "$n". Like Kafka's, it finds references in the original text but
// inserts into the text already changed, so a second escape lands one
// character early; kept, since that is what Kafka's brokers compute.
func escapeLiteralBackReferences(repl string, groups int) (string, error) {
	if groups == 0 {
		return repl, nil
	}
	value := repl
	for _, loc := range backReference.FindAllStringSubmatchIndex(repl, -1) {
		digits := repl[loc[2]:loc[3]]
		if strings.HasPrefix(digits, "0") {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 32)
		if err != nil {
			return "", fmt.Errorf("For input string: \"%s\"", digits)
		}
		for n > int64(groups) && n >= 10 {
			n /= 10
		}
		if n > int64(groups) {
			at := loc[2] - 1
			value = value[:at] + `\` + value[at:]
		}
	}
	return value, nil
}

var backReference = regexp.MustCompile(`\$(\d+)`)
