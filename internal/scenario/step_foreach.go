package scenario

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A foreach is expanded when the file is read (parse.go): its Iterations
// are its steps once per value, which the runner runs in turn. It acts on
// no cluster itself; its cluster, name and timeout are its steps' defaults.
func init() {
	stepKinds.register(&stepKind{
		name:  "foreach",
		scope: onItsSteps,
		setDefaults: func(s *v1alpha1.Step, dir string) {
			for i := range s.Foreach.Steps {
				inner := &s.Foreach.Steps[i]
				if inner.Cluster == "" && !onNamedClustersOnly(inner) {
					inner.Cluster = s.Cluster
				}
				if inner.Name == "" {
					inner.Name = s.Name
				}
				if inner.Timeout == nil {
					inner.Timeout = s.Timeout
				}
			}
			setStepDefaults(s.Foreach.Steps, dir)
		},
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if len(s.Foreach.Values) == 0 {
				return fmt.Errorf("values: required")
			}
			return nil
		},
	})
}
