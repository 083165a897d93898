package scenario

import (
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name: "spread",
		validate: func(a *v1alpha1.Assertion) error {
			if a.Spread.TopologyKey == "" {
				return fmt.Errorf("spread.topologyKey: required, such as topology.kubernetes.io/zone")
			}
			return parseSelectors(a.Spread.Selector, a.Spread.NodeSelector)
		},
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("spread of %s over %s", orAll(a.Spread.Selector), a.Spread.TopologyKey)
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.spread(a.Spread) },
		groupBy:  func(a *v1alpha1.Assertion) string { return a.Spread.TopologyKey },
	})
}

func (v *view) spread(s *v1alpha1.SpreadAssertion) (bool, string, string) {
	nodes := v.nodesOf(s.NodeSelector)
	counts := map[string]int{}
	for _, n := range nodes {
		if d, ok := n.Labels[s.TopologyKey]; ok {
			counts[d] += 0
		}
	}
	for _, pod := range v.podsOf(s.PodSet) {
		if n := nodes[pod.Spec.NodeName]; n != nil {
			if d, ok := n.Labels[s.TopologyKey]; ok {
				counts[d]++
			}
		}
	}
	if len(counts) == 0 {
		return false, "nodes labelled " + s.TopologyKey, "no node has the key"
	}
	lo, hi := -1, 0
	var parts []string
	for _, d := range sortedKeys(counts) {
		c := counts[d]
		parts = append(parts, fmt.Sprintf("%s=%d", d, c))
		if lo < 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	ok, exp := true, []string{}
	if s.MaxSkew != nil {
		ok = hi-lo <= *s.MaxSkew
		exp = append(exp, fmt.Sprintf("skew <= %d", *s.MaxSkew))
	}
	if s.Counts != nil {
		var want []string
		for _, d := range sortedKeys(s.Counts) {
			want = append(want, fmt.Sprintf("%s=%d", d, s.Counts[d]))
			ok = ok && counts[d] == s.Counts[d]
		}
		exp = append(exp, strings.Join(want, " "))
	}
	return ok, strings.Join(exp, ", "), fmt.Sprintf("skew %d: %s", hi-lo, strings.Join(parts, " "))
}
