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
		name:     "nodes",
		validate: func(a *v1alpha1.Assertion) error { return parseSelectors(a.Nodes.Nodes.Selector) },
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("nodes %s %s", a.Nodes.Nodes, countText(a.Nodes.Count))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.countNodes(a.Nodes) },
	})
}

// countNodes counts the nodes picked that are Ready (or not).
func (v *view) countNodes(a *v1alpha1.NodesAssertion) (bool, string, string) {
	n := 0
	for name, node := range v.nodesOf(a.Nodes.Selector) {
		if len(a.Nodes.Names) > 0 && !slices.Contains(a.Nodes.Names, name) {
			continue
		}
		if a.Ready == nil || *a.Ready == nodeReady(node) {
			n++
		}
	}
	return countOK(a.Count, n), "count " + countText(a.Count), fmt.Sprintf("%d", n)
}

func nodeReady(n *corev1.Node) bool { return scale.IsReady(n) }
