package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:     "onlyOn",
		validate: func(a *v1alpha1.Assertion) error { return parseSelectors(a.OnlyOn.Selector, a.OnlyOn.Nodes.Selector) },
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("pods %s only on %s", orAll(a.OnlyOn.Selector), a.OnlyOn.Nodes)
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.onlyOn(a.OnlyOn) },
	})
}

// onlyOn finds the scheduled pods of a set that are not on the nodes picked.
func (v *view) onlyOn(o *v1alpha1.OnlyOnAssertion) (bool, string, string) {
	names, err := v.t.nodes(v.ctx, o.Nodes)
	if err != nil {
		return false, "", err.Error()
	}
	var off []string
	for _, pod := range v.podsOf(o.PodSet) {
		if pod.Spec.NodeName != "" && !slices.Contains(names, pod.Spec.NodeName) {
			off = append(off, pod.Name+" on "+pod.Spec.NodeName)
		}
	}
	return len(off) == 0, "only on " + strings.Join(names, ","), orNone(strings.Join(off, ", "))
}
