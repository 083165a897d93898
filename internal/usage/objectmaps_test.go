package usage

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestObjectMapsKeepOnePerVersion(t *testing.T) {
	c := newObjectMaps()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", ResourceVersion: "1", Labels: map[string]string{"app": "web"}}}
	first := c.of(pod, "Pod")
	if !reflect.DeepEqual(first, objectMap(pod, "Pod")) {
		t.Fatalf("kept map %v differs from the pod's own %v", first, objectMap(pod, "Pod"))
	}
	if again := c.of(pod, "Pod"); reflect.ValueOf(again).Pointer() != reflect.ValueOf(first).Pointer() {
		t.Error("the same version was converted again")
	}
	changed := pod.DeepCopy()
	changed.ResourceVersion, changed.Labels["app"] = "2", "api"
	m := c.of(changed, "Pod")
	if labels := m["metadata"].(map[string]any)["labels"].(map[string]any); labels["app"] != "api" {
		t.Errorf("after a change the map still says app=%v", labels["app"])
	}
	c.forget(cache.DeletedFinalStateUnknown{Key: "default/p", Obj: changed})
	if len(c.entries) != 0 {
		t.Errorf("a deleted pod's map is kept: %v", c.entries)
	}
	var none *objectMaps
	if m := none.of(pod, "Pod"); m["kind"] != "Pod" {
		t.Errorf("without a cache the map is still made: %v", m)
	}
}
