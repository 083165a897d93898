package scenario

import (
	"fmt"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "sleep",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if s.Sleep.Duration <= 0 {
				return fmt.Errorf("must be a positive duration such as 5s")
			}
			return nil
		},
		// A sleep ends on its own: by default it may run a minute past
		// its duration. Given a shorter timeout, it fails at the timeout.
		timeout: func(s *v1alpha1.Step) time.Duration { return s.Sleep.Duration + defaultStepTimeout },
		do: func(x *stepRun) (string, error) {
			select {
			case <-time.After(x.step.Sleep.Duration):
				return "", nil
			case <-x.ctx.Done():
				return "", x.ctx.Err()
			}
		},
	})
}
