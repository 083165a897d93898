package scenario

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:     "pods",
		validate: func(a *v1alpha1.Assertion) error { return parseSelectors(a.Pods.Selector, a.Pods.NodeSelector) },
		describe: func(a *v1alpha1.Assertion) string {
			return fmt.Sprintf("pods %s%s%s %s", orAll(a.Pods.Selector), prefixed(" phase=", a.Pods.Phase), prefixed(" node=", a.Pods.Node), countText(a.Pods.Count))
		},
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.countPods(a.Pods) },
	})
}

// countPods counts the pods of a set in a phase, ready or not, on the
// nodes picked.
func (v *view) countPods(p *v1alpha1.PodsAssertion) (bool, string, string) {
	var onNodes map[string]*corev1.Node
	if p.NodeSelector != "" {
		onNodes = v.nodesOf(p.NodeSelector)
	}
	n := 0
	for _, pod := range v.podsOf(p.PodSet) {
		if (p.Phase == "" || string(pod.Status.Phase) == p.Phase) &&
			(p.Ready == nil || *p.Ready == podReady(&pod)) &&
			(p.Node == "" || pod.Spec.NodeName == p.Node) &&
			(onNodes == nil || onNodes[pod.Spec.NodeName] != nil) {
			n++
		}
	}
	return countOK(p.Count, n), "count " + countText(p.Count), fmt.Sprintf("%d", n)
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
