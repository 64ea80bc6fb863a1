package configs

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Parsing and checking a value as Kafka's ConfigDef does: the value is
// parsed as its type (trimmed), then checked by the config's validator.
// Errors carry Kafka's ConfigException messages ("Invalid value 0 for
// configuration min.insync.replicas: Value must be at least 1").

// Error is a value Kafka refuses, worded as its ConfigException.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func invalid(name, value, msg string) *Error {
	return &Error{Msg: "Invalid value " + value + " for configuration " + name + ": " + msg}
}

var listSep = regexp.MustCompile(`\s*,\s*`)

// SplitList splits a LIST value as Kafka does (empty → no items).
func SplitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return []string{}
	}
	return listSep.Split(v, -1)
}

// parsed is a value after parsing: its Java rendering (for messages and
// DescribeConfigs) and, for numbers, its value.
type parsed struct {
	text  string
	num   float64
	isNum bool
	list  []string
}

func (d *Def) parse(v string) (parsed, *Error) {
	t := strings.TrimSpace(v)
	switch d.Type {
	case Boolean:
		switch strings.ToLower(t) {
		case "true", "false":
			return parsed{text: strings.ToLower(t)}, nil
		}
		return parsed{}, invalid(d.Name, v, "Expected value to be either true or false")
	case Int, Short, Long:
		bits := map[Type]int{Int: 32, Short: 16, Long: 64}[d.Type]
		n, err := strconv.ParseInt(t, 10, bits)
		if err != nil {
			return parsed{}, invalid(d.Name, v, "Not a number of type "+d.Type.String())
		}
		return parsed{text: strconv.FormatInt(n, 10), num: float64(n), isNum: true}, nil
	case Double:
		f, err := strconv.ParseFloat(strings.TrimRight(t, "dDfF"), 64)
		if err != nil || t == "" {
			return parsed{}, invalid(d.Name, v, "Not a number of type DOUBLE")
		}
		return parsed{text: JavaDouble(f), num: f, isNum: true}, nil
	case List:
		items := SplitList(t)
		return parsed{text: strings.Join(items, ","), list: items}, nil
	case Password:
		return parsed{text: v}, nil
	}
	return parsed{text: t}, nil
}

// JavaDouble renders f as Java's Double.toString does.
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+07
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// Check parses value and checks it with d's validator, returning Kafka's
// message for a value it refuses.
func (d *Def) Check(value string) error {
	p, err := d.parse(value)
	if err != nil {
		return err
	}
	if d.Valid != nil {
		if err := d.Valid.check(d.Name, p); err != nil {
			return err
		}
	}
	return nil
}

// Canonical is value as Kafka describes it once parsed (TRUE → true, 1 →
// 1.0 for a DOUBLE, "a , b" → a,b); value itself if it does not parse.
func (d *Def) Canonical(value string) string {
	p, err := d.parse(value)
	if err != nil {
		return value
	}
	return p.text
}

func (v *Validator) check(name string, p parsed) *Error {
	switch v.Kind {
	case Range:
		if !p.isNum {
			return nil
		}
		if v.Min != "" {
			if lo, _ := strconv.ParseFloat(v.Min, 64); p.num < lo {
				return invalid(name, p.text, "Value must be at least "+v.Min)
			}
		}
		if v.Max != "" {
			if hi, _ := strconv.ParseFloat(v.Max, 64); p.num > hi {
				return invalid(name, p.text, "Value must be no more than "+v.Max)
			}
		}
	case OneOf:
		for _, s := range v.Strings {
			if s == p.text {
				return nil
			}
		}
		return invalid(name, p.text, "String must be one of: "+strings.Join(v.Strings, ", "))
	case OneOfIgnoreCase:
		for _, s := range v.Strings {
			if strings.EqualFold(s, p.text) {
				return nil
			}
		}
		return invalid(name, p.text, "String must be one of (case insensitive): "+strings.Join(v.Strings, ", "))
	case ListOf:
		return v.checkList(name, p.list)
	case NonEmpty:
		if p.text == "" {
			return invalid(name, p.text, "String must be non-empty")
		}
	case All:
		for _, o := range v.Of {
			if err := o.check(name, p); err != nil {
				return err
			}
		}
	case Opaque:
		if f := opaque[v.Class]; f != nil {
			return f(name, p)
		}
	}
	return nil
}

