package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// stepKind is one action a step can take, declared once, in a file of its
// own (step_*.go): the Step field that sets it, its defaults, its checks
// and how it runs.
type stepKind struct {
	name  string // the field's JSON name
	scope scope
	// setDefaults fills in what a file may leave out (dir is the
	// scenario's directory); it runs before validate, which changes nothing.
	setDefaults func(s *v1alpha1.Step, dir string)
	// validate checks what decoding cannot; its error names the fault
	// inside the field (the caller puts steps[i].name in front).
	validate func(s *v1alpha1.Step, clusters clusterNames) error
	// do runs the step; detail is its one-line summary.
	do func(x *stepRun) (detail string, err error)
	// picture, if set, has the cluster's placement recorded after the
	// step even when it passes; it gives the topology key nodes are
	// grouped by ("" for the zone, when nodes have one).
	picture func(*v1alpha1.Step) string
	// check: the step is itself a check (a wait), so reports count it as
	// a test case even when it passes.
	check bool
	// timeout, if set, is the kind's own default timeout for a step that
	// gives none; else it is defaultStepTimeout.
	timeout func(*v1alpha1.Step) time.Duration
	// children, for a kind that runs steps of its own (scope onItsSteps),
	// are those steps in groups run in turn (a foreach's iterations). The
	// runner and every check across steps walk them as they walk steps.
	children func(*v1alpha1.Step) []stepGroup
}

// stepGroup is steps a step runs, as one: the first that fails and does
// not continue on error ends the group. suffix is added to their names
// in reports (" [zone=a]").
type stepGroup struct {
	suffix string
	steps  []v1alpha1.Step
}

// eachStep calls visit on each step and, after it, on the steps it runs,
// with its path in the file (steps[2].foreach.steps[0]); it stops at the
// first error.
func eachStep(steps []v1alpha1.Step, path string, visit func(s *v1alpha1.Step, at string) error) error {
	for i := range steps {
		s := &steps[i]
		at := fmt.Sprintf("%s[%d]", path, i)
		if err := visit(s, at); err != nil {
			return err
		}
		for _, k := range stepKinds.setOn(s) {
			if k.children == nil {
				continue
			}
			for _, g := range k.children(s) {
				if err := eachStep(g.steps, at+"."+k.name+".steps", visit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (k *stepKind) fieldName() string { return k.name }

// defaultStepTimeout bounds a step that gives no timeout, unless its kind
// has a default of its own (docs/scenarios.md, Timeouts, states each).
const defaultStepTimeout = time.Minute

// timeoutOf is how long a step may run: its timeout, else its kind's
// default, else defaultStepTimeout.
func (k *stepKind) timeoutOf(s *v1alpha1.Step) time.Duration {
	switch {
	case s.Timeout != nil:
		return s.Timeout.Duration
	case k.timeout != nil:
		return k.timeout(s)
	}
	return defaultStepTimeout
}

// stepKinds are the actions a step can take.
var stepKinds = union[v1alpha1.Step, *stepKind]{noun: "action", whole: "step", split: "split it into several steps"}

// scope is where a step acts, which says what its cluster: means.
type scope int

const (
	// onOneCluster: the step acts on its cluster: (default the only one).
	onOneCluster scope = iota
	// onNamedClusters: the step acts on the clusters its field names
	// (federate), so it takes no cluster: and pictures none.
	onNamedClusters
	// onItsSteps: the step runs steps (foreach); its cluster: is only
	// their default.
	onItsSteps
)

// stepRun is one step as it runs: what a kind's do works with. Its ctx
// ends at the step's timeout (runStep).
type stepRun struct {
	ctx     context.Context
	r       *runner
	t       *target // the step's cluster; nil for one on named clusters
	step    *v1alpha1.Step
	result  *result.Step
	timeout time.Duration
}

// onNamedClustersOnly reports whether a step (valid or not yet) acts on the
// clusters it names: a foreach does not hand such a step its cluster:.
func onNamedClustersOnly(s *v1alpha1.Step) bool {
	for _, k := range stepKinds.setOn(s) {
		if k.scope == onNamedClusters {
			return true
		}
	}
	return false
}

// zoneGrouping is the picture of a step that asks for no grouping: nodes
// grouped by zone, when they have one.
func zoneGrouping(*v1alpha1.Step) string { return "" }
