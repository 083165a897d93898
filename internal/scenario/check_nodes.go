package scenario

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scale"
)

func init() {
	checkKinds.register(&checkKind{
		name: "nodes",
		validate: func(a *v1alpha1.Assertion) error {
			n := a.Nodes
			if n.Selector != "" && (n.Nodes.Selector != "" || len(n.Nodes.Names) > 0) {
				return fmt.Errorf("nodes: give selector or nodes, not both")
			}
			return parseSelectors(n.Nodes.Selector, n.Selector)
		},
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("nodes %s %s", orAll(nodesPicked(a.Nodes).String()), countText(a.Nodes.Count))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.countNodes(a.Nodes) },
	})
}

// countNodes counts the nodes picked that are Ready (or not).
func (v *view) countNodes(a *v1alpha1.NodesAssertion) (bool, string, string) {
	n := 0
	ref := nodesPicked(a)
	for name, node := range v.nodesOf(ref.Selector) {
		if len(ref.Names) > 0 && !slices.Contains(ref.Names, name) {
			continue
		}
		if a.Ready == nil || *a.Ready == nodeReady(node) {
			n++
		}
	}
	return countOK(a.Count, n), "count " + countText(a.Count), fmt.Sprintf("%d", n)
}

func nodeReady(n *corev1.Node) bool { return scale.IsReady(n) }

// nodesPicked is the nodes an assertion picks: nodes, or selector (the
// same as nodes: {selector}).
func nodesPicked(a *v1alpha1.NodesAssertion) v1alpha1.NodeRef {
	if a.Selector != "" {
		return v1alpha1.NodeRef{Selector: a.Selector}
	}
	return a.Nodes
}
