package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name:     "federate",
		scope:    onNamedClusters,
		validate: validateFederate,
		do:       func(x *stepRun) (string, error) { return x.r.federate(x.ctx, x.step.Federate) },
	})
}

// validateFederate checks a federate step names two or more of the
// scenario's clusters, each once.
func validateFederate(s *v1alpha1.Step, clusters clusterNames) error {
	if len(s.Federate) < 2 {
		return fmt.Errorf("name two or more of the scenario's clusters, such as [red, blue, green]")
	}
	for i, name := range s.Federate {
		if !clusters[name] || name == "" {
			return itemError{i, fmt.Errorf("no cluster named %q in clusters: (%s)", name, strings.Join(clusters.sorted(), ", "))}
		}
		if slices.Contains(s.Federate[:i], name) {
			return itemError{i, fmt.Errorf("%q is named twice", name)}
		}
	}
	return nil
}

// federate wires the named scenario clusters to each other with the
// library call behind `kubesim federate`.
func (r *runner) federate(ctx context.Context, names []string) (string, error) {
	made := make([]string, len(names))
	for i, n := range names {
		made[i] = r.targets[n].name
	}
	return strings.Join(names, ", "), r.o.Provider.Federate(ctx, made)
}
