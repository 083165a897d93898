package scenario

import (
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:     "perNode",
		validate: func(a *v1alpha1.Assertion) error { return parseSelectors(a.PerNode.Selector) },
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("at most %d pods of %s per node", a.PerNode.Max, orAll(a.PerNode.Selector))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.perNode(a.PerNode) },
	})
}

// perNode finds the nodes with more pods of a set than allowed.
func (v *view) perNode(p *v1alpha1.PerNodeAssert) (bool, string, string) {
	per := map[string]int{}
	for _, pod := range v.podsOf(p.PodSet) {
		if pod.Spec.NodeName != "" {
			per[pod.Spec.NodeName]++
		}
	}
	var over []string
	for _, n := range sortedKeys(per) {
		if per[n] > p.Max {
			over = append(over, fmt.Sprintf("%s has %d", n, per[n]))
		}
	}
	return len(over) == 0, fmt.Sprintf("at most %d per node", p.Max), orNone(strings.Join(over, ", "))
}
