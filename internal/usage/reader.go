package usage

import (
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/internal/kwokcel"
)

// reader answers KWOK's Usage and CumulativeUsage for Metric expressions
// (kwokcel.UsageReader), from the declared usage: of a container, of a
// pod (its containers'), of a node (its running pods'). Cumulative usage
// is what a kubelet counts (container_cpu_usage_seconds_total): usage
// integrated over time, from the pod's start (the node's Ready) at the
// usage of the first reading, then at each reading's usage since the one
// before. KWOK counts from its first reading instead, which makes a new
// reader's counters start at 0 for pods that have run for hours.
type reader struct {
	src *source

	mu     sync.Mutex
	totals map[string]*total
}

type total struct {
	at    time.Time
	value float64
}

// forgetAfter: a total not read for this long is dropped (its pod or node
// is likely gone), and starts afresh if read again.
const forgetAfter = 10 * time.Minute

var _ kwokcel.UsageReader = (*reader)(nil)

func newReader(src *source) *reader { return &reader{src: src, totals: map[string]*total{}} }

func (r *reader) Usage(kind, namespace, name, res, container string, cumulative bool) (float64, error) {
	now := r.src.now()
	v, since, err := r.current(kind, namespace, name, res, container)
	if err != nil || !cumulative {
		return v, err
	}
	key := fmt.Sprintf("%s/%s/%s/%s/%s", kind, namespace, name, container, res)
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.totals[key]
	if !ok {
		if len(r.totals) >= 100_000 {
			r.forget(now)
		}
		t = &total{at: since}
		r.totals[key] = t
	}
	if now.After(t.at) {
		t.value += v * now.Sub(t.at).Seconds()
		t.at = now
	}
	return t.value, nil
}

// forget drops the totals not read lately.
func (r *reader) forget(now time.Time) {
	for k, t := range r.totals {
		if now.Sub(t.at) > forgetAfter {
			delete(r.totals, k)
		}
	}
}

// current is the usage now, and since when the object has been using.
func (r *reader) current(kind, namespace, name, res, container string) (float64, time.Time, error) {
	now := r.src.now()
	if kind == "Node" {
		node, err := r.src.nodes.Get(name)
		if err != nil {
			return 0, now, err
		}
		pods, err := r.src.byNode.ByIndex(nodeNameIndex, name)
		if err != nil {
			return 0, now, err
		}
		var sum float64
		budget := newReadBudget() // the node's pods, as NodeMetrics reads them
		for _, obj := range pods {
			pod := obj.(*corev1.Pod)
			if !hasMetrics(pod) {
				continue
			}
			v, err := r.podUsage(pod, node, res, "", budget)
			var ee *EvalError
			if errors.As(err, &ee) {
				// Left out, as NodeMetrics leaves it: the node's usage
				// is that metrics.k8s.io serves.
				if r.src.failed != nil {
					r.src.failed(ee)
				}
				continue
			}
			if err != nil {
				return 0, now, err
			}
			sum += v
		}
		since := nodeReadySince(node)
		if since.IsZero() {
			since = now
		}
		return sum, since, nil
	}
	pod, err := r.src.pods.Pods(namespace).Get(name)
	if err != nil {
		return 0, now, err
	}
	v, err := r.podUsage(pod, nil, res, container, newReadBudget())
	since := now
	if pod.Status.StartTime != nil {
		since = pod.Status.StartTime.Time
	}
	return v, since, err
}

// podUsage is the usage of the pod's container, or of all its containers
// for container "", within budget.
func (r *reader) podUsage(pod *corev1.Pod, node *corev1.Node, res, container string, budget *readBudget) (float64, error) {
	if node == nil {
		node, _ = r.src.nodes.Get(pod.Spec.NodeName)
	}
	subject := &Subject{Pod: pod, Node: node, maps: r.src.maps, budget: budget}
	var sum float64
	found := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if container != "" && c.Name != container {
			continue
		}
		found = true
		v, err := r.src.model.ContainerUsage(subject, c, res)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	if !found {
		return 0, fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, container)
	}
	return sum, nil
}