func (v *Validator) checkList(name string, items []string) *Error {
	if len(items) == 0 {
		if v.EmptyAllowed {
			return nil
		}
		valid := "any non-empty value"
		if len(v.Strings) > 0 {
			valid = "[" + strings.Join(v.Strings, ", ") + "]"
		}
		return &Error{Msg: "Configuration '" + name + "' must not be empty. Valid values include: " + valid}
	}
	// Only a list of any values refuses duplicates (anyNonDuplicateValues);
	// one of given values takes cleanup.policy=compact,compact.
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it] && len(v.Strings) == 0 {
			return &Error{Msg: "Configuration '" + name + "' values must not be duplicated."}
		}
		seen[it] = true
	}
	for _, it := range items {
		if it == "" {
			return &Error{Msg: "Configuration '" + name + "' values must not be empty."}
		}
		if len(v.Strings) > 0 {
			ok := false
			for _, s := range v.Strings {
				ok = ok || s == it
			}
			if !ok {
				return invalid(name, it, "String must be one of: "+strings.Join(v.Strings, ", "))
			}
		}
	}
	return nil
}

// opaque checks the validators that are classes of their own in Kafka.
var opaque = map[string]func(name string, p parsed) *Error{}

func init() {
	opaque["org.apache.kafka.common.config.ConfigDef$LambdaValidator"] = func(name string, p parsed) *Error {
		if name == "compression.gzip.level" {
			if n := p.num; p.isNum && (n > 9 || n < 1 && n != -1) {
				return invalid(name, p.text, "Value must be between 1 and 9 or equal to -1")
			}
		}
		return nil
	}
	opaque["org.apache.kafka.storage.internals.log.ThrottledReplicaListValidator"] = func(name string, p parsed) *Error {
		if len(p.list) == 1 && p.list[0] == "*" {
			return nil
		}
		for _, it := range p.list {
			a, b, ok := strings.Cut(it, ":")
			if !ok || !isDigits(a) || !isDigits(b) {
				// Kafka prints the parsed list (Java's List.toString).
				return invalid(name, "["+strings.Join(p.list, ", ")+"]", name+" must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
			}
		}
		return nil
	}
	opaque["org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy$Validator"] = func(name string, p parsed) *Error {
		if err := ShareAutoOffsetReset(p.text); err != "" {
			return invalid(name, p.text, err)
		}
		return nil
	}
}

func isDigits(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ShareAutoOffsetReset checks share.auto.offset.reset: latest, earliest or
// by_duration:<ISO-8601 duration, not negative>; it returns the problem.
func ShareAutoOffsetReset(v string) string {
	switch strings.ToLower(v) {
	case "latest", "earliest":
		return ""
	}
	d, ok := strings.CutPrefix(strings.ToLower(v), "by_duration:")
	if !ok {
		return "Invalid value `" + v + "` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
	}
	dur, err := ParseISODuration(d)
	if err != nil {
		return "Invalid duration format for configuration share.auto.offset.reset: " + err.Error()
	}
	if dur < 0 {
		return "Negative duration is not allowed for configuration share.auto.offset.reset."
	}
	return ""
}

var isoDuration = regexp.MustCompile(`^([-+]?)p(?:([-+]?[0-9]+)d)?(t(?:([-+]?[0-9]+)h)?(?:([-+]?[0-9]+)m)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?s)?)?$`)

// ParseISODuration parses Java's Duration.parse format (PnDTnHnMn.nS),
// case-insensitively, into milliseconds.
func ParseISODuration(s string) (int64, error) {
	m := isoDuration.FindStringSubmatch(strings.ToLower(s))
	if m == nil || m[3] == "t" || (m[2] == "" && m[3] == "") {
		return 0, fmt.Errorf("text cannot be parsed to a Duration")
	}
	num := func(x string) int64 { n, _ := strconv.ParseInt(x, 10, 64); return n }
	ms := num(m[2])*86400000 + num(m[4])*3600000 + num(m[5])*60000 + num(m[6])*1000
	if frac := m[7]; frac != "" {
		f := (frac + "000")[:3]
		n := num(f)
		if strings.HasPrefix(m[6], "-") {
			n = -n
		}
		ms += n
	}
	if m[1] == "-" {
		ms = -ms
	}
	return ms, nil
}
