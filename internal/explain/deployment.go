package explain

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Deployment explains each of the Deployment's pods; missing are the pods
// without a record, and why.
func Deployment(ctx context.Context, c *Client, kube kubernetes.Interface, cluster, namespace, name string) ([]*Explanation, map[string]string, error) {
	d, err := kube.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("deployment %q in namespace %q: %w", name, namespace, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil, fmt.Errorf("deployment %s/%s: spec.selector: %w", namespace, name, err)
	}
	pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, nil, err
	}
	var explanations []*Explanation
	missing := map[string]string{}
	for _, pod := range pods.Items {
		if IsBoundDirectly(&pod) {
			missing[pod.Name] = "bound directly by spec.nodeName: never went through the scheduler"
			continue
		}
		e, err := c.Pod(ctx, namespace, pod.Name)
		switch {
		case errors.Is(err, ErrUnreachable):
			return nil, nil, fmt.Errorf("the scheduler of cluster %q does not answer (%v)", cluster, err)
		case errors.Is(err, ErrNotRecorded), err == nil && e.UID != string(pod.UID):
			missing[pod.Name] = "no record (not attempted yet, scheduler restarted, or record dropped as old)"
		case err != nil:
			return nil, nil, err
		default:
			explanations = append(explanations, e)
		}
	}
	if len(pods.Items) == 0 {
		return nil, nil, fmt.Errorf("deployment %s/%s has no pods", namespace, name)
	}
	return explanations, missing, nil
}
