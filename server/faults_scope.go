package server

import (
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Writing a rule's error into a response: a reflection walk over kmsg
// responses that knows which topic and partition each error code belongs to.

// setFaultErrors writes r's error into every error code of resp in r's
// scope, with a message where the response has one, and drops the records
// of a failed Fetch partition.
func (c *Cluster) setFaultErrors(resp kmsg.Response, r *FaultRule) {
	c.walkScopes(reflect.ValueOf(resp), faultScope{}, func(v reflect.Value, s faultScope) {
		if !v.IsValid() || !r.inScope(s) {
			return
		}
		code := v.FieldByName("ErrorCode")
		if !code.IsValid() || code.Kind() != reflect.Int16 {
			return
		}
		code.SetInt(int64(r.code))
		if msg := v.FieldByName("ErrorMessage"); msg.IsValid() && msg.Type() == stringPtrType {
			msg.Set(reflect.ValueOf(r.message()))
		}
		if recs := v.FieldByName("RecordBatches"); recs.IsValid() {
			recs.SetBytes([]byte{}) // empty, never null: librdkafka rejects null
		}
	})
}

var (
	stringPtrType   = reflect.TypeFor[*string]()
	stringSliceType = reflect.TypeFor[[]string]()
	int32SliceType  = reflect.TypeFor[[]int32]()
	topicIDType     = reflect.TypeFor[[16]byte]()
)

// topicScope names a topic given by name or, failing that, by ID.
func (c *Cluster) topicScope(name *string, id [16]byte) faultScope {
	if name != nil && *name != "" {
		return faultScope{topic: *name, hasTopic: true}
	}
	if t := c.topicByID(id); t != nil {
		return faultScope{topic: t.name, hasTopic: true}
	}
	return faultScope{}
}

// walkScopes calls fn for every struct reachable from v with its scope,
// learned from fields named Topic (string or *string), TopicID and
// Partition. The names in a TopicNames []string and the indexes in a
// Partitions []int32 are scopes too, reported with a zero Value. kmsg
// names these fields the same way in every request and response.
func (c *Cluster) walkScopes(v reflect.Value, s faultScope, fn func(reflect.Value, faultScope)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.walkScopes(v.Elem(), s, fn)
		}
	case reflect.Slice:
		if k := v.Type().Elem().Kind(); k == reflect.Struct || k == reflect.Pointer {
			for i := range v.Len() {
				c.walkScopes(v.Index(i), s, fn)
			}
		}
	case reflect.Struct:
		if f := v.FieldByName("Topic"); f.IsValid() {
			var name *string
			switch {
			case f.Kind() == reflect.String:
				n := f.String()
				name = &n
			case f.Type() == stringPtrType:
				name = f.Interface().(*string)
			}
			var id [16]byte
			if f := v.FieldByName("TopicID"); f.IsValid() && f.Type() == topicIDType {
				id = f.Interface().([16]byte)
			}
			if ts := c.topicScope(name, id); ts.hasTopic {
				s = ts
			}
		}
		if f := v.FieldByName("Partition"); f.IsValid() && f.Kind() == reflect.Int32 {
			s.partition, s.hasPartition = int32(f.Int()), true
		}
		fn(v, s)
		t := v.Type()
		for i := range v.NumField() {
			f := v.Field(i)
			switch name := t.Field(i).Name; {
			case name == "TopicNames" && f.Type() == stringSliceType:
				for _, n := range f.Interface().([]string) {
					fn(reflect.Value{}, faultScope{topic: n, hasTopic: true})
				}
			case name == "Partitions" && f.Type() == int32SliceType:
				for _, p := range f.Interface().([]int32) {
					fn(reflect.Value{}, faultScope{topic: s.topic, hasTopic: s.hasTopic, partition: p, hasPartition: true})
				}
			case f.Kind() == reflect.Struct || f.Kind() == reflect.Slice || f.Kind() == reflect.Pointer:
				c.walkScopes(f, s, fn)
			}
		}
	}
}

// topLevelErrorOnly says whether a response type's only error code is its
// top-level ErrorCode, so an empty response with it set is a whole answer.
func topLevelErrorOnly(t reflect.Type) bool {
	f, ok := t.FieldByName("ErrorCode")
	if !ok || f.Type.Kind() != reflect.Int16 {
		return false
	}
	for i := range t.NumField() {
		if ft := t.Field(i).Type; ft.Kind() != reflect.Int16 && typeHasField(ft, "ErrorCode") {
			return false
		}
	}
	return true
}

// typeHasField says whether t or any type nested in it has a field with
// one of names.
func typeHasField(t reflect.Type, names ...string) bool {
	seen := map[reflect.Type]bool{}
	var has func(reflect.Type) bool
	has = func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return false
		}
		seen[t] = true
		for i := range t.NumField() {
			if slices.Contains(names, t.Field(i).Name) || has(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return has(t)
}
