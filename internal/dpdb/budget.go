// Package dpdb is the DistributedPodDisruptionBudget controller: for each
// DPDB it keeps one child policy/v1 PodDisruptionBudget whose allowed
// disruptions are what the whole federation allows, while the built-in
// disruption controller stays on and counts the child's pods itself.
package dpdb

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// Observation is a PodDisruptionBudget's status as last read: its healthy
// and expected pods, and whether that reading can be trusted.
type Observation struct {
	Healthy, Expected int32
	// Sure is false when the PDB is missing, unreachable or its status is
	// not current; the budget then fails closed.
	Sure bool
}

// FailClosedMinAvailable is the child's minAvailable while the federation
// cannot be read with certainty: no pod may go. An int minAvailable (not
// maxUnavailable: 0) keeps the disruption controller counting the child's
// pods even when they have no controller, so the child's own status, which
// its neighbours read, stays current while it is closed.
const FailClosedMinAvailable = math.MaxInt32

// Required is how many pods of the whole federation must stay healthy,
// from minAvailable or maxUnavailable over the federation's expected pods,
// percentages rounded up as policy/v1 rounds them.
func Required(spec policyv1alpha1.DistributedPodDisruptionBudgetSpec, expected int32) (int32, error) {
	switch {
	case spec.MinAvailable != nil && spec.MaxUnavailable == nil:
		v, err := scaled(spec.MinAvailable, expected, "spec.minAvailable")
		return v, err
	case spec.MaxUnavailable != nil && spec.MinAvailable == nil:
		v, err := scaled(spec.MaxUnavailable, expected, "spec.maxUnavailable")
		if err != nil {
			return 0, err
		}
		return max(0, expected-v), nil
	}
	return 0, fmt.Errorf("spec: set exactly one of spec.minAvailable or spec.maxUnavailable")
}

func scaled(v *intstr.IntOrString, total int32, field string) (int32, error) {
	if v.Type == intstr.String {
		pct, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
		if err != nil || pct > 100 {
			return 0, fmt.Errorf("%s: %q is not a percentage from 0%% to 100%%", field, v.StrVal)
		}
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(total), true)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", field, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s: must not be negative, got %d", field, n)
	}
	return int32(min(n, math.MaxInt32)), nil
}

// Budget is the federation's arithmetic for one DPDB.
type Budget struct {
	// Required is how many of the federation's pods must stay healthy.
	Required int32
	// MembersHealthy and MembersExpected sum the federated PDBs.
	MembersHealthy, MembersExpected int32
	// ChildMinAvailable is the child PDB's minAvailable: the upstream
	// disruption controller then allows ownHealthy − ChildMinAvailable,
	// which is the federation's answer, capped by the pods the child
	// covers.
	ChildMinAvailable int32
	// Sure is false when the budget failed closed.
	Sure bool
}

// Compute derives the child's minAvailable from own (the child PDB's own
// status: only its expected pods matter, for maxUnavailable) and the
// members. Any unsure member, or an own status needed but not current,
// fails closed.
//
// The child's minAvailable is max(0, required − Σ members' healthy), so
// upstream computes allowed = max(0, ownHealthy + Σ membersHealthy −
// required): the federation formula, counted live by upstream for own pods.
func Compute(spec policyv1alpha1.DistributedPodDisruptionBudgetSpec, own Observation, members []Observation) (Budget, error) {
	b := Budget{Sure: true}
	for _, m := range members {
		if !m.Sure {
			b.Sure = false
			continue
		}
		b.MembersHealthy = addCapped(b.MembersHealthy, m.Healthy)
		b.MembersExpected = addCapped(b.MembersExpected, m.Expected)
	}
	// Only maxUnavailable and percentages need the own expected count.
	needsOwn := spec.MaxUnavailable != nil || (spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.String)
	if needsOwn && !own.Sure {
		b.Sure = false
	}
	required, err := Required(spec, addCapped(own.Expected, b.MembersExpected))
	if err != nil {
		b.Sure = false
		b.ChildMinAvailable = FailClosedMinAvailable
		return b, err
	}
	b.Required = required
	if !b.Sure {
		b.ChildMinAvailable = FailClosedMinAvailable
		return b, nil
	}
	b.ChildMinAvailable = max(0, required-b.MembersHealthy)
	return b, nil
}

// Allowed is what the federation allows given own healthy pods: what the
// child PDB will show once upstream has counted them.
func (b Budget) Allowed(ownHealthy int32) int32 {
	if !b.Sure {
		return 0
	}
	return max(0, ownHealthy-b.ChildMinAvailable)
}

func addCapped(a, b int32) int32 {
	return int32(min(int64(a)+int64(b), math.MaxInt32))
}
