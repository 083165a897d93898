package cli

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Every ClusterSpec field is set by one flag of specFlags, or is on
// onlyInFiles; each row lands in the one field it is meant to.
// enumSamples are values the flags that take one of a few accept.
var enumSamples = map[string]string{"autoscaler": "karpenter"}

func TestSpecFlagsCoverClusterSpec(t *testing.T) {
	fields := specFields(reflect.TypeFor[v1alpha1.ClusterSpec](), "")
	byFlag := map[string]string{} // field → the flag that lands in it
	for _, row := range allSpecFlags() {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		land := row.Lands(fs, row.Name, row.Usage)
		sample := map[string]string{"int": "7", "int32": "7", "bool": "true", "duration": "3s", "stringSlice": "a"}[fs.Lookup(row.Name).Value.Type()]
		if sample == "" {
			sample = "1Gi" // a string; a size for --memory-limit
		}
		if v, ok := enumSamples[row.Name]; ok {
			sample = v
		}
		if err := fs.Set(row.Name, sample); err != nil {
			t.Fatalf("--%s %s: %v", row.Name, sample, err)
		}
		var s v1alpha1.ClusterSpec
		if err := land(&s); err != nil {
			t.Fatalf("--%s %s: %v", row.Name, sample, err)
		}
		set := setFields(t, &s)
		if len(set) != 1 {
			t.Errorf("--%s sets %v, want one field", row.Name, set)
			continue
		}
		if other, ok := byFlag[set[0]]; ok {
			t.Errorf("--%s and --%s both set %s", row.Name, other, set[0])
		}
		byFlag[set[0]] = row.Name
	}
	for _, f := range onlyInFiles {
		if !slices.Contains(fields, f) {
			t.Errorf("onlyInFiles: %s is no ClusterSpec field", f)
		}
		if flag, ok := byFlag[f]; ok {
			t.Errorf("onlyInFiles: %s is set by --%s", f, flag)
		}
	}
	for _, f := range fields {
		if _, ok := byFlag[f]; !ok && !slices.Contains(onlyInFiles, f) {
			t.Errorf("ClusterSpec field %s: no row in specFlags sets it; add one, or put it on onlyInFiles", f)
		}
	}
}

// specFields are the JSON paths of t's fields, those of nested option
// structs one by one.
func specFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		path := prefix + name
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		// A struct with fields is its fields; an optional one (a switch
		// such as autoscaler.karpenter: {}) is a field itself too.
		if f.Type.Kind() == reflect.Pointer && ft.Kind() == reflect.Struct {
			out = append(out, path)
		}
		if ft.Kind() == reflect.Struct && ft.NumField() > 0 && !reflect.PointerTo(ft).Implements(reflect.TypeFor[json.Unmarshaler]()) {
			out = append(out, specFields(ft, path+".")...)
			continue
		}
		if f.Type.Kind() == reflect.Pointer && ft.Kind() == reflect.Struct {
			continue
		}
		out = append(out, path)
	}
	return out
}

// switchFields are the JSON paths of the fields that are pointers to a
// struct: set to {}, they say "on".
func switchFields(t reflect.Type, prefix string, out map[string]bool) map[string]bool {
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			out[prefix+name] = true
		} else if ft.Kind() == reflect.Struct {
			switchFields(ft, prefix+name+".", out)
		}
	}
	return out
}

// setFields are the JSON paths of the fields s sets.
func setFields(t *testing.T, s *v1alpha1.ClusterSpec) []string {
	switches := switchFields(reflect.TypeFor[v1alpha1.ClusterSpec](), "", map[string]bool{})
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if inner, ok := v.(map[string]any); ok && !(len(inner) == 0 && switches[prefix+k]) {
				walk(inner, prefix+k+".")
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk(m, "")
	sort.Strings(out)
	return out
}
