package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	usagemetrics "github.com/kubesim/kubesim/internal/usage"
)

// UsageOptions say how big a cluster the usage benchmark makes and how
// long it watches it.
type UsageOptions struct {
	Home    string
	Size    Size          // nodes, and pods bound across them in ReplicaSets of 100
	HPAs    int           // over the first ReplicaSets, one each
	Window  time.Duration // the CPU is measured over it
	TopRuns int           // kubectl top pods -A, this many times: the median
	Out     io.Writer     // the table
	Log     io.Writer     // progress
}

// hpaSyncPeriod is upstream's default, which the bound assumes.
const hpaSyncPeriod = 15 * time.Second

// usageExpression is the usage of every pod: evaluated for each pod at
// each read, as a ramp or a wave would be.
const usageExpression = `Quantity("50m") * (1.0 + Rand())`

// usageRun is what one cluster cost over the window.
type usageRun struct {
	window     time.Duration
	clusterCPU time.Duration   // every component's
	metricsCPU time.Duration   // usage-metrics' own
	rss, anon  int64           // usage-metrics' RSS, and its RssAnon
	top        []time.Duration // each kubectl top pods -A, sorted
	phase      Phase           // per component
}

// Usage measures what serving metrics costs: a cluster of o.Size with a
// ClusterResourceUsage expression over all its pods and o.HPAs HPAs
// reading them (sync period 15 s); kubectl top pods -A timed o.TopRuns
// times; then every component's CPU over o.Window. Then the same cluster
// with usage: {disabled: true}, where the HPAs find no metrics. Each
// cluster is deleted before the next is made, so each has the machine.
func Usage(ctx context.Context, o UsageOptions) error {
	var runs [2]*usageRun
	for i, disabled := range []bool{false, true} {
		r, err := measureUsage(ctx, o, disabled)
		if err != nil {
			return fmt.Errorf("usage-metrics %s: %w", onOff(disabled), err)
		}
		runs[i] = r
		fmt.Fprintf(o.Out, "usage-metrics %s, each component over the window:\n", onOff(disabled))
		Report(o.Out, []Phase{r.phase}, nil)
	}
	writeUsageTable(o.Out, o, runs[0], runs[1])
	return nil
}

func onOff(disabled bool) string {
	if disabled {
		return "off"
	}
	return "on"
}

func measureUsage(ctx context.Context, o UsageOptions, disabled bool) (*usageRun, error) {
	cfg := &v1alpha1.Cluster{
		Name:                    fmt.Sprintf("bench-%d-usage-%s", os.Getpid(), onOff(disabled)),
		Usage:                   v1alpha1.Usage{Disabled: disabled},
		HorizontalPodAutoscaler: v1alpha1.HorizontalPodAutoscaler{SyncPeriod: &metav1.Duration{Duration: hpaSyncPeriod}},
	}
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return nil, err
	}
	defer c.Delete(context.Background())
	fmt.Fprintf(o.Log, "usage-metrics %s: making %d nodes, %d pods in ReplicaSets of %d\n", onOff(disabled), o.Size.Nodes, o.Size.Pods, replicaSetSize)
	if err := makeCloneSource(ctx, c, o.Size); err != nil {
		return nil, err
	}
	rc, err := c.p.RESTConfig(c.Name)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	cru := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kwokv1alpha1.GroupVersion, "kind": kwokv1alpha1.ClusterResourceUsageKind,
		"metadata": map[string]any{"name": "bench"},
		"spec": map[string]any{"usages": []any{map[string]any{"usage": map[string]any{
			"cpu": map[string]any{"expression": usageExpression}, "memory": map[string]any{"value": "64Mi"}}}}},
	}}
	if _, err := dyn.Resource(kwokv1alpha1.ClusterResourceUsagesResource).Create(ctx, cru, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "usage-metrics %s: %d HPAs, waiting for each to read its metric (or, off, to find none)\n", onOff(disabled), o.HPAs)
	for i := range o.HPAs {
		if _, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(Namespace).Create(ctx, benchHPA(i, min(replicaSetSize, o.Size.Pods-i*replicaSetSize)), metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	if err := waitHPAs(ctx, c, o.HPAs, disabled); err != nil {
		return nil, err
	}
	r := &usageRun{window: o.Window}
	if !disabled {
		for range o.TopRuns {
			took, err := timeTop(ctx, o.Home, c.Name, o.Size.Pods)
			if err != nil {
				return nil, err
			}
			r.top = append(r.top, took)
		}
		slices.Sort(r.top) // for the range the table shows
	}
	fmt.Fprintf(o.Log, "usage-metrics %s: measuring CPU over %s\n", onOff(disabled), o.Window)
	r.phase, err = c.Measure("at rest, the HPAs reading", o.Size.Pods, func() error {
		select { // the window measured, not a wait for something
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Window):
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	for name, cpu := range r.phase.CPU {
		r.clusterCPU += cpu
		if name == usagemetrics.ComponentName {
			r.metricsCPU = cpu
		}
	}
	r.rss = r.phase.RSS[usagemetrics.ComponentName]
	r.anon = componentStatusKB(c.dir, usagemetrics.ComponentName, "RssAnon") << 10
	return r, nil
}

// benchHPA holds ReplicaSet i at its replicas (min = max) while reading
// its pods' CPU every sync, as an HPA does; an average value needs no
// requests.
func benchHPA(i, replicas int) *autoscalingv2.HorizontalPodAutoscaler {
	name := sourceLabels(i)["app"]
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name},
			MinReplicas:    ptr.To(int32(replicas)), MaxReplicas: int32(replicas),
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100m"))}}}},
		},
	}
}

