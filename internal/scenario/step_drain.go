package scenario

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "drain",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if !slices.Contains([]string{"", "completes", "blocked"}, s.Drain.Expect) {
				return fmt.Errorf("expect: %q; use completes or blocked", s.Drain.Expect)
			}
			return validateNodes(s.Drain.Node)
		},
		do:      func(x *stepRun) (string, error) { return x.t.drain(x.ctx, x.step.Drain, x.timeout) },
		picture: zoneGrouping,
	})
}

// evictable are the pods on a node a drain evicts: not DaemonSet pods,
// not mirror pods, not finished.
func (t *target) evictable(ctx context.Context, node string) ([]corev1.Pod, error) {
	list, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if c := metav1.GetControllerOf(&p); c != nil && c.Kind == "DaemonSet" {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// evict asks the eviction API to evict a pod: nil, a refusal (the budget's
// words), or another error.
func (t *target) evict(ctx context.Context, p corev1.Pod) (refusal string, err error) {
	err = t.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		t.evicted[p.Namespace+"/"+p.Name] = true
		return "", nil
	case apierrors.IsTooManyRequests(err):
		return err.Error(), nil
	}
	return "", err
}

// drain cordons nodes and evicts their pods; see DrainStep.
func (t *target) drain(ctx context.Context, s *v1alpha1.DrainStep, timeout time.Duration) (string, error) {
	names, err := t.nodes(ctx, s.Node)
	if err != nil {
		return "", err
	}
	if _, err := t.setUnschedulable(ctx, s.Node, true); err != nil {
		return "", err
	}
	d := &disruption{What: "drain " + strings.Join(names, ",")}
	t.last = d
	made, refused := map[string]bool{}, map[string]string{}
	deadline := time.Now().Add(timeout)
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	for {
		left := 0
		for _, n := range names {
			pods, err := t.evictable(ctx, n)
			if err != nil {
				return "", err
			}
			for _, p := range pods {
				key := p.Namespace + "/" + p.Name
				if made[key] {
					continue
				}
				msg, err := t.evict(ctx, p)
				if err != nil {
					return "", fmt.Errorf("evicting %s: %w", key, err)
				}
				if msg != "" {
					refused[key] = msg
					left++
				} else {
					made[key] = true
					delete(refused, key)
				}
			}
		}
		d.Made, d.Refused = sortedKeys(made), sortedKeys(refused)
		summary := fmt.Sprintf("%d evicted, %d refused", len(made), len(refused))
		if s.Expect == "blocked" {
			if len(refused) == 0 {
				return summary, fmt.Errorf("expected the drain to be blocked, but every eviction was allowed (%s)", summary)
			}
			return summary, nil
		}
		if left == 0 {
			break
		}
		notDone := &timeoutReport{fmt.Sprintf("drain did not complete in %s: %s (%s)", timeout, summary, firstValue(refused))}
		if time.Now().After(deadline) {
			return summary, notDone
		}
		select {
		case <-ctx.Done():
			if context.Cause(ctx) == errStepTimedOut {
				return summary, notDone
			}
			return summary, ctx.Err()
		case <-retry.C:
		}
	}
	// Evicted pods take their grace period to go.
	err = t.until(ctx, time.Until(deadline), func() (bool, string) {
		left := 0
		for _, n := range names {
			pods, err := t.evictable(ctx, n)
			if err != nil {
				return false, err.Error()
			}
			left += len(pods)
		}
		return left == 0, fmt.Sprintf("%d pods still on the node", left)
	})
	return fmt.Sprintf("%d evicted", len(made)), err
}

func firstValue(m map[string]string) string {
	for _, k := range sortedKeys(m) {
		return k + ": " + m[k]
	}
	return ""
}
