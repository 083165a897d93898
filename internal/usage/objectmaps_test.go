package usage

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/internal/kwokcel"
)

func TestObjectMapsKeepOnePerVersion(t *testing.T) {
	c := newObjectMaps()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", ResourceVersion: "1", Labels: map[string]string{"app": "web"}}}
	first := c.of(pod, "Pod", nil)
	if !reflect.DeepEqual(first, objectMap(pod, "Pod")) {
		t.Fatalf("kept map %v differs from the pod's own %v", first, objectMap(pod, "Pod"))
	}
	if again := c.of(pod, "Pod", nil); reflect.ValueOf(again).Pointer() != reflect.ValueOf(first).Pointer() {
		t.Error("the same version was converted again")
	}
	changed := pod.DeepCopy()
	changed.ResourceVersion, changed.Labels["app"] = "2", "api"
	m := c.of(changed, "Pod", nil)
	if labels := m["metadata"].(map[string]any)["labels"].(map[string]any); labels["app"] != "api" {
		t.Errorf("after a change the map still says app=%v", labels["app"])
	}
	c.forget(cache.DeletedFinalStateUnknown{Key: "default/p", Obj: changed})
	if len(c.entries) != 0 {
		t.Errorf("a deleted pod's map is kept: %v", c.entries)
	}
	fields := &kwokcel.Fields{}
	fields.Add("metadata", "labels")
	kept := c.of(changed, "Pod", fields)
	if want := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "api"}}}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept to the labels: %v, want %v", kept, want)
	}
	if again := c.of(changed, "Pod", fields); reflect.ValueOf(again).Pointer() != reflect.ValueOf(kept).Pointer() {
		t.Error("the same version was kept to the same fields again")
	}
	if whole := c.of(changed, "Pod", nil); whole["spec"] == nil {
		t.Errorf("other fields, yet the map kept to the labels was given: %v", whole)
	}
	var none *objectMaps
	if m := none.of(pod, "Pod", nil); m["kind"] != "Pod" {
		t.Errorf("without a cache the map is still made: %v", m)
	}
}
