package schema

import (
	"bytes"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// The texts of a JSON Schema the registry stores: Confluent's canonical
// form (Jackson's compact output) and its normalised form.

// compactJSON re-serialises a JSON text without insignificant whitespace,
// keeping member order (Confluent's canonical form, Jackson's compact
// output) or sorting members by name (its normalised form). Numbers keep
// their literal text.
func compactJSON(text string, sortKeys bool) (string, error) {
	node, err := decodeOrdered(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	writeOrdered(&b, node, sortKeys)
	return b.String(), nil
}

func writeOrdered(b *bytes.Buffer, v any, sortKeys bool) {
	switch v := v.(type) {
	case *orderedObject:
		keys := v.keys
		if sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJacksonString(b, k)
			b.WriteByte(':')
			writeOrdered(b, v.values[k], sortKeys)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOrdered(b, e, sortKeys)
		}
		b.WriteByte(']')
	case string:
		writeJacksonString(b, v)
	case json.Number:
		b.WriteString(jacksonNumber(string(v)))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

// jacksonNumber prints a number literal as Confluent's Jackson does: an
// integer as its value ("-0" is 0), any other number as Java's
// BigDecimal.toString of the literal ("1.50" stays, "1e2" is "1E+2").
func jacksonNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if i, ok := new(big.Int).SetString(lit, 10); ok {
			return i.String()
		}
		return lit
	}
	mant, exp := lit, 0
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		e, err := strconv.Atoi(lit[i+1:])
		if err != nil {
			return lit
		}
		mant, exp = lit[:i], e
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	scale := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		scale = len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	scale -= exp
	digits := strings.TrimLeft(mant, "0")
	if digits == "" {
		digits, neg = "0", false
	}
	adjusted := -scale + len(digits) - 1
	var out string
	switch {
	case scale >= 0 && adjusted >= -6:
		if scale == 0 {
			out = digits
		} else {
			if len(digits) <= scale {
				digits = strings.Repeat("0", scale-len(digits)+1) + digits
			}
			out = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		}
	default:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		if digits == "0" {
			// Zero keeps its scale in the exponent, as BigDecimal does.
			adjusted = -scale
		}
		out += "E"
		if adjusted >= 0 {
			out += "+"
		}
		out += strconv.Itoa(adjusted)
	}
	if neg {
		out = "-" + out
	}
	return out
}
