package stage

import (
	"strings"
	"testing"
	"time"
)

// celForever is a CEL expression far past the budget: nested
// comprehensions over a list, 10^8 steps.
const celForever = `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, [1,2,3,4,5,6,7,8,9,10].all(h, a+b+c+d+e+f+g+h > 0))))))))`

// A CEL selector past its budget is no match and a fault naming the field,
// as a jq one is; one that reads what the object lacks is quietly no match.
func TestCELSelectorsMatchAndFence(t *testing.T) {
	o := obj(t, pendingPod)
	for expr, want := range map[string]bool{
		`self.status.phase == 'Pending'`:                                 true,
		`self.status.phase == 'Running'`:                                 false,
		`self.spec.nodeName.startsWith('node-') `:                        true,
		`self.status.podIP == '10.0.0.1'`:                                false, // no such field: no match
		`has(self.status.podIP) || self.metadata.namespace == 'default'`: true,
	} {
		s := compileYAML(t, "  resourceRef: {kind: Pod}\n  selector: {matchExpressions: [{cel: {expression: \""+expr+"\"}}]}\n  steps: [{delete: true}]\n")
		matched, faults := NewLifecycle("", "Pod", []*Stage{s}).Match(o)
		if (matched != nil) != want || len(faults) != 0 {
			t.Errorf("%s: matched %v, faults %v; want %v", expr, matched != nil, faults, want)
		}
	}
	s := compileYAML(t, "  resourceRef: {kind: Pod}\n  selector: {matchExpressions: [{cel: {expression: '"+celForever+"'}}]}\n  steps: [{delete: true}]\n")
	var matched *Stage
	var faults []*Fault
	promptly(t, func() { matched, faults = NewLifecycle("", "Pod", []*Stage{s}).Match(o) })
	if matched != nil {
		t.Error("a runaway CEL selector matched")
	}
	wantFault(t, faults, s, "spec.selector.matchExpressions[0].cel.expression")
}

// CEL value expressions: a weight, a delay from a duration or a time.
func TestCELValues(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {kind: Pod}
  weightFrom: {cel: {expression: "self.metadata.name == 'p' ? 7 : 1"}}
  delay:
    durationFrom: {cel: {expression: "duration('3s')"}}
    jitterDurationFrom: {cel: {expression: "timestamp('2026-01-01T00:00:10Z')"}}
  steps: [{delete: true}]
`)
	o := obj(t, "metadata: {name: p, namespace: default}\n")
	if w, err := s.weight(o); w != 7 || err != nil {
		t.Errorf("weight %d, %v; want 7", w, err)
	}
	lo, hi, fault := s.DelayRange(o, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if lo != 3*time.Second || hi != 10*time.Second || fault != nil {
		t.Errorf("delay [%s, %s] %v; want [3s, 10s]", lo, hi, fault)
	}
	if _, err := compileSpec("  resourceRef: {kind: Pod}\n  weightFrom: {cel: {expression: 'self.'}}\n  steps: [{delete: true}]\n"); err == nil ||
		!strings.Contains(err.Error(), "spec.weightFrom.cel.expression") {
		t.Errorf("a CEL expression that does not compile: %v", err)
	}
}
