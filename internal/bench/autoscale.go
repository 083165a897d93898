package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/karpenter"
	"github.com/kubesim/kubesim/internal/scale"
)

// AutoscaleOptions say how big a burst the autoscale benchmark sends to
// Karpenter and what it then scales down to.
type AutoscaleOptions struct {
	Home      string
	Pods      int   // the burst: Pending pods, 5 to a node
	MaxNodes  int   // the NodePool's limit
	ScaleTo   int   // the pods kept for consolidation
	TimeScale int32 // the Karpenter cluster's clock
	Out, Log  io.Writer
}

// The benchmark's NodePool launches one instance type, the KWOK catalog's
// c-4x-amd64-linux (4 CPUs less Karpenter's 100m kube-reserved), and each
// pod asks 700m: five to a node, so the burst's nodes are known.
const (
	autoscaleType        = "c-4x-amd64-linux"
	autoscaleCPU         = "700m"
	AutoscalePodsPerNode = 5
	autoscaleWait        = 20 * time.Minute
	autoscaleSettle      = 15 * time.Minute
)

// autoscalePool is the benchmark's node class and NodePool. Nodes boot in
// a second: the benchmark measures Karpenter's decisions, not boot time.
func autoscalePool(maxNodes int) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass",
			"metadata": map[string]any{"name": "bench"},
			"spec":     map[string]any{"nodeRegistrationDelay": "1s"},
		}},
		{Object: map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "bench"},
			"spec": map[string]any{
				"template": map[string]any{"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "bench"},
					"expireAfter":  "Never",
					"requirements": []any{
						map[string]any{"key": corev1.LabelInstanceTypeStable, "operator": "In", "values": []any{autoscaleType}},
						map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand"}},
					},
				}},
				"limits":     map[string]any{"nodes": strconv.Itoa(maxNodes)},
				"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"},
			},
		}},
	}
}

var (
	nodePoolsResource   = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClassesResource = schema.GroupVersionResource{Group: "karpenter.kwok.sh", Version: "v1alpha1", Resource: "kwoknodeclasses"}
)

// autoscaleRun is one cluster's phases and what Karpenter did in them.
type autoscaleRun struct {
	burst, consolidate Phase
	launched           int        // nodes at the end of the burst
	left               int        // nodes when consolidation settled
	settled            bool       // whether it got down to what the pods need
	passes             []passCost // Karpenter's consolidation evaluations
}

// passCost is Karpenter's own account of one kind of consolidation pass.
type passCost struct {
	kind  string
	count uint64
	total time.Duration
}

// Autoscale measures Karpenter at work: o.Pods Pending pods onto an empty
// NodePool (limit o.MaxNodes nodes) until all run, then scaled to
// o.ScaleTo until consolidation has brought the nodes down to what they
// need; beside it, the same pods on as many nodes made beforehand, in a
// cluster without an autoscaler. Each cluster is deleted before the next.
func Autoscale(ctx context.Context, o AutoscaleOptions) error {
	k, err := measureKarpenter(ctx, o)
	if err != nil {
		return fmt.Errorf("with Karpenter: %w", err)
	}
	fmt.Fprintln(o.Out, "with Karpenter:")
	Report(o.Out, []Phase{k.burst, k.consolidate}, nil)
	fixed, err := measureFixedNodes(ctx, o, k.launched)
	if err != nil {
		return fmt.Errorf("on nodes made beforehand: %w", err)
	}
	fmt.Fprintln(o.Out, "on nodes made beforehand, no autoscaler:")
	Report(o.Out, []Phase{fixed}, nil)
	writeAutoscaleTable(o.Out, o, k, fixed)
	return nil
}

