package usage

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// labelIndex indexes pods by each of their labels, as key=value: an HPA
// reads its pods by label selector every sync, and the pods carrying one
// of the selector's labels are a few among the namespace's thousands.
const labelIndex = "labels"

func indexByLabels(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, len(pod.Labels))
	for k, v := range pod.Labels {
		out = append(out, k+"="+v)
	}
	return out, nil
}

// podIndex lists pods by label selector through labelIndex.
type podIndex struct {
	pods    corelisters.PodLister
	indexer cache.Indexer // pods, with labelIndex
}

// list is the pods of the namespace (metav1.NamespaceAll: of every one)
// that selector matches: the lister's answer, found among the pods with
// the label of one of the selector's key=value requirements (the one
// fewest carry), or among all if it has none.
func (x podIndex) list(namespace string, selector labels.Selector) ([]*corev1.Pod, error) {
	best, found := "", -1
	if reqs, ok := selector.Requirements(); ok {
		for _, r := range reqs {
			op, values := r.Operator(), r.Values()
			if (op != selection.Equals && op != selection.DoubleEquals && op != selection.In) || values.Len() != 1 {
				continue
			}
			value := r.Key() + "=" + values.UnsortedList()[0]
			if keys, err := x.indexer.IndexKeys(labelIndex, value); err == nil && (found < 0 || len(keys) < found) {
				best, found = value, len(keys)
			}
		}
	}
	if found < 0 {
		if namespace == metav1.NamespaceAll {
			return x.pods.List(selector)
		}
		return x.pods.Pods(namespace).List(selector)
	}
	objs, err := x.indexer.ByIndex(labelIndex, best)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if ok && (namespace == metav1.NamespaceAll || pod.Namespace == namespace) && selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, pod)
		}
	}
	return out, nil
}
