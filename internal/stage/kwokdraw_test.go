package stage

import "testing"

// Stages that match at once, none weighted, take turns as KWOK draws them
// (a Ready node's heartbeat and a user's stage for the same node), rather
// than the first by name taking every turn.
func TestUnweightedMatchesTakeTurns(t *testing.T) {
	a := compileYAML(t, "  resourceRef: {kind: Pod}\n  selector: {matchExpressions: [{key: .status.phase, operator: In, values: [Pending]}]}\n  steps: [{delete: true}]\n")
	a.Name = "a"
	b := compileYAML(t, "  resourceRef: {kind: Pod}\n  selector: {matchExpressions: [{key: .status.phase, operator: In, values: [Pending]}]}\n  steps: [{delete: true}]\n")
	b.Name = "b"
	l := NewLifecycle("", "Pod", []*Stage{a, b})
	o := obj(t, pendingPod)
	seen := map[string]int{}
	for range 200 {
		s, _ := l.Match(o)
		seen[s.Name]++
	}
	if seen["a"] == 0 || seen["b"] == 0 {
		t.Errorf("drawn %v in 200 matches, want both", seen)
	}
}

// Quote writes a string, whatever it is given, as KWOK's does: a number
// or a boolean written into an annotation must be one.
func TestQuoteWritesStrings(t *testing.T) {
	for v, want := range map[any]string{"x": `"x"`, 3: `"3"`, 2.5: `"2.5"`, true: `"true"`, `a"b`: `"a\"b"`} {
		if got := quote(v); got != want {
			t.Errorf("Quote %#v = %s, want %s", v, got, want)
		}
	}
	if got := quote(nil); got != `""` {
		t.Errorf("Quote nil = %s, want \"\"", got)
	}
}