func measureKarpenter(ctx context.Context, o AutoscaleOptions) (*autoscaleRun, error) {
	cfg := &v1alpha1.Cluster{Name: fmt.Sprintf("bench-%d-autoscale", os.Getpid()), TimeScale: o.TimeScale}
	cfg.Autoscaler.Karpenter = &v1alpha1.Karpenter{}
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return nil, err
	}
	defer c.Delete(context.Background())
	rc, err := c.p.RESTConfig(c.Name)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	pool := autoscalePool(o.MaxNodes)
	for i, gvr := range []schema.GroupVersionResource{nodeClassesResource, nodePoolsResource} {
		if _, err := dyn.Resource(gvr).Create(ctx, pool[i], metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	r := &autoscaleRun{}
	fmt.Fprintf(o.Log, "Karpenter: %d pods Pending onto an empty NodePool (limit %d nodes)\n", o.Pods, o.MaxNodes)
	r.burst, err = c.Measure(fmt.Sprintf("burst: %d Pending pods launched for and Running", o.Pods), o.Pods, func() error {
		if _, err := c.Client.AppsV1().Deployments(Namespace).Create(ctx, autoscaleDeployment(o.Pods), metav1.CreateOptions{}); err != nil {
			return err
		}
		return counter.waitFor(ctx, autoscaleWait, "pods Running", running(o.Pods))
	})
	if err != nil {
		return nil, err
	}
	if r.launched, err = poolNodes(ctx, c); err != nil {
		return nil, err
	}
	before, err := karpenterMetrics(c)
	if err != nil {
		return nil, err
	}
	goal := (o.ScaleTo + AutoscalePodsPerNode - 1) / AutoscalePodsPerNode
	fmt.Fprintf(o.Log, "Karpenter: %d nodes launched; scaling to %d pods, until consolidation leaves %d nodes (or %s pass)\n", r.launched, o.ScaleTo, goal, autoscaleSettle)
	r.consolidate, err = c.Measure(fmt.Sprintf("consolidation: %d nodes to what %d pods need", r.launched, o.ScaleTo), r.launched, func() error {
		if err := scaleBench(ctx, c, o.ScaleTo); err != nil {
			return err
		}
		deadline := time.Now().Add(autoscaleSettle)
		for time.Now().Before(deadline) {
			n, err := poolNodes(ctx, c)
			if err == nil && n <= goal {
				r.left, r.settled = n, true
				return nil
			}
			r.left = n
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
		return nil // not settled: reported as such
	})
	if err != nil {
		return nil, err
	}
	after, err := karpenterMetrics(c)
	if err != nil {
		return nil, err
	}
	r.passes = passesBetween(before, after)
	return r, nil
}

// measureFixedNodes is the burst's pods on nodes made beforehand, as many
// as Karpenter launched, of the same size, in a cluster without it.
func measureFixedNodes(ctx context.Context, o AutoscaleOptions, nodes int) (Phase, error) {
	c, err := NewCluster(ctx, o.Home, &v1alpha1.Cluster{Name: fmt.Sprintf("bench-%d-fixed", os.Getpid())}, io.Discard)
	if err != nil {
		return Phase{}, err
	}
	defer c.Delete(context.Background())
	fmt.Fprintf(o.Log, "no autoscaler: %d nodes of 4 CPUs, then the same %d pods\n", nodes, o.Pods)
	group := v1alpha1.NodeGroup{Name: "fixed", Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("3900m"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("64")}}
	if err := scale.Nodes(ctx, c.Client, scale.Options{Group: group, Replicas: nodes, Wait: 10 * time.Minute}); err != nil {
		return Phase{}, err
	}
	counter := newPodCounter(ctx, c.Client)
	defer counter.stop()
	return c.Measure(fmt.Sprintf("the same %d pods scheduled onto %d existing nodes and Running", o.Pods, nodes), o.Pods, func() error {
		if _, err := c.Client.AppsV1().Deployments(Namespace).Create(ctx, autoscaleDeployment(o.Pods), metav1.CreateOptions{}); err != nil {
			return err
		}
		return counter.waitFor(ctx, autoscaleWait, "pods Running", running(o.Pods))
	})
}

// autoscaleDeployment is benchDeployment's pods, each asking 700m.
func autoscaleDeployment(replicas int) *appsv1.Deployment {
	d := benchDeployment(replicas)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(autoscaleCPU)}
	return d
}

// scaleBench sets the benchmark Deployment's replicas.
func scaleBench(ctx context.Context, c *Cluster, replicas int) error {
	d, err := c.Client.AppsV1().Deployments(Namespace).Get(ctx, "bench", metav1.GetOptions{})
	if err != nil {
		return err
	}
	d.Spec.Replicas = ptr.To(int32(replicas))
	_, err = c.Client.AppsV1().Deployments(Namespace).Update(ctx, d, metav1.UpdateOptions{})
	return err
}

// poolNodes counts the NodePool's nodes, those being deleted too.
func poolNodes(ctx context.Context, c *Cluster) (int, error) {
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=bench"})
	if err != nil {
		return 0, err
	}
	return len(nodes.Items), nil
}

// karpenterMetrics scrapes Karpenter's metrics endpoint (plain HTTP on
// loopback, patch 0007).
func karpenterMetrics(c *Cluster) (map[string]*dto.MetricFamily, error) {
	cfg, err := clusterdir.Dir{Name: c.Name, Path: c.dir}.Load()
	if err != nil {
		return nil, err
	}
	port := cfg.Status.Ports.Get(karpenter.ComponentName, "metrics")
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return nil, fmt.Errorf("karpenter's metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// passesBetween is what Karpenter's consolidation evaluations (by type)
// took between two scrapes.
func passesBetween(before, after map[string]*dto.MetricFamily) []passCost {
	// kind is a pass's reason and consolidation type, as its labels say.
	sums := func(m map[string]*dto.MetricFamily, name string) map[string]passCost {
		out := map[string]passCost{}
		f := m[name]
		if f == nil {
			return out
		}
		for _, metric := range f.Metric {
			var labels []string
			for _, l := range metric.Label {
				labels = append(labels, l.GetValue())
			}
			kind := strings.Join(labels, "/")
			h := metric.GetHistogram()
			p := out[kind]
			p.kind = kind
			p.count += h.GetSampleCount()
			p.total += time.Duration(h.GetSampleSum() * float64(time.Second))
			out[kind] = p
		}
		return out
	}
	const evaluation = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds"
	b, a := sums(before, evaluation), sums(after, evaluation)
	var passes []passCost
	for _, kind := range slices.Sorted(maps.Keys(a)) {
		if p := a[kind]; p.count > b[kind].count {
			passes = append(passes, passCost{kind: kind, count: p.count - b[kind].count, total: p.total - b[kind].total})
		}
	}
	return passes
}

func writeAutoscaleTable(w io.Writer, o AutoscaleOptions, k *autoscaleRun, fixed Phase) {
	fmt.Fprintf(w, "\nautoscale: %d pods of %s onto a NodePool of %s (limit %d nodes), then %d pods; clock %d×\n",
		o.Pods, autoscaleCPU, autoscaleType, o.MaxNodes, o.ScaleTo, max(o.TimeScale, 1))
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "all %d pods Running\t%.1f s with Karpenter (%d nodes launched)\t%.1f s on %d existing nodes\t%.2f×\n",
		o.Pods, k.burst.Took.Seconds(), k.launched, fixed.Took.Seconds(), k.launched, k.burst.Took.Seconds()/fixed.Took.Seconds())
	fmt.Fprintf(tw, "Karpenter's CPU in the burst\t%.1f s, %s of the cluster's\n", k.burst.CPU[karpenter.ComponentName].Seconds(), share(k.burst.CPU[karpenter.ComponentName], total(k.burst.CPU)))
	state := "settled"
	if !k.settled {
		state = fmt.Sprintf("not settled after %s", autoscaleSettle)
	}
	fmt.Fprintf(tw, "consolidation to %d pods\t%.1f s, %d → %d nodes (%s)\tKarpenter's CPU %.1f s, %s of the cluster's\n",
		o.ScaleTo, k.consolidate.Took.Seconds(), k.launched, k.left, state, k.consolidate.CPU[karpenter.ComponentName].Seconds(), share(k.consolidate.CPU[karpenter.ComponentName], total(k.consolidate.CPU)))
	for _, p := range k.passes {
		fmt.Fprintf(tw, "  disruption evaluations %s\t%d, %.0f ms each on average (Karpenter's own histogram)\n", p.kind, p.count, float64(p.total.Milliseconds())/float64(p.count))
	}
	_ = tw.Flush()
}

func total(cpu map[string]time.Duration) time.Duration {
	var t time.Duration
	for _, d := range cpu {
		t += d
	}
	return t
}
