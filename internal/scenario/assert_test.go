package scenario

import (
	"bytes"
	"context"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
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

func TestPlacementGroupsByZoneAndMarksPendingAndEvicted(t *testing.T) {
	pl := testView().placement("")
	if pl.Key != zoneKey || len(pl.Domains) != 3 || len(pl.Pending) != 1 || len(pl.Evicted) != 1 {
		t.Fatalf("placement %+v", pl)
	}
	table := pl.Table()
	for _, want := range []string{"topology.kubernetes.io/zone=a", "n1               web×2", "(pending)        web×1", "n4               -"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestJUnitAndReport(t *testing.T) {
	pl := testView().placement("")
	results := []*Result{{Name: "s", File: "s.yaml", Duration: 3 * time.Second, Steps: []*StepResult{
		{Name: "wait", Action: "wait", Start: time.Second, Duration: time.Second, Placement: pl},
		{Name: "assert", Action: "assert", Start: 2 * time.Second, Placement: pl, Assertions: []Outcome{
			{Name: "ok", Passed: true}, {Name: "bad <one>", Expected: "1", Actual: "2"}}},
	}}}
	var x bytes.Buffer
	if err := WriteJUnit(&x, results); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Suites[0]; s.Tests != 3 || s.Failures != 1 || s.Cases[2].Failure == nil || !strings.Contains(s.Cases[2].Failure.Text, "expected: 1") {
		t.Errorf("junit: %+v", doc)
	}
	var h bytes.Buffer
	if err := WriteReport(&h, results); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	for _, want := range []string{"<svg", "bad &lt;one&gt;", "expected: 1", "evicted so far", "pending (1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, banned := range []string{"http://", "https://cdn", "<link", "src="} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("report fetches something: %q", banned)
		}
	}
}

func dpdbObject(name string, allowed, healthy int32, degraded string) *unstructured.Unstructured {
	d := &policyv1alpha1.DistributedPodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion, Kind: policyv1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Status:     policyv1alpha1.DistributedPodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: healthy, Federated: "4/4"},
	}
	if degraded != "" {
		d.Status.Conditions = []metav1.Condition{{Type: policyv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue, Message: degraded}}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestBudgetAssertions(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{policyv1alpha1.Resource: policyv1alpha1.Kind + "List"},
		dpdbObject("a", 0, 4, ""), dpdbObject("b", 1, 5, ""), dpdbObject("c", 0, 0, "member blue:default/x: unreachable"))
	v := &view{t: &target{client: fake.NewSimpleClientset(pdb), dynamic: dyn}, ctx: context.Background()}
	for _, tc := range []struct {
		name             string
		a                v1alpha1.Assertion
		passed           bool
		expected, actual string
	}{
		{"one pdb", v1alpha1.Assertion{PDB: &v1alpha1.PDBAssertion{Name: "web", DisruptionsAllowed: ptr.To[int32](1)}},
			true, "disruptionsAllowed=1", "disruptionsAllowed=1 currentHealthy=3"},
		{"every pdb", v1alpha1.Assertion{PDB: &v1alpha1.PDBAssertion{DisruptionsAllowed: ptr.To[int32](0)}},
			false, "disruptionsAllowed=0 for (all)", "web: disruptionsAllowed=1 currentHealthy=3"},
		{"one dpdb", v1alpha1.Assertion{DPDB: &v1alpha1.PDBAssertion{Name: "b", DisruptionsAllowed: ptr.To[int32](1), CurrentHealthy: ptr.To[int32](5)}},
			true, "disruptionsAllowed=1 currentHealthy=5", "disruptionsAllowed=1 currentHealthy=5"},
		{"dpdbs by name", v1alpha1.Assertion{DPDB: &v1alpha1.PDBAssertion{Names: []string{"a", "b"}, DisruptionsAllowed: ptr.To[int32](0)}},
			false, "disruptionsAllowed=0 for a, b", "a: disruptionsAllowed=0 currentHealthy=4 (federated 4/4); b: disruptionsAllowed=1 currentHealthy=5"},
		{"a degraded dpdb says why", v1alpha1.Assertion{DPDB: &v1alpha1.PDBAssertion{Name: "c", DisruptionsAllowed: ptr.To[int32](1)}},
			false, "disruptionsAllowed=1", "disruptionsAllowed=0 currentHealthy=0 (member blue:default/x: unreachable)"},
		{"none in a namespace", v1alpha1.Assertion{DPDB: &v1alpha1.PDBAssertion{Namespace: "other", DisruptionsAllowed: ptr.To[int32](1)}},
			false, "disruptionsAllowed=1 for (all)", "none in namespace other"},
		{"missing", v1alpha1.Assertion{DPDB: &v1alpha1.PDBAssertion{Name: "nope", DisruptionsAllowed: ptr.To[int32](1)}},
			false, "disruptionsAllowed=1", `distributedpoddisruptionbudgets.policy.kubesim.io "nope" not found`},
	} {
		passed, expected, actual := v.evaluate(&tc.a)
		if passed != tc.passed || expected != tc.expected || actual != tc.actual {
			t.Errorf("%s: %v, expected %q, actual %q; want %v, %q, %q", tc.name, passed, expected, actual, tc.passed, tc.expected, tc.actual)
		}
	}
}

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