// waitHPAs waits until every HPA has read its metric (metrics on) or has
// found none (off: ScalingActive False), so the window sees them at work.
func waitHPAs(ctx context.Context, c *Cluster, n int, disabled bool) error {
	deadline := time.Now().Add(3*hpaSyncPeriod + time.Minute)
	for {
		list, err := c.Client.AutoscalingV2().HorizontalPodAutoscalers(Namespace).List(ctx, metav1.ListOptions{})
		done := 0
		if err == nil {
			for _, h := range list.Items {
				if (!disabled && len(h.Status.CurrentMetrics) > 0) || (disabled && scalingInactive(&h)) {
					done++
				}
			}
		}
		if done >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d HPAs at work after %s (%v)", done, n, 3*hpaSyncPeriod+time.Minute, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func scalingInactive(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, c := range h.Status.Conditions {
		if c.Type == autoscalingv2.ScalingActive {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// timeTop runs kubesim's own kubectl top pods -A against the cluster, as a
// user would, and checks it listed every pod.
func timeTop(ctx context.Context, home, name string, pods int) (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, exe, "kubectl", "--name", name, "top", "pods", "-A", "--no-headers")
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+home)
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("kubectl top pods -A: %w", err)
	}
	if n := strings.Count(string(out), "\n"); n < pods {
		return 0, fmt.Errorf("kubectl top pods -A listed %d pods, want %d", n, pods)
	}
	return took, nil
}

// componentStatusKB is a /proc status field (in kB) summed over a
// component's processes in dir.
func componentStatusKB(dir, component, field string) int64 {
	var total int64
	for _, pid := range componentProcesses(dir)[component] {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err == nil {
			total += statusKB(string(status), field)
		}
	}
	return total
}

// statusKB reads a "Field:   123 kB" line of /proc/PID/status; 0 without.
func statusKB(status, field string) int64 {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// share is part as a percentage of whole, "-" when whole is nothing.
func share(part, whole time.Duration) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*part.Seconds()/whole.Seconds())
}

// writeUsageTable sets the two runs side by side: CPU as a share of one
// core over the window; what serving metrics costs, as usage-metrics'
// share of the cluster's CPU, and the difference of the runs.
func writeUsageTable(w io.Writer, o UsageOptions, on, off *usageRun) {
	fmt.Fprintf(w, "\nusage: %d nodes, %d pods, %d HPAs (sync %s), a ClusterResourceUsage expression over every pod; CPU over %s, in %% of one core\n",
		o.Size.Nodes, o.Size.Pods, o.HPAs, hpaSyncPeriod, o.Window)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "\tusage-metrics on\toff\n")
	fmt.Fprintf(tw, "cluster CPU\t%s\t%s\n", share(on.clusterCPU, on.window), share(off.clusterCPU, off.window))
	fmt.Fprintf(tw, "usage-metrics CPU\t%s\t-\n", share(on.metricsCPU, on.window))
	fmt.Fprintf(tw, "usage-metrics RSS (RssAnon)\t%d MiB (%d MiB)\t-\n", on.rss>>20, on.anon>>20)
	top := "-"
	if len(on.top) > 0 {
		top = fmt.Sprintf("%.2f s median of %d (%.2f–%.2f s)", median(on.top).Seconds(), len(on.top), on.top[0].Seconds(), on.top[len(on.top)-1].Seconds())
	}
	fmt.Fprintf(tw, "kubectl top pods -A\t%s\tMetrics API not available\n", top)
	_ = tw.Flush()
	// usage-metrics' own CPU is the serving; the difference of the runs
	// adds what the HPA controller does with metrics it now has (and the
	// API server's proxying), and the runs' noise.
	extra := on.clusterCPU - off.clusterCPU // over windows of the same length
	fmt.Fprintf(w, "serving metrics: usage-metrics is %s of the cluster's CPU (the issue's bound: 5 %%)\n", share(on.metricsCPU, on.clusterCPU))
	fmt.Fprintf(w, "on against off: %s of one core more, %s of the cluster's CPU with it (the HPA controller acting on the metrics, the API server proxying them, noise)\n",
		share(extra, on.window), share(extra, on.clusterCPU))
}
