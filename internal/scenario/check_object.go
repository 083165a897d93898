package scenario

import (
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name: "object",
		validate: func(a *v1alpha1.Assertion) error {
			if a.Object["apiVersion"] == nil || a.Object["kind"] == nil {
				return fmt.Errorf("object: apiVersion and kind are required")
			}
			return nil
		},
		describe: func(a *v1alpha1.Assertion) string {
			u := unstructured.Unstructured{Object: a.Object}
			return fmt.Sprintf("%s %s matches", u.GetKind(), u.GetName())
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.object(a.Object) },
	})
}

// object checks a partial object: every field given must be there with
// that value; a list must have as many items, each matching in turn.
// Without a name, any object of the kind (and labels) that matches will do.
func (v *view) object(want v1alpha1.Object) (bool, string, string) {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(map[string]any(want))}
	r, err := v.t.resource(u)
	if err != nil {
		return false, "", err.Error()
	}
	var candidates []unstructured.Unstructured
	if u.GetName() != "" {
		got, err := r.Get(v.ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, "the object", err.Error()
		}
		candidates = append(candidates, *got)
	} else {
		list, err := r.List(v.ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(u.GetLabels()).String()})
		if err != nil {
			return false, "", err.Error()
		}
		candidates = list.Items
	}
	delete(u.Object, "apiVersion")
	delete(u.Object, "kind")
	last := "no object"
	for _, c := range candidates {
		path, ok := subset(u.Object, c.Object, "")
		if ok {
			return true, "match", "match"
		}
		last = fmt.Sprintf("%s/%s: %s", c.GetKind(), c.GetName(), path)
	}
	return false, "every field given", last
}

// subset reports whether want is contained in got; if not, where not.
func subset(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want a mapping, got %v", orRoot(path), got), false
		}
		for _, k := range sortedKeys(w) {
			if where, ok := subset(w[k], g[k], path+"."+k); !ok {
				return where, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %d items, got %v", orRoot(path), len(w), got), false
		}
		for i := range w {
			if where, ok := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return where, false
			}
		}
		return "", true
	}
	if fmt.Sprint(want) == fmt.Sprint(got) || reflect.DeepEqual(want, got) {
		return "", true
	}
	return fmt.Sprintf("%s: want %v, got %v", orRoot(path), want, got), false
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return strings.TrimPrefix(p, ".")
}
