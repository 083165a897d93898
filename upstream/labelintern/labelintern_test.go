package labelintern

import (
	"fmt"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fresh is s in memory of its own, as a decoder leaves it.
func fresh(s string) string { return string([]byte(s)) }

func shared(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{fresh("app"): fresh("web")},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: fresh("tier"), Operator: metav1.LabelSelectorOpIn, Values: []string{fresh("front")}}},
	}
}

func pod() *v1.Pod {
	term := v1.PodAffinityTerm{LabelSelector: selector(), NamespaceSelector: selector(), TopologyKey: "kubernetes.io/hostname"}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: fresh("default"), Labels: map[string]string{fresh("app"): fresh("web"), fresh("tier"): fresh("front")}},
		Spec: v1.PodSpec{
			Affinity: &v1.Affinity{
				PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}},
				PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: *term.DeepCopy()}}},
			},
			TopologySpreadConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", LabelSelector: selector()}},
		},
	}
}

func TestTransformKeepsContentAndSharesStrings(t *testing.T) {
	tab := New()
	objs := []any{
		pod(),
		pod(),
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: fresh("default")}, Spec: appsv1.ReplicaSetSpec{Selector: selector()}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: fresh("default")}, Spec: appsv1.StatefulSetSpec{Selector: selector()}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: fresh("default")}, Spec: v1.ServiceSpec{Selector: map[string]string{fresh("app"): fresh("web")}}},
		&v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: fresh("default")}, Spec: v1.ReplicationControllerSpec{Selector: map[string]string{fresh("app"): fresh("web")}}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{fresh("app"): fresh("web")}}},
	}
	copies := make([]any, len(objs))
	for i, obj := range objs {
		copies[i] = deepCopy(obj)
		out, err := tab.Transform(obj)
		if err != nil || out != obj {
			t.Fatalf("Transform(%T) = %v, %v: want the same object back", obj, out, err)
		}
		if !equality.Semantic.DeepEqual(copies[i], out) {
			t.Errorf("Transform changed a %T: %+v, was %+v", obj, out, copies[i])
		}
	}

	// The strings selectors are matched with are one copy, wherever they came from.
	web := tab.String("web")
	p1, p2, rs := objs[0].(*v1.Pod), objs[1].(*v1.Pod), objs[2].(*appsv1.ReplicaSet)
	for what, s := range map[string]string{
		"pod 1 label":             p1.Labels["app"],
		"pod 2 label":             p2.Labels["app"],
		"ReplicaSet selector":     rs.Spec.Selector.MatchLabels["app"],
		"StatefulSet selector":    objs[3].(*appsv1.StatefulSet).Spec.Selector.MatchLabels["app"],
		"Service selector":        objs[4].(*v1.Service).Spec.Selector["app"],
		"RC selector":             objs[5].(*v1.ReplicationController).Spec.Selector["app"],
		"affinity term":           p1.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["app"],
		"anti-affinity preferred": p1.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels["app"],
		"namespace selector":      p1.Spec.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].NamespaceSelector.MatchLabels["app"],
		"spread constraint":       p1.Spec.TopologySpreadConstraints[0].LabelSelector.MatchLabels["app"],
	} {
		if !shared(s, web) {
			t.Errorf("%s %q is a copy of its own", what, s)
		}
	}
	for key := range p1.Labels {
		if !shared(key, tab.String(key)) {
			t.Errorf("pod label key %q is a copy of its own", key)
		}
	}
	if !shared(p1.Namespace, rs.Namespace) || !shared(rs.Spec.Selector.MatchExpressions[0].Values[0], p2.Labels["tier"]) {
		t.Error("namespaces or expression values are copies of their own")
	}
	// Kinds no selector is matched against stay as they were.
	if shared(objs[6].(*v1.Node).Labels["app"], web) {
		t.Error("a Node's labels were shared: only the kinds selectors match against should be")
	}
}

func deepCopy(obj any) any { return obj.(runtime.Object).DeepCopyObject() }

func TestTableIsBounded(t *testing.T) {
	tab := New()
	for i := range MaxStrings + 10 {
		s := fmt.Sprint("value-", i)
		if got := tab.String(s); got != s {
			t.Fatalf("String(%q) = %q", s, got)
		}
	}
	if n := len(tab.strings); n > MaxStrings {
		t.Errorf("the table holds %d strings, more than MaxStrings (%d)", n, MaxStrings)
	}
	if a, b := tab.String(fresh("again")), tab.String(fresh("again")); !shared(a, b) {
		t.Error("after starting again the table no longer shares strings")
	}
}

func TestNilsStayNil(t *testing.T) {
	tab := New()
	p := &v1.Pod{}
	if _, err := tab.Transform(p); err != nil || p.Labels != nil {
		t.Errorf("a pod without labels got %v (%v)", p.Labels, err)
	}
	rs := &appsv1.ReplicaSet{}
	if _, err := tab.Transform(rs); err != nil || rs.Spec.Selector != nil {
		t.Errorf("a ReplicaSet without a selector got %v (%v)", rs.Spec.Selector, err)
	}
}
