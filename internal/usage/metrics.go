package usage

import (
	"errors"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/metrics/pkg/apis/metrics"
)

// source answers metrics-server's storage (sigs.k8s.io/metrics-server's
// pkg/api) from the declared usage, evaluated when asked: there is no
// scraping and nothing is stored.
type source struct {
	model  *Model
	pods   corelisters.PodLister
	nodes  corelisters.NodeLister
	byNode cache.Indexer // pods, indexed by node name
	window time.Duration
	now    func() time.Time
	// failed is told of each usage that could not be evaluated.
	failed func(*EvalError)
	// maps keeps pods' and nodes' maps for expressions between requests.
	maps *objectMaps
}

const nodeNameIndex = "spec.nodeName"

func indexByNodeName(obj any) ([]string, error) {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		return []string{pod.Spec.NodeName}, nil
	}
	return nil, nil
}

// GetPodMetrics is the usage of each pod that runs; a pod not running, or
// whose usage could not be evaluated, has none.
func (s *source) GetPodMetrics(objs ...*metav1.PartialObjectMetadata) ([]metrics.PodMetrics, error) {
	now := s.now().Truncate(time.Second)
	out := make([]metrics.PodMetrics, 0, len(objs))
	budget := newReadBudget()
	for _, o := range objs {
		pod, err := s.pods.Pods(o.Namespace).Get(o.Name)
		if err != nil {
			continue
		}
		if pm, ok := s.podMetrics(pod, nil, now, budget); ok {
			out = append(out, pm)
		}
	}
	return out, nil
}

// GetNodeMetrics is the usage of each node: the sum of its pods'.
func (s *source) GetNodeMetrics(nodes ...*corev1.Node) ([]metrics.NodeMetrics, error) {
	now := s.now().Truncate(time.Second)
	out := make([]metrics.NodeMetrics, 0, len(nodes))
	budget := newReadBudget()
	for _, node := range nodes {
		objs, err := s.byNode.ByIndex(nodeNameIndex, node.Name)
		if err != nil {
			return nil, err
		}
		var cpu, memory float64
		for _, obj := range objs {
			pm, ok := s.podMetrics(obj.(*corev1.Pod), node, now, budget)
			if !ok {
				continue
			}
			for _, c := range pm.Containers {
				cpu += c.Usage.Cpu().AsApproximateFloat64()
				memory += c.Usage.Memory().AsApproximateFloat64()
			}
		}
		window := s.window
		if ready := nodeReadySince(node); !ready.IsZero() {
			window = min(window, max(now.Sub(ready), 0))
		}
		out = append(out, metrics.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: node.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(now),
			Window:     metav1.Duration{Duration: window},
			Usage:      usageList(cpu, memory),
		})
	}
	return out, nil
}

// podMetrics is the usage of a running pod, measured, it claims, over
// the last window: at most s.window, and never from before the pod
// started or turned Ready. So the HPA controller, which ignores a CPU
// sample of a pod in its first 5 minutes that may include time before it
// was Ready (timestamp before Ready + window), counts every sample of a
// Ready pod, as it would a metrics-server's that scraped since. now is
// whole seconds, as the API carries timestamps (and so start and Ready
// times): a window from a finer now would reach before Ready once sent.
// Its expressions spend from budget, the read's.
func (s *source) podMetrics(pod *corev1.Pod, node *corev1.Node, now time.Time, budget *readBudget) (metrics.PodMetrics, bool) {
	if !hasMetrics(pod) {
		return metrics.PodMetrics{}, false
	}
	window := min(s.window, max(now.Sub(pod.Status.StartTime.Time), 0))
	if ready := podReadySince(pod); !ready.IsZero() {
		window = min(window, max(now.Sub(ready), 0))
	}
	if node == nil {
		node, _ = s.nodes.Get(pod.Spec.NodeName) // none: expressions see a node without fields
	}
	subject := &Subject{Pod: pod, Node: node, maps: s.maps, budget: budget}
	pm := metrics.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, CreationTimestamp: metav1.NewTime(now)},
		Timestamp:  metav1.NewTime(now),
		Window:     metav1.Duration{Duration: window},
		Containers: make([]metrics.ContainerMetrics, 0, len(pod.Spec.Containers)),
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cpu, err := s.model.ContainerUsage(subject, c, string(corev1.ResourceCPU))
		if err == nil {
			var memory float64
			memory, err = s.model.ContainerUsage(subject, c, string(corev1.ResourceMemory))
			pm.Containers = append(pm.Containers, metrics.ContainerMetrics{Name: c.Name, Usage: usageList(cpu, memory)})
		}
		if err != nil {
			var ee *EvalError
			if errors.As(err, &ee) && s.failed != nil {
				s.failed(ee)
			}
			return metrics.PodMetrics{}, false
		}
	}
	return pm, true
}

// hasMetrics: the pod runs on a node, and has started. Its node's usage is
// the sum of such pods'.
func hasMetrics(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodRunning && pod.Status.StartTime != nil && pod.Spec.NodeName != ""
}

// usageList is cpu (cores, kept to the nanocore as metrics-server does)
// and memory (bytes).
func usageList(cpu, memory float64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewScaledQuantity(capped(cpu*1e9), resource.Nano),
		corev1.ResourceMemory: *resource.NewQuantity(capped(memory), resource.BinarySI),
	}
}

// capped is v rounded, at most the largest int64. A container's usage
// fits (the model refuses more); a node's sum of such may not, and is
// served as the most that can be rather than wrapped round to negative.
func capped(v float64) int64 {
	if r := math.Round(v); r < int64Range {
		return int64(r)
	}
	return math.MaxInt64
}

// podReadySince is when the pod turned Ready; zero if it is not.
func podReadySince(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// nodeReadySince is when the node turned Ready; zero if it is not.
func nodeReadySince(node *corev1.Node) time.Time {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// runningPods lists pods as metrics-server's storage takes them: the
// metadata of those that run. It reads the same informer the usage is
// evaluated from, so the pods are held once.
type runningPods struct {
	pods podIndex
}

func (r runningPods) List(selector labels.Selector) ([]runtime.Object, error) {
	return r.ByNamespace(metav1.NamespaceAll).List(selector)
}

func (r runningPods) Get(name string) (runtime.Object, error) {
	return nil, errors.New("pods are namespaced: get them by namespace")
}

func (r runningPods) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return runningPodsIn{r.pods, namespace}
}

type runningPodsIn struct {
	pods      podIndex
	namespace string
}

func (r runningPodsIn) List(selector labels.Selector) ([]runtime.Object, error) {
	pods, err := r.pods.list(r.namespace, selector)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, 0, len(pods))
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			out = append(out, partial(p))
		}
	}
	return out, nil
}

func (r runningPodsIn) Get(name string) (runtime.Object, error) {
	p, err := r.pods.pods.Pods(r.namespace).Get(name)
	if err != nil {
		return nil, err
	}
	return partial(p), nil
}

func partial(p *corev1.Pod) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: p.ObjectMeta}
}
