package explain

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Workload's state is read as Kueue's columns read it: the first of
// Finished, Admitted and QuotaReserved that is True, with its message;
// else Pending, with the QuotaReserved message saying why.
func TestWorkloadState(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC))
	cond := func(typ string, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Message: msg, LastTransitionTime: at}
	}
	for _, tc := range []struct {
		conds      []metav1.Condition
		state, why string
	}{
		{nil, "Pending", ""},
		{[]metav1.Condition{cond("QuotaReserved", "False", "insufficient unused quota")}, "Pending", "insufficient unused quota"},
		{[]metav1.Condition{cond("QuotaReserved", "True", "reserved"), cond("Admitted", "False", "waiting for checks")}, "QuotaReserved", "reserved"},
		{[]metav1.Condition{cond("QuotaReserved", "True", "reserved"), cond("Admitted", "True", "admitted")}, "Admitted", "admitted"},
		{[]metav1.Condition{cond("Admitted", "True", "admitted"), cond("Finished", "True", "done")}, "Finished", "done"},
		{[]metav1.Condition{cond("QuotaReserved", "False", "requeued"), cond("Evicted", "True", "preempted")}, "Pending", "requeued"},
	} {
		state, why, since := state(tc.conds)
		if state != tc.state || why != tc.why || (len(tc.conds) > 0 && (since == nil || !since.Equal(at.Time))) {
			t.Errorf("%v: %s %q %v, want %s %q", tc.conds, state, why, since, tc.state, tc.why)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int32]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %s, want %s", n, got, want)
		}
	}
}
