package usage

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// KWOK's Usage and CumulativeUsage, as the Metric expressions of its
// /metrics/resource read them: a container's usage, a pod's (the sum of
// its containers'), a node's (the sum of its running pods'); cumulative
// usage grows by usage × time, from the pod's start.
func TestReaderUsageAndCumulativeUsage(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start.Add(100 * time.Second)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}
	pod := testPod("default", "web", nil, container("app", "200m", "1Gi"), container("side", "100m", "1Gi"))
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &metav1.Time{Time: start}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeNameIndex: indexByNodeName})
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	if err := nodes.Add(node); err != nil {
		t.Fatal(err)
	}
	src := &source{model: newModel(t), pods: corelisters.NewPodLister(pods), nodes: corelisters.NewNodeLister(nodes),
		byNode: pods, window: 15 * time.Second, now: func() time.Time { return now }}
	r := newReader(src)
	env, err := kwokcel.NewMetricEnv(r)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{
		"pod":  map[string]any{"kind": "Pod", "metadata": map[string]any{"namespace": "default", "name": "web"}},
		"node": map[string]any{"kind": "Node", "metadata": map[string]any{"name": "node-0"}},
	}
	eval := func(expr string) float64 {
		t.Helper()
		p, err := env.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Number(vars)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	for expr, want := range map[string]float64{
		`pod.Usage("cpu", "app")`:            0.1,
		`pod.Usage("cpu")`:                   0.15,
		`node.Usage("cpu")`:                  0.15,
		`pod.CumulativeUsage("cpu", "side")`: 5,  // 50m for the 100 s since the pod started
		`pod.CumulativeUsage("cpu")`:         15, // 150m for 100 s
	} {
		if got := eval(expr); !near(got, want) {
			t.Errorf("%s = %v, want %v", expr, got, want)
		}
	}
	now = now.Add(10 * time.Second)
	if got := eval(`pod.CumulativeUsage("cpu")`); !near(got, 16.5) {
		t.Errorf("10 s later, pod.CumulativeUsage(\"cpu\") = %v, want 16.5", got)
	}
	p, _ := env.Compile(`pod.Usage("cpu", "nope")`)
	if _, err := p.Number(vars); err == nil {
		t.Error("the usage of a container the pod does not have was no error")
	}

	// A pod whose usage fails is left out of its node's, as NodeMetrics
	// leaves it out, and the failure is told.
	broken := testPod("default", "broken", nil, container("app", "1", "1Gi"))
	broken.Spec.NodeName, broken.Status.Phase, broken.Status.StartTime = "node-0", corev1.PodRunning, &metav1.Time{Time: start}
	if err := pods.Add(broken); err != nil {
		t.Fatal(err)
	}
	if err := src.model.SetResourceUsage(&kwokv1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "broken"},
		Spec: kwokv1alpha1.ResourceUsageSpec{Usages: []kwokv1alpha1.ResourceUsageContainer{{Usage: map[string]kwokv1alpha1.ResourceUsageValue{
			"cpu": {Expression: ptr.To(`Quantity(pod.metadata.annotations["missing"])`)}}}}}}); err != nil {
		t.Fatal(err)
	}
	var failed []string
	src.failed = func(e *EvalError) { failed = append(failed, e.Error()) }
	if got := eval(`node.Usage("cpu")`); !near(got, 0.15) || len(failed) != 1 || !strings.Contains(failed[0], "default/broken") {
		t.Errorf("node.Usage(\"cpu\") beside a broken pod = %v, failures %q; want 0.15 and broken's", got, failed)
	}
}
