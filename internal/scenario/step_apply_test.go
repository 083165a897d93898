package scenario

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// A DPDB's federation entries name scenario clusters; the cluster made
// for each is put in their place.
func TestFederationNamesAreTheClustersMade(t *testing.T) {
	tg := &target{clusters: map[string]string{"red": "scn-ring-red-1a2b3c", "blue": "scn-ring-blue-4d5e6f"}}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": policyv1alpha1.GroupVersion, "kind": policyv1alpha1.Kind,
		"spec": map[string]any{"federation": []any{
			map[string]any{"name": "x", "cluster": "blue"},
			map[string]any{"name": "y", "cluster": "elsewhere"},
			map[string]any{"name": "z"},
		}},
	}}
	tg.federationNames(u)
	got, _, _ := unstructured.NestedSlice(u.Object, "spec", "federation")
	want := []any{
		map[string]any{"name": "x", "cluster": "scn-ring-blue-4d5e6f"},
		map[string]any{"name": "y", "cluster": "elsewhere"},
		map[string]any{"name": "z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("federation %v, want %v", got, want)
	}
}
