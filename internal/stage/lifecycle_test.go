package stage

import (
	"math"
	"strconv"
	"testing"
)

// Weights are bounded, so their sum cannot overflow: stages of the largest
// weights, fixed or from an expression, share the objects they match
// instead of panicking the simulator.
func TestHugeWeightsShareObjectsWithoutPanic(t *testing.T) {
	huge := strconv.Itoa(math.MaxInt)
	for _, weight := range []string{"weight: " + huge, `weightFrom: {expressionFrom: '"` + huge + `"'}`} {
		a := compileYAML(t, "  resourceRef: {kind: Pod}\n  "+weight+"\n")
		b := compileYAML(t, "  resourceRef: {kind: Pod}\n  "+weight+"\n")
		a.Name, b.Name = "a", "b"
		l := NewLifecycle("", "Pod", []*Stage{a, b})
		seen := map[string]int{}
		for range 200 {
			seen[match(t, l, obj(t, pendingPod)).Name]++
		}
		if seen["a"] == 0 || seen["b"] == 0 {
			t.Errorf("%s: matched %v, want both stages drawn", weight, seen)
		}
	}
}
