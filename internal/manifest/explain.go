package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// explain says a decoding error that reads like Go ("cannot unmarshal
// string into Go struct field Cluster.nodes of type int") in the user's
// words: the field, what it must be, and what it is ("nodes: must be an
// integer, got "three""), as an *Error naming the field's path. Other
// errors are returned as they are.
//
// The error sigs.k8s.io/json returns is of a type of its own internal
// package; encoding/json, decoding the same data into a new obj, returns
// the same failure as a *json.UnmarshalTypeError.
func explain(jsonData []byte, obj any, err error) error {
	var typeErr *json.UnmarshalTypeError
	fresh := reflect.New(reflect.TypeOf(obj).Elem()).Interface()
	var whole any
	d := json.NewDecoder(bytes.NewReader(jsonData))
	d.UseNumber()
	parsed := d.Decode(&whole) == nil
	if !errors.As(json.Unmarshal(jsonData, fresh), &typeErr) || typeErr.Field == "" {
		if parsed {
			if field, why := refused(reflect.TypeOf(obj), whole, ""); field != "" {
				return &Error{Path: field, Msg: fmt.Sprintf("%s: %s", field, why)}
			}
		}
		return err
	}
	field, v, found := fieldPath(reflect.TypeOf(obj), whole, typeErr.Field)
	got, each := describe(typeErr.Value), ""
	if found && parsed {
		switch {
		case describe(kindOf(v)) == got:
			got = literal(v)
		case kindOf(v) == "array":
			each = "each item "
		case kindOf(v) == "object":
			each = "each value "
		}
	}
	return &Error{Path: field, Msg: fmt.Sprintf("%s: %smust be %s, got %s", field, each, expected(typeErr.Type, got), got)}
}

// fieldPath is an UnmarshalTypeError's Field (nodeGroups.1.labels.zone,
// as Go 1.27 writes it, map keys escaped as in a JSON pointer) as the
// file names it: nodeGroups[1].labels.zone. It walks the type t and the
// decoded value v together, which tells a list index from a field and
// finds a map key holding dots; v is the value the path reaches, and
// found whether it reached the end.
func fieldPath(t reflect.Type, v any, field string) (path string, at any, found bool) {
	segments := strings.Split(field, ".")
	for i := 0; i < len(segments); i++ {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		segment := segments[i]
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			items, _ := v.([]any)
			n, err := strconv.Atoi(segment)
			if err != nil || n < 0 || n >= len(items) {
				return joinPath(path, strings.Join(segments[i:], ".")), nil, false
			}
			path, v, t = fmt.Sprintf("%s[%d]", path, n), items[n], t.Elem()
		case reflect.Map:
			values, _ := v.(map[string]any)
			key, used := segment, 1
			for j := i + 1; j <= len(segments); j++ {
				if k := unescapeKey(strings.Join(segments[i:j], ".")); values != nil {
					if _, ok := values[k]; ok {
						key, used = k, j-i
						break
					}
				}
			}
			path, v, t = joinPath(path, key), values[key], t.Elem()
			i += used - 1
		case reflect.Struct:
			f, ok := jsonField(t, segment)
			if !ok {
				if e, isEmbedded := t.FieldByName(segment); isEmbedded && e.Anonymous {
					t = e.Type // Go names an embedded struct on the way
					continue
				}
				return joinPath(path, strings.Join(segments[i:], ".")), nil, false
			}
			object, _ := v.(map[string]any)
			path, v, t = joinPath(path, segment), object[segment], f.Type
		default:
			return joinPath(path, strings.Join(segments[i:], ".")), nil, false
		}
	}
	return path, v, true
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// unescapeKey undoes a JSON pointer's escapes of a map key (~1 for /).
func unescapeKey(k string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(k)
}

// jsonField is the field of struct type t that encoding/json decodes the
// key name into, looking into embedded structs as it does.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			embedded := f.Type
			if embedded.Kind() == reflect.Pointer {
				embedded = embedded.Elem()
			}
			if embedded.Kind() == reflect.Struct {
				if inner, ok := jsonField(embedded, name); ok {
					return inner, true
				}
			}
			continue
		}
		if tag == name || tag == "" && strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// describe says what kind of JSON value an UnmarshalTypeError's Value
// ("string", "number 1.5", "bool", "array", "object") is.
func describe(value string) string {
	switch kind, _, _ := strings.Cut(value, " "); kind {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	}
	return value
}

// expected says what a Go type takes, as a YAML user would say it. An
// integer too large for its type gets the type's range.
func expected(t reflect.Type, got string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if isWholeNumber(got) {
			limit := uint64(1) << (t.Bits() - 1)
			return fmt.Sprintf("an integer between -%d and %d", limit, limit-1)
		}
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "a " + t.String()
}

// kindOf is the kind of a decoded JSON value, as UnmarshalTypeError says it.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// literal is a scalar as the user wrote it, or what a list or mapping is.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case json.Number, bool:
		return fmt.Sprint(v)
	}
	return describe(kindOf(v))
}

func isWholeNumber(s string) bool {
	return s != "" && strings.Trim(s, "-0123456789") == ""
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// refused finds the first value, under path, of a type that decodes itself
// (a duration, a quantity) and refuses it: the errors of those types name
// no field ("time: invalid duration "ten""). It returns the field's path
// and why, or "" if no such value is refused.
func refused(t reflect.Type, v any, path string) (field, why string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if path != "" && reflect.PointerTo(t).Implements(unmarshaler) {
		data, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(data, reflect.New(t).Interface())
		}
		if err != nil {
			return path, refusal(t, v, err)
		}
		return "", ""
	}
	switch t.Kind() {
	case reflect.Struct:
		object, _ := v.(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(object)) {
			if f, ok := jsonField(t, key); ok {
				if field, why := refused(f.Type, object[key], joinPath(path, key)); field != "" {
					return field, why
				}
			}
		}
	case reflect.Slice, reflect.Array:
		items, _ := v.([]any)
		for i, item := range items {
			if field, why := refused(t.Elem(), item, fmt.Sprintf("%s[%d]", path, i)); field != "" {
				return field, why
			}
		}
	case reflect.Map:
		values, _ := v.(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(values)) {
			if field, why := refused(t.Elem(), values[key], joinPath(path, key)); field != "" {
				return field, why
			}
		}
	}
	return "", ""
}

// refusal says why a value of type t is refused, in the user's words for
// the types users write most.
func refusal(t reflect.Type, v any, err error) string {
	switch t {
	case reflect.TypeFor[metav1.Duration]():
		return fmt.Sprintf("%s is not a duration; write one such as 30s, 5m or 1h30m", literal(v))
	case reflect.TypeFor[resource.Quantity]():
		return fmt.Sprintf("%s is not a quantity; write one such as 4, 500m or 32Gi", literal(v))
	}
	return err.Error()
}
