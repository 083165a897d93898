package usage

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// podCounts keeps each pods CustomMetric's status.pods: how many running
// pods its selector matches, so a selector that matches nothing says so.
// A pod's change queues only the CustomMetrics of its namespace that
// select it, after a second that gathers a scale-out's pods into one
// write: without CustomMetrics, a pod's change costs a map lookup.
type podCounts struct {
	metrics *Metrics
	pods    corelisters.PodLister
	dyn     dynamic.Interface
	queue   workqueue.TypedDelayingInterface[string]
	// use: a CustomMetric's count needs the pods.
	use *firstUse
}

// gather is how long a count waits for further changes.
const gather = time.Second

func newPodCounts(metrics *Metrics, pods corelisters.PodLister, dyn dynamic.Interface, use *firstUse) *podCounts {
	return &podCounts{metrics: metrics, pods: pods, dyn: dyn, use: use,
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "custommetric-pods"})}
}

func (c *podCounts) enqueue(namespace, name string, after time.Duration) {
	c.use.want()
	c.queue.AddAfter(namespace+"/"+name, after)
}

// podChanged queues the CustomMetrics whose count the pod's change may
// change: those selecting it before or after.
func (c *podCounts) podChanged(old, pod *corev1.Pod) {
	if old != nil && old.Status.Phase == pod.Status.Phase && labels.Equals(old.Labels, pod.Labels) {
		return
	}
	for _, d := range c.metrics.podsMetrics(pod.Namespace) {
		if d.pods.Matches(labels.Set(pod.Labels)) || (old != nil && d.pods.Matches(labels.Set(old.Labels))) {
			c.enqueue(d.Ref.Namespace, d.Ref.Name, gather)
		}
	}
}

// handler is podChanged as the pod informer's event handler.
func (c *podCounts) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				c.podChanged(nil, p)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, _ := oldObj.(*corev1.Pod)
			if p, ok := obj.(*corev1.Pod); ok && old != nil {
				c.podChanged(old, p)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				gone := p.DeepCopy()
				gone.Status.Phase = corev1.PodSucceeded // counted no more
				c.podChanged(p, gone)
			}
		},
	}
}

// run writes the counts queued until ctx ends; the pods are synced.
// (Until then they wait in the queue.)
func (c *podCounts) run(ctx context.Context, objects dynamicinformer.DynamicSharedInformerFactory) {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	lister := objects.ForResource(v1alpha1.CustomMetricsResource).Lister()
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		if err := c.sync(ctx, lister, key); err != nil {
			klog.Warningf("CustomMetric %s: writing its pods: %v", key, err)
			c.queue.AddAfter(key, 5*time.Second)
		}
		c.queue.Done(key)
	}
}

func (c *podCounts) sync(ctx context.Context, lister cache.GenericLister, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := lister.ByNamespace(namespace).Get(name)
	if err != nil {
		return nil // deleted
	}
	c.metrics.mu.RLock()
	d := c.metrics.custom[key]
	c.metrics.mu.RUnlock()
	if d == nil || d.pods == nil {
		return nil // not accepted, or of an object
	}
	pods, err := c.pods.Pods(namespace).List(d.pods)
	if err != nil {
		return err
	}
	var n int64
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	if have, found, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "status", "pods"); found && have == n {
		return nil
	}
	patch := fmt.Appendf(nil, `{"status":{"pods":%d}}`, n)
	_, err = c.dyn.Resource(v1alpha1.CustomMetricsResource).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
