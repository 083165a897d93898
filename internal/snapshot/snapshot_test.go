package snapshot

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWriteThenReadKeepsHeaderObjectsAndOrder(t *testing.T) {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}}}
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web-0", "namespace": "shop", "annotations": map[string]any{SourceUIDAnnotation: "u-1"}},
		"spec":     map[string]any{"nodeName": "n1"}}}
	h := Header{Kubernetes: "v1.36.3", Source: "prod", Exported: time.Date(2026, 11, 30, 10, 0, 0, 5, time.UTC),
		Counts: map[string]int{"Namespace": 1, "Pod": 1}, Skipped: map[string]string{"Secret": "never read"}}
	var buf bytes.Buffer
	if err := Write(&buf, h, []*unstructured.Unstructured{ns, pod}, "1 workload's template took its live pods' resources"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), HeaderPrefix+`{"format":1,"kubernetes":"v1.36.3","source":"prod","exported":"2026-11-30T10:00:00Z",`) {
		t.Fatalf("header line not as agreed:\n%s", buf.String())
	}
	got, objects, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != 1 || got.Source != "prod" || got.Counts["Pod"] != 1 || got.Skipped["Secret"] != "never read" {
		t.Errorf("header read back as %+v", got)
	}
	if len(objects) != 2 || objects[0].GetKind() != "Namespace" || objects[1].GetName() != "web-0" ||
		objects[1].GetAnnotations()[SourceUIDAnnotation] != "u-1" {
		t.Errorf("objects read back as %v", objects)
	}
}

func TestReadRefusesOtherFiles(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"another tool's": {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", "not a kubesim snapshot"},
		"a newer format": {HeaderPrefix + `{"format":2,"kubernetes":"v1.36.3"}` + "\n", "snapshot format 2, newer"},
		"a bad header":   {HeaderPrefix + "{format\n", "does not parse"},
		"a nameless one": {HeaderPrefix + `{"format":1}` + "\n---\napiVersion: v1\nkind: Pod\n", "an object needs apiVersion"},
	} {
		if _, _, err := Read(strings.NewReader(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for theirs, ok := range map[string]bool{"v1.36.3": true, "v1.36.9": true, "v1.30.0": true, "v1.37.0": false, "v2.0.0": false} {
		err := CheckVersion(Header{Kubernetes: theirs}, "v1.36.3")
		if (err == nil) != ok {
			t.Errorf("%s: got %v", theirs, err)
		}
	}
	if err := CheckVersion(Header{Kubernetes: "latest"}, "v1.36.3"); err == nil || !strings.Contains(err.Error(), "kubernetes \"latest\"") {
		t.Errorf("an unparsable version: got %v", err)
	}
}
