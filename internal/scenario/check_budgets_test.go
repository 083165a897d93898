package scenario

import (
	"context"
	"testing"

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
