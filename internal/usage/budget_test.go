package usage

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// sourceOf serves the model's usage of pods (running on node-0), with the
// evaluation failures it reported.
func sourceOf(t *testing.T, m *Model, pods []*corev1.Pod) (*source, *[]*EvalError) {
	t.Helper()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeNameIndex: indexByNodeName})
	for _, p := range pods {
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &metav1.Time{Time: now.Add(-time.Hour)}
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := nodes.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}); err != nil {
		t.Fatal(err)
	}
	failed := &[]*EvalError{}
	return &source{model: m, pods: corelisters.NewPodLister(indexer), nodes: corelisters.NewNodeLister(nodes), byNode: indexer,
		window: 15 * time.Second, now: func() time.Time { return now }, maps: newObjectMaps(),
		failed: func(e *EvalError) { *failed = append(*failed, e) }}, failed
}

func declare(t *testing.T, m *Model, name string, labels map[string]string, cpu string) {
	t.Helper()
	u := &kwokv1alpha1.ClusterResourceUsage{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if labels != nil {
		u.Spec.Selector = &kwokv1alpha1.ObjectSelector{MatchLabels: labels}
	}
	u.Spec.Usages = []kwokv1alpha1.ResourceUsageContainer{{Usage: map[string]kwokv1alpha1.ResourceUsageValue{"cpu": {Expression: &cpu}}}}
	if err := m.SetClusterResourceUsage(u); err != nil {
		t.Fatal(err)
	}
}

// costlyForBigPods passes the compile-time estimate (it loops over what a
// pod holds) and runs past the limit for a pod with 150 annotations.
const costlyForBigPods = `pod.metadata.annotations.all(a, pod.metadata.annotations.all(b, a != b || a == b)) ? 1.0 : 0.0`

func bigPod(name, app string) *corev1.Pod {
	annotations := map[string]string{}
	for i := range 150 {
		annotations[fmt.Sprint("a", i)] = ""
	}
	p := testPod("default", name, annotations, container("c", "100m", "64Mi"))
	p.Labels = map[string]string{"app": app}
	return p
}

// readCostly serves the pods (their metadata, in order) and counts the
// costly evaluations that ran and the ones not made, past a budget.
func readCostly(t *testing.T, s *source, failed *[]*EvalError, pods []*corev1.Pod) (served map[string]int64, ran, notMade int) {
	t.Helper()
	var objs []*metav1.PartialObjectMetadata
	for _, p := range pods {
		objs = append(objs, partial(p))
	}
	*failed = nil
	got, err := s.GetPodMetrics(objs...)
	if err != nil {
		t.Fatal(err)
	}
	served = map[string]int64{}
	for _, pm := range got {
		served[pm.Name] = pm.Containers[0].Usage.Cpu().MilliValue()
	}
	ran, notMade = countCostly(t, *failed)
	return served, ran, notMade
}

// countCostly counts the failures of evaluations that ran past the limit
// and of those not made, past a budget; others are errors.
func countCostly(t *testing.T, failed []*EvalError) (ran, notMade int) {
	t.Helper()
	for _, e := range failed {
		switch {
		case errors.Is(e, kwokcel.ErrOverBudget):
			ran++
		case errors.Is(e, errBudgetSpent):
			notMade++
		default:
			t.Errorf("%v", e)
		}
	}
	return ran, notMade
}

// One read of the metrics evaluates a usage object's expressions to its
// budget: past it, the object's pods have no metric (and it a Warning),
// and the pods of other objects are served still, so one costly object
// cannot hold kubectl top or an HPA for long. The next read starts afresh.
func TestReadBudgetOfAnObject(t *testing.T) {
	m := newModel(t)
	declare(t, m, "cheap", map[string]string{"app": "cheap"}, `Quantity("250m")`)
	declare(t, m, "costly", map[string]string{"app": "costly"}, costlyForBigPods)
	var pods []*corev1.Pod
	for i := range 400 {
		app := "costly"
		if i%2 == 0 {
			app = "cheap"
		}
		pods = append(pods, bigPod(fmt.Sprint("p", i), app))
	}
	s, failed := sourceOf(t, m, pods)
	for read := range 2 {
		served, ran, notMade := readCostly(t, s, failed, pods)
		for _, p := range pods {
			if want := p.Labels["app"] == "cheap"; want != (served[p.Name] == 250) {
				t.Fatalf("read %d: pod %s (%s) served %v", read, p.Name, p.Labels["app"], served[p.Name])
			}
		}
		// Each evaluation that ran cost the limit at least; the last may
		// go past the budget by one.
		if most := objectReadBudget/kwokcel.UsageCostLimit + 1; ran > most || ran < most-1 || notMade != 200-ran {
			t.Errorf("read %d: %d costly evaluations ran (want %d at most), %d were not", read, ran, most, notMade)
		}
	}
}

// Many costly objects are held to the read's total budget together.
func TestReadBudgetInTotal(t *testing.T) {
	m := newModel(t)
	const costly = 6 // each within its own budget, over the total together
	var pods []*corev1.Pod
	for i := range costly {
		declare(t, m, fmt.Sprint("costly-", i), map[string]string{"app": fmt.Sprint("costly-", i)}, costlyForBigPods)
		for j := range 90 {
			pods = append(pods, bigPod(fmt.Sprintf("p%d-%d", i, j), fmt.Sprint("costly-", i)))
		}
	}
	s, failed := sourceOf(t, m, pods)
	_, ran, notMade := readCostly(t, s, failed, pods)
	if most := totalReadBudget/kwokcel.UsageCostLimit + 1; ran > most || ran < most-1 || notMade != len(pods)-ran {
		t.Errorf("%d costly evaluations ran (want %d at most), %d were not", ran, most, notMade)
	}
}

// Expressions read for the pods of a Metric's Usage() are held to a budget
// too, and a custom metric's over many pods.
func TestReadBudgetOfReaderAndCustomMetrics(t *testing.T) {
	m := newModel(t)
	declare(t, m, "costly", nil, costlyForBigPods)
	var pods []*corev1.Pod
	for i := range 120 {
		pods = append(pods, bigPod(fmt.Sprint("p", i), "web"))
	}
	s, failed := sourceOf(t, m, pods)
	if _, err := newReader(s).Usage("Node", "", "node-0", "cpu", "", false); err != nil {
		t.Fatal(err)
	}
	most := objectReadBudget/kwokcel.UsageCostLimit + 1
	if ran, notMade := countCostly(t, *failed); ran > most || notMade == 0 {
		t.Errorf("node usage: %d costly evaluations ran (want %d at most), %d not", ran, most, notMade)
	}

	p, setErrs, evalFailed := providerFor(t, pods, `kind: CustomMetric
metadata: {name: costly, namespace: default}
spec:
  metric: requests_per_second
  pods: {selector: {}}
  expression: '`+costlyForBigPods+`'`)
	if err := setErrs["costly"]; err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetMetricBySelector(t.Context(), "default", labels.Everything(), podsInfo, labels.Everything()); err != nil {
		t.Fatal(err)
	}
	if ran, notMade := countCostly(t, *evalFailed); ran > most || notMade == 0 {
		t.Errorf("custom metric: %d costly evaluations ran (want %d at most), %d not", ran, most, notMade)
	}
}

// What metrics.k8s.io cannot carry is not served wrapped round to a
// negative usage: a container's is refused (TestBadUsage), a node's sum of
// containers that fit is served as the most it can be.
func TestNodeUsageNeverWrapsRound(t *testing.T) {
	m := newModel(t)
	declare(t, m, "huge", nil, `Quantity("9e9")`) // fits: 9e18 nanocores
	s, failed := sourceOf(t, m, []*corev1.Pod{bigPod("a", "web"), bigPod("b", "web")})
	got, err := s.GetNodeMetrics(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}})
	if err != nil || len(got) != 1 || len(*failed) != 0 {
		t.Fatalf("%v, %v, failed %v", got, err, *failed)
	}
	if cpu := got[0].Usage.Cpu(); cpu.Sign() < 0 || cpu.ScaledValue(-9) != math.MaxInt64 {
		t.Errorf("the node's cpu is %v (%d n), want the most an int64 of nanocores holds", cpu, cpu.ScaledValue(-9))
	}
}
