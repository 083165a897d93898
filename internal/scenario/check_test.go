package scenario

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func node(name, zone string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{zoneKey: zone}},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func pod(name, app, node string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// testView: zones a (n1, n2), b (n3), c (n4, empty); web 3/1/0.
func testView() *view {
	return &view{
		t:     &target{evicted: map[string]bool{"default/gone": true}, client: fake.NewSimpleClientset()},
		nodes: []corev1.Node{node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", "c")},
		pods:  []corev1.Pod{pod("w1", "web", "n1"), pod("w2", "web", "n1"), pod("w3", "web", "n2"), pod("w4", "web", "n3"), pod("p", "web", "")},
	}
}

func TestAssertionsOverAView(t *testing.T) {
	v := testView()
	for _, tc := range []struct {
		name   string
		a      v1alpha1.Assertion
		passed bool
		actual string
	}{
		{"skew counts empty domains", v1alpha1.Assertion{Spread: &v1alpha1.SpreadAssertion{PodSet: v1alpha1.PodSet{Selector: "app=web"}, TopologyKey: zoneKey, MaxSkew: ptr.To(1)}}, false, "skew 3: a=3 b=1 c=0"},
		{"skew within 3", v1alpha1.Assertion{Spread: &v1alpha1.SpreadAssertion{TopologyKey: zoneKey, MaxSkew: ptr.To(3)}}, true, "skew 3: a=3 b=1 c=0"},
		{"no two share a node", v1alpha1.Assertion{PerNode: &v1alpha1.PerNodeAssert{Max: 1}}, false, "n1 has 2"},
		{"running on n1", v1alpha1.Assertion{Pods: &v1alpha1.PodsAssertion{Node: "n1", Count: v1alpha1.Count{Count: ptr.To(2)}}}, true, "2"},
		{"pending", v1alpha1.Assertion{Pods: &v1alpha1.PodsAssertion{Phase: "Running", Count: v1alpha1.Count{Min: ptr.To(6)}}}, false, "5"},
		{"in zone a", v1alpha1.Assertion{Pods: &v1alpha1.PodsAssertion{NodeSelector: zoneKey + "=a", Count: v1alpha1.Count{Count: ptr.To(3)}}}, true, "3"},
		{"only on n1,n2", v1alpha1.Assertion{OnlyOn: &v1alpha1.OnlyOnAssertion{Nodes: v1alpha1.NodeRef{Names: []string{"n1", "n2"}}}}, false, "w4 on n3"},
		{"no disruption yet", v1alpha1.Assertion{Evictions: &v1alpha1.EvictionsAssert{Made: ptr.To(0)}}, false, "none ran"},
		{"cel", v1alpha1.Assertion{CEL: "pods.filter(p, has(p.spec.nodeName) && p.spec.nodeName == 'n1').size() == 2 && nodes.size() == 4"}, true, "true"},
	} {
		passed, _, actual := v.evaluate(&tc.a)
		if passed != tc.passed || actual != tc.actual {
			t.Errorf("%s: passed %v actual %q; want %v %q", tc.name, passed, actual, tc.passed, tc.actual)
		}
	}
}
