package scenario

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

func init() {
	stepKinds.register(&stepKind{
		name: "wait",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			for _, k := range checkKinds.setOn(&s.Wait.Assertion) {
				if k.assertOnly != "" {
					return fmt.Errorf("%s: only an assert can check them (%s)", k.name, k.assertOnly)
				}
			}
			return validateAssertion(&s.Wait.Assertion)
		},
		do:      wait,
		picture: func(s *v1alpha1.Step) string { return groupingKey([]v1alpha1.Assertion{s.Wait.Assertion}) },
		check:   true,
	})
}

// wait re-checks the step's assertion, in the watches' view, on every
// change until it holds or the step's timeout passes.
func wait(x *stepRun) (string, error) {
	a := &x.step.Wait.Assertion
	for _, k := range checkKinds.setOn(a) {
		if k.watch != nil {
			k.watch(x.t)
		}
	}
	var last result.Outcome
	err := x.t.until(x.ctx, x.timeout, func() (bool, string) {
		last = x.t.checkIn(x.t.cachedView(x.ctx), a)
		return last.Passed, fmt.Sprintf("%s: expected %s, got %s", last.Name, last.Expected, last.Actual)
	})
	return last.Name, err
}
