package dpdb

import (
	"fmt"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// observedAtRefresh is how stale a member's recorded observation time may
// get before a status write refreshes it: refreshing it on every sync
// would write the status on every sync.
const observedAtRefresh = resync

// status is what one sync learnt, to be written as the DPDB's status.
type status struct {
	dpdb         *policyv1alpha1.DistributedPodDisruptionBudget
	views        []memberView
	own          Observation
	budget       Budget
	specErr      error
	conflict     string
	child        *policyv1.PodDisruptionBudget
	childChanged bool
}

func (s status) build(now time.Time) policyv1alpha1.DistributedPodDisruptionBudgetStatus {
	d := s.dpdb
	out := policyv1alpha1.DistributedPodDisruptionBudgetStatus{
		ObservedGeneration: d.Generation,
		Conditions:         append([]metav1.Condition(nil), d.Status.Conditions...),
	}
	observed := 0
	old := map[policyv1alpha1.FederatedPDB]policyv1alpha1.MemberStatus{}
	for _, m := range d.Status.Members {
		old[m.FederatedPDB] = m
	}
	healthy, expected := s.own.Healthy, s.own.Expected
	for i, v := range s.views {
		ms := policyv1alpha1.MemberStatus{
			FederatedPDB:   d.Spec.Federation[i],
			Observed:       v.obs.Sure,
			CurrentHealthy: v.obs.Healthy,
			ExpectedPods:   v.obs.Expected,
			Message:        v.message,
		}
		if !v.observedAt.IsZero() {
			ms.ObservedAt = &metav1.Time{Time: v.observedAt.Truncate(time.Second)}
			// Keep the recorded time while it is recent and nothing else
			// changed, so an unchanged federation is not rewritten.
			if prev, ok := old[ms.FederatedPDB]; ok && prev.ObservedAt != nil && now.Sub(prev.ObservedAt.Time) < observedAtRefresh {
				cmp := ms
				cmp.ObservedAt = prev.ObservedAt
				if cmp == prev {
					ms.ObservedAt = prev.ObservedAt
				}
			}
		}
		if v.obs.Sure {
			observed++
			healthy += v.obs.Healthy
			expected += v.obs.Expected
		}
		out.Members = append(out.Members, ms)
	}
	out.Federated = fmt.Sprintf("%d/%d", observed, len(s.views))
	out.CurrentHealthy, out.ExpectedPods = healthy, expected
	out.DesiredHealthy = s.budget.Required
	if s.child != nil {
		out.ChildPDB = s.child.Name
	}

	ready := metav1.Condition{Type: policyv1alpha1.ConditionReady, ObservedGeneration: d.Generation}
	degraded := metav1.Condition{Type: policyv1alpha1.ConditionDegraded, ObservedGeneration: d.Generation,
		Status: metav1.ConditionFalse, Reason: policyv1alpha1.ReasonAllMembersHealthy, Message: "every member observed"}
	if unsure := describe(s.views); unsure != "" {
		degraded.Status, degraded.Reason = metav1.ConditionTrue, policyv1alpha1.ReasonMemberUnavailable
		degraded.Message = "0 disruptions allowed until every member is observed: " + unsure
	}
	childCurrent := s.child != nil && !s.childChanged && s.child.Status.ObservedGeneration >= s.child.Generation
	switch {
	case s.conflict != "":
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, policyv1alpha1.ReasonChildConflict, s.conflict
	case s.specErr != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, policyv1alpha1.ReasonInvalidSpec, s.specErr.Error()
	case !s.budget.Sure:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, policyv1alpha1.ReasonMemberUnavailable, degraded.Message
	case !childCurrent:
		ready.Status, ready.Reason = metav1.ConditionFalse, policyv1alpha1.ReasonChildNotObserved
		ready.Message = "waiting for the disruption controller to count the child PDB's pods"
	default:
		out.DisruptionsAllowed = s.child.Status.DisruptionsAllowed
		ready.Status, ready.Reason = metav1.ConditionTrue, policyv1alpha1.ReasonFederated
		ready.Message = fmt.Sprintf("child PDB %s allows %d: %d healthy of %d required across this DPDB and %d members",
			s.child.Name, out.DisruptionsAllowed, healthy, s.budget.Required, len(s.views))
	}
	meta.SetStatusCondition(&out.Conditions, ready)
	meta.SetStatusCondition(&out.Conditions, degraded)
	return out
}

func intstrFromInt32(v int32) intstr.IntOrString { return intstr.FromInt32(v) }
