package dpdb

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

func minAvail(v intstr.IntOrString) policyv1alpha1.DistributedPodDisruptionBudgetSpec {
	return policyv1alpha1.DistributedPodDisruptionBudgetSpec{MinAvailable: &v}
}

func maxUnavail(v intstr.IntOrString) policyv1alpha1.DistributedPodDisruptionBudgetSpec {
	return policyv1alpha1.DistributedPodDisruptionBudgetSpec{MaxUnavailable: &v}
}

func sure(healthy, expected int32) Observation {
	return Observation{Healthy: healthy, Expected: expected, Sure: true}
}

func TestCompute(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spec        policyv1alpha1.DistributedPodDisruptionBudgetSpec
		own         Observation
		members     []Observation
		wantMin     int32
		wantAllowed int32 // with own.Healthy
		wantSure    bool
	}{
		// The two-namespace case: 3+3 pods, minAvailable 3.
		{"two namespaces", minAvail(intstr.FromInt32(3)), sure(3, 3), []Observation{sure(3, 3)}, 0, 3, true},
		{"other scaled to 0", minAvail(intstr.FromInt32(3)), sure(3, 3), []Observation{sure(0, 0)}, 3, 0, true},
		{"other partly down", minAvail(intstr.FromInt32(3)), sure(3, 3), []Observation{sure(1, 3)}, 2, 1, true},
		// The ring: one pod, minAvailable 4, four neighbours.
		{"ring all up", minAvail(intstr.FromInt32(4)), sure(1, 1), []Observation{sure(1, 1), sure(1, 1), sure(1, 1), sure(1, 1)}, 0, 1, true},
		{"ring neighbour down", minAvail(intstr.FromInt32(4)), sure(1, 1), []Observation{sure(0, 1), sure(1, 1), sure(1, 1), sure(1, 1)}, 1, 0, true},
		// Members alone exceed the requirement: capped by own pods.
		{"capped by own", minAvail(intstr.FromInt32(1)), sure(2, 2), []Observation{sure(10, 10)}, 0, 2, true},
		{"missing member", minAvail(intstr.FromInt32(3)), sure(3, 3), []Observation{sure(3, 3), {}}, FailClosedMinAvailable, 0, false},
		// maxUnavailable over own + members' expected pods.
		{"maxUnavailable 1", maxUnavail(intstr.FromInt32(1)), sure(3, 3), []Observation{sure(3, 3)}, 2, 1, true},
		{"maxUnavailable spent", maxUnavail(intstr.FromInt32(1)), sure(3, 3), []Observation{sure(2, 3)}, 3, 0, true},
		{"maxUnavailable own unsure", maxUnavail(intstr.FromInt32(1)), Observation{Healthy: 3, Expected: 3}, []Observation{sure(3, 3)}, FailClosedMinAvailable, 0, false},
		// Percentages round up as policy/v1 does: 50% of 5 is 3 required;
		// maxUnavailable 30% of 5 is 2 unavailable, so 3 required.
		{"minAvailable 50%", minAvail(intstr.FromString("50%")), sure(2, 2), []Observation{sure(3, 3)}, 0, 2, true},
		{"maxUnavailable 30%", maxUnavail(intstr.FromString("30%")), sure(2, 2), []Observation{sure(3, 3)}, 0, 2, true},
		{"maxUnavailable 30% one down", maxUnavail(intstr.FromString("30%")), sure(2, 2), []Observation{sure(2, 3)}, 1, 1, true},
		{"minAvailable 100%", minAvail(intstr.FromString("100%")), sure(2, 2), []Observation{sure(3, 3)}, 2, 0, true},
		{"maxUnavailable 0", maxUnavail(intstr.FromInt32(0)), sure(2, 2), []Observation{sure(3, 3)}, 2, 0, true},
		{"no members", minAvail(intstr.FromInt32(1)), sure(3, 3), nil, 1, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Compute(tc.spec, tc.own, tc.members)
			if err != nil {
				t.Fatal(err)
			}
			if b.ChildMinAvailable != tc.wantMin || b.Sure != tc.wantSure {
				t.Errorf("child minAvailable %d sure %v, want %d %v", b.ChildMinAvailable, b.Sure, tc.wantMin, tc.wantSure)
			}
			if got := b.Allowed(tc.own.Healthy); got != tc.wantAllowed {
				t.Errorf("allowed %d, want %d", got, tc.wantAllowed)
			}
			// The federation formula, which the child must reproduce.
			if b.Sure {
				total := tc.own.Healthy
				for _, m := range tc.members {
					total += m.Healthy
				}
				formula := min(max(0, total-b.Required), tc.own.Healthy)
				if formula != tc.wantAllowed {
					t.Errorf("federation formula gives %d, child %d", formula, tc.wantAllowed)
				}
			}
		})
	}
}

func TestComputeBadSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec policyv1alpha1.DistributedPodDisruptionBudgetSpec
		want string
	}{
		{"neither", policyv1alpha1.DistributedPodDisruptionBudgetSpec{}, "set exactly one"},
		{"both", policyv1alpha1.DistributedPodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), MaxUnavailable: new(intstr.FromInt32(1))}, "set exactly one"},
		{"over 100%", minAvail(intstr.FromString("150%")), "spec.minAvailable"},
		{"not a percentage", maxUnavail(intstr.FromString("half")), "spec.maxUnavailable"},
		{"negative", minAvail(intstr.FromInt32(-1)), "spec.minAvailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Compute(tc.spec, sure(1, 1), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
			if b.Sure || b.ChildMinAvailable != FailClosedMinAvailable {
				t.Errorf("bad spec did not fail closed: %+v", b)
			}
		})
	}
}
