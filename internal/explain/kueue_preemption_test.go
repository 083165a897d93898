package explain

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestPreemptorUIDReadsKueuesPreemptedCondition(t *testing.T) {
	preempted := func(status metav1.ConditionStatus, message string) *kueuev1beta2.Workload {
		return &kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{Conditions: []metav1.Condition{
			{Type: kueuev1beta2.WorkloadPreempted, Status: status, Reason: "InCohortReclamation", Message: message},
		}}}
	}
	for _, c := range []struct {
		name string
		w    *kueuev1beta2.Workload
		want types.UID
	}{
		{"kueue's message", preempted(metav1.ConditionTrue, "Preempted to accommodate a workload (UID: 5f0c-aa, JobUID: 77b1-cc) due to reclamation within the cohort"), "5f0c-aa"},
		{"readmitted since", preempted(metav1.ConditionFalse, "Preempted to accommodate a workload (UID: 5f0c-aa, JobUID: 77b1-cc) due to reclamation within the cohort"), ""},
		{"a message without the uid", preempted(metav1.ConditionTrue, "Preempted by an administrator"), ""},
		{"never preempted", &kueuev1beta2.Workload{}, ""},
	} {
		if got := preemptorUID(c.w); got != c.want {
			t.Errorf("%s: preemptorUID = %q, want %q", c.name, got, c.want)
		}
	}
}
