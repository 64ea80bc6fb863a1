package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Schemas' JSON kept in its written order: Confluent's stored texts are
// printed by Avro Java and Jackson, which keep members in the order they
// were read, so both the Avro and the JSON Schema texts are printed from
// this tree rather than from a parsed schema or a Go map.

// orderedObject is a JSON object with its members in document order; a
// repeated name keeps its first position and last value, as Jackson does.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o *orderedObject) get(k string) (any, bool) {
	v, ok := o.values[k]
	return v, ok
}

func (o *orderedObject) str(k string) (string, bool) {
	s, ok := o.values[k].(string)
	return s, ok
}

// decodeOrdered decodes one JSON text into nil, bool, json.Number,
// string, []any and *orderedObject.
func decodeOrdered(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := readOrdered(d)
	if err == io.EOF && strings.TrimSpace(text) != "" {
		err = io.ErrUnexpectedEOF // cut short, as json.Unmarshal says
	}
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the schema")
	}
	return v, nil
}

func readOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		o := &orderedObject{values: map[string]any{}}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			v, err := readOrdered(d)
			if err != nil {
				return nil, err
			}
			if _, dup := o.values[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.values[k] = v
		}
		_, err := d.Token()
		return o, err
	case '[':
		a := []any{}
		for d.More() {
			v, err := readOrdered(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return nil, errors.New("unexpected " + delim.String())
}

// writeJacksonString quotes s as Jackson does: the short escapes for
// quote, backslash, \b \f \n \r \t, \u00XX for other control characters,
// everything else (HTML characters, U+2028) as it is.
func writeJacksonString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
