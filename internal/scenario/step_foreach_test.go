package scenario

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/report"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// runSteps runs a scenario's steps on one fake cluster; it returns
// whether they passed and the steps' names and lines as reports show them.
func runSteps(t *testing.T, text string) (passed bool, names []string, lines []int) {
	t.Helper()
	f, err := load(t, head+text, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{term: &report.Terminal{Out: io.Discard}, result: &result.Scenario{}, began: time.Now(),
		targets: map[string]*target{"": {client: fake.NewClientset()}}}
	passed = r.steps(context.Background(), f.Scenario.Steps, "")
	for _, s := range r.result.Steps {
		names, lines = append(names, s.Name), append(lines, s.Line)
	}
	return passed, names, lines
}

// A foreach's steps run once per value, each named after its iteration
// (nested ones after both), at the line of the step in the file.
func TestForeachStepsAreNamedAfterTheirIteration(t *testing.T) {
	passed, names, lines := runSteps(t, `steps:
- name: round
  foreach:
    var: x
    values: [1, 2]
    steps:
    - sleep: 1ms
    - foreach: {values: [a], steps: [{name: nap, sleep: 1ms}]}
- sleep: 1ms
`)
	want := []string{"round [x=1]", "nap [x=1] [item=a]", "round [x=2]", "nap [x=2] [item=a]", "sleep"}
	if !passed || !slices.Equal(names, want) {
		t.Errorf("passed %v, steps %q; want true, %q", passed, names, want)
	}
	if want := []int{9, 10, 9, 10, 11}; !slices.Equal(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
}

// A failed step ends its iteration (unless it continues on error), and a
// failed iteration ends the foreach and the run, unless the foreach
// continues on error: then the next iteration runs.
func TestAFailedIterationEndsTheForeachUnlessItContinues(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{`steps:
- foreach:
    values: [1, 2]
    steps: [{name: fails, sleep: 1h, timeout: 1ms, continueOnError: true}, {sleep: 1ms}]
- sleep: 1ms
`, []string{"fails [item=1]", "sleep [item=1]"}},
		{`steps:
- continueOnError: true
  foreach:
    values: [1, 2]
    steps: [{name: fails, sleep: 1h, timeout: 1ms}, {sleep: 1ms}]
- sleep: 1ms
`, []string{"fails [item=1]", "fails [item=2]", "sleep"}},
	} {
		passed, names, _ := runSteps(t, c.text)
		if passed || !slices.Equal(names, c.want) {
			t.Errorf("%s: passed %v, steps %q; want false, %q", c.text, passed, names, c.want)
		}
	}
}

// A fault in one iteration names the step where the file has it, not
// where it is among the expanded steps.
func TestAFaultInAnIterationNamesItsStepInTheFile(t *testing.T) {
	_, err := load(t, head+`clusters: [{name: a}, {name: b}]
steps:
- foreach: {var: c, values: [a, nope], steps: [{cluster: a, sleep: 1s}, {cluster: "${c}", sleep: 1s}]}
`, nil)
	want := `:5: steps[0].foreach.steps[1].cluster: no cluster named "nope"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %s", err, want)
	}
}

// iterationSteps are the steps of each of a foreach's iterations (none
// for another step).
func iterationSteps(s *v1alpha1.Step) [][]v1alpha1.Step {
	var out [][]v1alpha1.Step
	if s.Foreach == nil {
		return nil
	}
	for _, g := range iterations(s) {
		out = append(out, g.steps)
	}
	return out
}

// values: {from, to} is the whole numbers between, a parameter giving a
// bound; a bad range is refused on its line.
func TestForeachOverARange(t *testing.T) {
	passed, names, _ := runSteps(t, `steps:
- foreach: {var: n, values: {from: 3, to: 5}, steps: [{name: nap, sleep: 1ms}]}
`)
	if want := []string{"nap [n=3]", "nap [n=4]", "nap [n=5]"}; !passed || !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
	for text, want := range map[string]string{
		"steps:\n- foreach: {values: {from: 1}, steps: [{sleep: 1s}]}\n":             `:4: foreach.values: a range wants from and to`,
		"steps:\n- foreach: {values: {from: 1, to: x}, steps: [{sleep: 1s}]}\n":      `:4: foreach.values.to: "x" is not a whole number`,
		"steps:\n- foreach: {values: {from: 5, to: 1}, steps: [{sleep: 1s}]}\n":      `:4: foreach.values: from 5 to 1; give to ≥ from, at most 10000 values`,
		"steps:\n- foreach: {values: {from: 1, to: 100000}, steps: [{sleep: 1s}]}\n": `at most 10000 values`,
	} {
		if _, err := load(t, head+text, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
}
