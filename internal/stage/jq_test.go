package stage

import (
	"strings"
	"testing"
	"time"
)

// forever is a jq expression that never ends.
const forever = "def f: f; f"

// promptly runs f, failing t if it has not returned within seconds.
func promptly(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still running after 10s")
	}
}

// wantFault checks that faults is one fault of s naming field.
func wantFault(t *testing.T, faults []*Fault, s *Stage, field string) {
	t.Helper()
	if len(faults) != 1 || faults[0].Stage != s || !strings.Contains(faults[0].Error(), field) ||
		!strings.Contains(faults[0].Error(), "limit") {
		t.Errorf("faults %v, want one of stage %s naming %s and the limit", faults, s.Name, field)
	}
}

// A selector that would run forever stops at its limit: it is no match,
// whatever the operator, and comes back as a fault naming the field.
func TestSelectorThatRunsForeverIsNoMatch(t *testing.T) {
	for op, values := range map[string]string{"In": "[x]", "NotIn": "[x]", "Exists": "[]", "DoesNotExist": "[]"} {
		s := compileYAML(t, "  resourceRef: {kind: Pod}\n  selector: {matchExpressions: [{key: '"+forever+"', operator: "+op+", values: "+values+"}]}\n")
		var matched *Stage
		var faults []*Fault
		promptly(t, func() { matched, faults = NewLifecycle("", "Pod", []*Stage{s}).Match(obj(t, pendingPod)) })
		if matched != nil {
			t.Errorf("%s: matched %s", op, matched.Name)
		}
		wantFault(t, faults, s, "spec.selector.matchExpressions[0].key")
	}
}

// A weight or delay expression that would run forever stops at its limit:
// it yields no value, so the fixed weight or delay holds, and comes back
// as a fault naming the field.
func TestWeightAndDelayThatRunForeverFallBack(t *testing.T) {
	s := compileYAML(t, "  resourceRef: {kind: Pod}\n  weight: 3\n  weightFrom: {expressionFrom: '"+forever+"'}\n"+
		"  delay: {durationMilliseconds: 1000, jitterDurationFrom: {expressionFrom: '"+forever+"'}}\n")
	o := obj(t, pendingPod)
	var weight int64
	var err error
	promptly(t, func() { weight, err = s.weight(o) })
	if weight != 3 || err == nil || !strings.Contains(err.Error(), "spec.weightFrom.expressionFrom") {
		t.Errorf("weight %d, %v; want the fixed 3 and an error naming spec.weightFrom.expressionFrom", weight, err)
	}
	var d time.Duration
	var fault *Fault
	promptly(t, func() { d, fault = s.Delay(o, time.Now()) })
	if d != time.Second {
		t.Errorf("delay %s, want the fixed 1s", d)
	}
	wantFault(t, []*Fault{fault}, s, "spec.delay.jitterDurationFrom.expressionFrom")
}
