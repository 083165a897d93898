package explain

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestIsBoundDirectly(t *testing.T) {
	scheduled := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	for _, c := range []struct {
		name   string
		pod    corev1.Pod
		direct bool
	}{
		{"made with spec.nodeName", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}}, true},
		{"bound by the scheduler", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: scheduled}, false},
		{"pending", corev1.Pod{}, false},
	} {
		if got := IsBoundDirectly(&c.pod); got != c.direct {
			t.Errorf("%s: IsBoundDirectly = %v, want %v", c.name, got, c.direct)
		}
	}
}

func TestPrintPodBoundDirectly(t *testing.T) {
	var out bytes.Buffer
	e := &Explanation{Namespace: "default", Name: "p", Result: BoundDirectly, Node: "node-000001", Message: boundDirectlyMessage}
	if err := PrintPod(&out, e, DefaultRows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "on node-000001, bound directly") || !strings.Contains(out.String(), "never went through the scheduler") {
		t.Errorf("output:\n%s", out.String())
	}
}

// The error that says there is no record promises events only when there
// are some to print.
func TestNoRecordErrorPromisesOnlyEventsItHas(t *testing.T) {
	withEvents := (&NoRecordError{Msg: "no record", Events: []string{"10:00:00  Scheduled  Successfully assigned default/p to n"}}).Error()
	if !strings.Contains(withEvents, "events are above") {
		t.Errorf("with events: %q", withEvents)
	}
	without := (&NoRecordError{Msg: "no record"}).Error()
	if strings.Contains(without, "above") || !strings.Contains(without, "no scheduling events of it remain") {
		t.Errorf("without events: %q", without)
	}
}
