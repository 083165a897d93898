package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// NoRecordError: the scheduler keeps no attempt of a pod it has scheduled
// or tried; Events are the pod's scheduling events, which remain. The
// error, one line, says they are above: the command prints them first.
type NoRecordError struct {
	Msg    string
	Events []string
}

func (e *NoRecordError) Error() string {
	if len(e.Events) == 0 {
		return e.Msg + "; no scheduling events of it remain either (the API server keeps events for an hour)"
	}
	return e.Msg + "; the pod's scheduling events are above"
}

// Pod returns the pod's last scheduling attempt, or a one-line error that
// says why there is none: no such pod, not attempted yet, or a record the
// scheduler no longer holds (restarted since, or dropped as old). A pod
// bound directly is no error: its explanation says so.
func Pod(ctx context.Context, c *Client, kube kubernetes.Interface, cluster, namespace, name string) (*Explanation, error) {
	pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("pod %q not found in namespace %q (kubectl get pods -n %s lists them)", name, namespace, namespace)
	}
	if err != nil {
		return nil, err
	}
	if IsBoundDirectly(pod) {
		return &Explanation{Namespace: namespace, Name: name, UID: string(pod.UID), Result: BoundDirectly, Node: pod.Spec.NodeName,
			Message: boundDirectlyMessage, Nodes: []NodeResult{}}, nil
	}
	e, err := c.Pod(ctx, namespace, name)
	if errors.Is(err, ErrUnreachable) {
		return nil, fmt.Errorf("the scheduler of cluster %q does not answer (%v); is it running? See kubesim logs kube-scheduler --name %s", cluster, err, cluster)
	}
	if err == nil && e.UID == string(pod.UID) {
		return e, nil
	}
	if err != nil && !errors.Is(err, ErrNotRecorded) {
		return nil, err
	}
	if pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
		return nil, fmt.Errorf("pod %s/%s is for scheduler %q, not the cluster's kube-scheduler", namespace, name, pod.Spec.SchedulerName)
	}
	events, err := schedulingEvents(ctx, kube, pod)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" && len(events) == 0 {
		return nil, fmt.Errorf("pod %s/%s has not been through a scheduling attempt yet; wait for it and ask again", namespace, name)
	}
	return nil, &NoRecordError{
		Msg: fmt.Sprintf("the scheduler holds no record of pod %s/%s: it has restarted since the pod's last attempt, "+
			"or dropped the record as old (it keeps the last scheduler.explainPods pods)", namespace, name),
		Events: events,
	}
}

const boundDirectlyMessage = "spec.nodeName was set when the pod was made: it was bound directly and never went through the scheduler"

// IsBoundDirectly reports whether the pod was made bound to its node: the
// API server's binding, which the scheduler's bind goes through, marks a
// pod PodScheduled; a pod made with spec.nodeName never gets that mark.
func IsBoundDirectly(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return false
		}
	}
	return true
}

// schedulingEvents are the pod's Scheduled and FailedScheduling events,
// oldest first, one line each.
func schedulingEvents(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod) ([]string, error) {
	list, err := kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.uid": string(pod.UID)}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s's events: %w", pod.Namespace, pod.Name, err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	var lines []string
	for _, ev := range list.Items {
		if ev.Reason != "Scheduled" && ev.Reason != "FailedScheduling" {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %s", eventTime(ev).Format(time.TimeOnly), ev.Reason, strings.TrimSpace(ev.Message)))
	}
	return lines, nil
}

func eventTime(ev corev1.Event) time.Time {
	if !ev.EventTime.IsZero() {
		return ev.EventTime.Time
	}
	return ev.LastTimestamp.Time
}
