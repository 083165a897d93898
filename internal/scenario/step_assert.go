package scenario

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "assert",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			for i := range s.Assert {
				if err := validateAssertion(&s.Assert[i]); err != nil {
					return fmt.Errorf("[%d]: %w", i, err)
				}
			}
			return nil
		},
		do:      assert,
		picture: func(s *v1alpha1.Step) string { return groupingKey(s.Assert) },
	})
}

// assert checks each assertion once, against the cluster listed now.
func assert(x *stepRun) (string, error) {
	passed := 0
	for i := range x.step.Assert {
		o := x.t.check(x.ctx, &x.step.Assert[i])
		x.result.Assertions = append(x.result.Assertions, o)
		if o.Passed {
			passed++
		}
	}
	return fmt.Sprintf("%d/%d passed", passed, len(x.step.Assert)), nil
}
