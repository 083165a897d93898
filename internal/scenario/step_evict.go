package scenario

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "evict",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if (s.Evict.Pod == "") == (s.Evict.Selector == "") {
				return fmt.Errorf("give pod (a name) or selector, one of them")
			}
			return parseSelector(s.Evict.Selector)
		},
		do: func(x *stepRun) (string, error) { return x.t.evictOne(x.ctx, x.step.Evict) },
	})
}

func (t *target) evictOne(ctx context.Context, s *v1alpha1.EvictStep) (string, error) {
	ns := namespaceOrDefault(s.Namespace)
	var pod corev1.Pod
	if s.Pod != "" {
		p, err := t.client.CoreV1().Pods(ns).Get(ctx, s.Pod, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		pod = *p
	} else {
		list, err := t.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: s.Selector})
		if err != nil {
			return "", err
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				pod = p
				break
			}
		}
		if pod.Name == "" {
			return "", fmt.Errorf("no pod matches %s in %s", s.Selector, ns)
		}
	}
	msg, err := t.evict(ctx, t.drainer(ctx, &v1alpha1.DrainStep{}), pod)
	if err != nil {
		return "", err
	}
	key := pod.Namespace + "/" + pod.Name
	d := &disruption{What: "evict " + key}
	t.last = d
	if msg != "" {
		d.Refused = []string{key}
		if s.Expect != "refused" {
			return "refused " + key, fmt.Errorf("eviction of %s refused: %s", key, msg)
		}
		return "refused " + key, nil
	}
	d.Made = []string{key}
	if s.Expect == "refused" {
		return "evicted " + key, fmt.Errorf("expected the eviction of %s to be refused, but it was allowed", key)
	}
	return "evicted " + key, nil
}
