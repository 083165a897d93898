package anonymize

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// testKey is a fixed key, so a failure reproduces.
var testKey = bytes.Repeat([]byte{0x5a}, KeySize)

// load reads testdata/production.yaml: a small production cluster.
func load(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open("testdata/production.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return decode(t, f)
}

// decode reads multi-document YAML.
func decode(t *testing.T, in io.Reader) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(js)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
}

// anonymized is the fixture anonymized with key.
func anonymized(t *testing.T, key []byte) ([]*unstructured.Unstructured, Summary) {
	t.Helper()
	objs := load(t)
	sum, err := New(key).Objects(objs)
	if err != nil {
		t.Fatal(err)
	}
	return objs, sum
}

// dump is the objects as the snapshot file's YAML documents.
func dump(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// typed converts an object to its API type.
func typed[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// ofKind are the objects of one kind, typed.
func ofKind[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) []*T {
	t.Helper()
	var out []*T
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, typed[T](t, o))
		}
	}
	return out
}

// strings collects every string leaf below v.
func leaves(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case map[string]any:
		for k, e := range v {
			*out = append(*out, k)
			leaves(e, out)
		}
	case []any:
		for _, e := range v {
			leaves(e, out)
		}
	}
}
