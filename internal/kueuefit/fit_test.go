package kueuefit

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, name, namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(namespace)
	return u
}

// Job takes one batch/v1 Job, in the namespace given unless it names
// its own, and refuses anything else in a line naming what it got.
func TestJobTakesOneJob(t *testing.T) {
	j, err := Job([]*unstructured.Unstructured{obj("batch/v1", "Job", "train", "")}, "ml")
	if err != nil || j.GetNamespace() != "ml" {
		t.Errorf("a Job without a namespace: %v, namespace %q, want ml", err, j.GetNamespace())
	}
	if j, _ := Job([]*unstructured.Unstructured{obj("batch/v1", "Job", "train", "own")}, "ml"); j.GetNamespace() != "own" {
		t.Errorf("a Job's own namespace is kept: got %q", j.GetNamespace())
	}
	for _, tc := range []struct {
		objs []*unstructured.Unstructured
		want string
	}{
		{nil, "got nothing"},
		{[]*unstructured.Unstructured{obj("batch/v1", "Job", "a", ""), obj("batch/v1", "Job", "b", "")}, "got Job, Job"},
		{[]*unstructured.Unstructured{obj("batch/v1", "CronJob", "a", "")}, "got CronJob"},
		{[]*unstructured.Unstructured{obj("batch/v1", "Job", "", "")}, "metadata.name: the Job has none"},
	} {
		if _, err := Job(tc.objs, "default"); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want one line with %q, got %v", tc.want, err)
		}
	}
}
