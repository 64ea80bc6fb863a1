package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// DecodeStrict decodes data, exactly one JSON value, into v, refusing
// unknown fields. Unlike encoding/json alone it also refuses a key that
// names a field in another case ({"ISR":[2]} for "isr"): the control
// API's keys are exact, as its documentation spells them.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return CheckKeys(data, reflect.TypeOf(v))
}

// CheckKeys reports the first object key in data that matches a field of
// t only case-insensitively. Types with their own UnmarshalJSON are
// theirs to check.
func CheckKeys(data []byte, t reflect.Type) error {
	return checkKeys(data, t, "")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func checkKeys(data []byte, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil // null, or not an object: the decoder's to refuse
		}
		fields := jsonFields(t)
		for k, raw := range obj {
			ft, ok := fields[k]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, k) {
						return fmt.Errorf("unknown field %q%s: keys are case-sensitive (did you mean %q?)", k, where(at), name)
					}
				}
				continue // DisallowUnknownFields refuses it
			}
			if err := checkKeys(raw, ft, at+"."+k); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil
		}
		for k, raw := range obj {
			if err := checkKeys(raw, t.Elem(), at+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return nil
		}
		for i, raw := range list {
			if err := checkKeys(raw, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return " in " + strings.TrimPrefix(at, ".")
}

// jsonFields maps the JSON names of t's fields to their types, with the
// fields of embedded structs promoted as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
