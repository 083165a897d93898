//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
)

// TestUsage: declared usage served as metrics.k8s.io through the API
// server's aggregator — kubectl top (the embedded one and a stock one),
// KWOK's manifests, bad usage reported where it is declared, timestamps
// the HPA controller accepts — and the real HPA controller scaling a
// Deployment out and in as a ClusterResourceUsage raises and lowers its
// CPU; custom and external metrics (CustomMetric, ExternalMetric) served
// the same way, and HPAs on them; KWOK's Metric endpoints through the node
// proxy.
func TestUsage(t *testing.T) {
	e := newEnv(t)
	e.createCluster("usage", "--nodes", "2",
		"--horizontal-pod-autoscaler-sync-period", "2s",
		"--horizontal-pod-autoscaler-downscale-stabilization", "5s")
	client := e.client()
	ctx := context.Background()
	d := deployment("web", 3)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 3)

	t.Run("kubectl top shows the default and nodes the sum of their pods", func(t *testing.T) {
		e := e.in(t)
		// Until something reads a metric, usage-metrics holds no pods.
		usageLog := filepath.Join(e.clusterDir("usage"), "logs", "usage-metrics.log")
		const listed = "pods and nodes synced"
		if log, err := os.ReadFile(usageLog); err != nil || strings.Contains(string(log), listed) {
			t.Fatalf("before any read of a metric, usage-metrics listed the pods (or its log is unread: %v)", err)
		}
		// Without declared usage: half the requests.
		wantTop(t, func() (string, error) {
			r := e.run("kubectl", "--name", "usage", "top", "pods", "-A", "--no-headers")
			return r.stdout + r.stderr, errOf(r)
		},
			map[string]string{"web-": "100m 128Mi"}, 3)
		if log, err := os.ReadFile(usageLog); err != nil || !strings.Contains(string(log), listed) {
			t.Fatalf("kubectl top was answered, but usage-metrics' log does not say it listed the pods then (%v)", err)
		}
		stock, err := exec.LookPath("kubectl")
		if err != nil {
			t.Log("no kubectl on PATH: the stock kubectl's top is not checked")
		} else {
			wantTop(t, func() (string, error) {
				out, err := exec.Command(stock, "--kubeconfig", e.kubeconfig, "top", "pods", "-A", "--no-headers").CombinedOutput()
				return string(out), err
			}, map[string]string{"web-": "100m 128Mi"}, 3)
		}
		perNode := map[string]int{}
		for _, p := range runningPods(t, client, "app=web") {
			perNode[p.Spec.NodeName]++
		}
		want := map[string]string{}
		for node, n := range perNode {
			want[node] = fmt.Sprintf("%dm %dMi", 100*n, 128*n)
		}
		wantTop(t, func() (string, error) {
			r := e.run("kubectl", "--name", "usage", "top", "nodes", "--no-headers")
			return r.stdout + r.stderr, errOf(r)
		},
			want, len(want))
	})

	t.Run("KWOK's Metric endpoints are served through the node proxy", func(t *testing.T) {
		testMetricEndpoint(t, e.in(t), client)
	})

	t.Run("KWOK's usage manifests apply and a ResourceUsage comes first", func(t *testing.T) {
		e := e.in(t)
		e.kubectl("apply", "-f", "testdata/kwok-v0.8.0/metrics/usage/usage-from-annotation.yaml")
		pods := runningPods(t, client, "app=web")
		e.kubectl("annotate", "pod", pods[0].Name, "kwok.x-k8s.io/usage-cpu=750m", "kwok.x-k8s.io/usage-memory=2Gi")
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ResourceUsage
metadata: {name: ` + pods[1].Name + `, namespace: default}
spec:
  usages:
  - containers: [c]
    usage:
      cpu: {expression: 'pod.SinceSecond() >= 0.0 ? Quantity("333m") : Quantity("0")'}
      memory: {value: 42Mi}
`)
		wantTop(t, func() (string, error) {
			r := e.run("kubectl", "--name", "usage", "top", "pods", "--no-headers")
			return r.stdout + r.stderr, errOf(r)
		},
			map[string]string{pods[0].Name: "750m 2048Mi", pods[1].Name: "333m 42Mi", pods[2].Name: "1m 1Mi"}, 3)
		e.kubectl("delete", "clusterresourceusage", "usage-from-annotation")
		e.kubectl("delete", "resourceusage", pods[1].Name)
	})

	t.Run("bad usage is reported on its object and that pod has no metric", func(t *testing.T) {
		e := e.in(t)
		pods := runningPods(t, client, "app=web")
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ResourceUsage
metadata: {name: ` + pods[0].Name + `, namespace: default}
spec:
  usages:
  - usage: {cpu: {expression: 'Quantity(pod.metadata.annotations["missing"])'}}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: does-not-compile}
spec:
  selector: {matchNames: [nothing-has-this-name]}
  usages:
  - usage: {cpu: {expression: 'Quantity("1m" *'}}
`)
		eventually(t, 30*time.Second, "Accepted=False on does-not-compile", func() error {
			r := e.run("kubectl", "--name", "usage", "get", "clusterresourceusage", "does-not-compile",
				"-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].message}`)
			if !strings.HasPrefix(r.stdout, "False spec.usages[0].usage.cpu.expression") {
				return fmt.Errorf("%s", r)
			}
			return nil
		})
		waitEvent(t, client, "default", "does-not-compile", "InvalidUsage", "spec.usages[0].usage.cpu.expression")
		mc := metricsclient.NewForConfigOrDie(mustConfig(t, e.kubeconfig))
		eventually(t, 30*time.Second, "no metric for "+pods[0].Name+", a Warning on its ResourceUsage", func() error {
			_, err := mc.MetricsV1beta1().PodMetricses("default").Get(ctx, pods[0].Name, metav1.GetOptions{})
			if err == nil {
				return fmt.Errorf("pod %s has a metric", pods[0].Name)
			}
			list, err := mc.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(list.Items) != 2 {
				return fmt.Errorf("%d pods with metrics, want the other 2", len(list.Items))
			}
			return nil
		})
		waitEvent(t, client, "default", pods[0].Name, "UsageFailed", "missing")
		e.kubectl("delete", "resourceusage", pods[0].Name)
		e.kubectl("delete", "clusterresourceusage", "does-not-compile")
	})

	t.Run("timestamps and windows lie after each pod's start and Ready", func(t *testing.T) {
		mc := metricsclient.NewForConfigOrDie(mustConfig(t, e.kubeconfig))
		list, err := mc.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range list.Items {
			p := getPod(t, client, m.Name)
			var ready time.Time
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					ready = c.LastTransitionTime.Time
				}
			}
			// The HPA controller's test for a sample of a pod in its
			// first minutes (pod_metrics older than Ready + window: ignored).
			if m.Timestamp.Time.Before(ready.Add(m.Window.Duration)) || m.Timestamp.Time.Before(p.Status.StartTime.Add(m.Window.Duration)) {
				t.Errorf("%s: timestamp %s, window %s: before Ready (%s) or start (%s) + window", m.Name, m.Timestamp, m.Window.Duration, ready, p.Status.StartTime)
			}
			if m.Window.Duration <= 0 || m.Window.Duration > 15*time.Second {
				t.Errorf("%s: window %s, want (0, 15s]", m.Name, m.Window.Duration)
			}
		}
	})

	t.Run("an HPA at 50% CPU scales out when usage rises and in when it falls", func(t *testing.T) {
		e := e.in(t)
		testHPA(t, e, client)
	})

	t.Run("LowNodeUtilization on metrics evicts from the node the usage makes hot", func(t *testing.T) {
		e := e.in(t)
		e.kubectl("create", "namespace", "lnu")
		d := deployment("busy", 6)
		d.Namespace = "lnu"
		d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
		if _, err := client.AppsV1().Deployments("lnu").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// node-000000's pods use 20 of its 32 cores each, node-000001's
		// nothing to speak of: by requests the two are alike and idle.
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: hot-node}
spec:
  selector: {matchNamespaces: [lnu]}
  usages:
  - usage: {cpu: {expression: 'node.metadata.name == "node-000000" ? Quantity("20") : Quantity("10m")'}}
`)
		var onHot int
		eventually(t, 60*time.Second, "busy pods on both nodes, and their usage served", func() error {
			pods, err := client.CoreV1().Pods("lnu").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			perNode := map[string]int{}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					perNode[p.Spec.NodeName]++
				}
			}
			if perNode["node-000000"] == 0 || perNode["node-000001"] == 0 || perNode["node-000000"]+perNode["node-000001"] != 6 {
				return fmt.Errorf("busy pods per node: %v", perNode)
			}
			onHot = perNode["node-000000"]
			r := e.run("kubectl", "--name", "usage", "top", "node", "node-000000", "--no-headers")
			f := strings.Fields(r.stdout)
			if len(f) < 2 {
				return fmt.Errorf("node-000000: %s", r)
			}
			if used := resource.MustParse(f[1]); used.MilliValue() < int64(20000*onHot) {
				return fmt.Errorf("node-000000 uses %s", f[1])
			}
			return nil
		})
		policy := filepath.Join(t.TempDir(), "lnu.yaml")
		writeFile(t, policy, []byte(`apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
metricsProviders: [{source: KubernetesMetrics}]
profiles:
- name: relieve
  pluginConfig:
  - name: DefaultEvictor
    args: {nodeFit: false}
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20}
      targetThresholds: {cpu: 50}
      metricsUtilization: {source: KubernetesMetrics}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
`))
		report := e.deschedule("--policy", policy)
		counts, _ := report.results()
		if counts["Evicted"] == 0 {
			t.Fatalf("LowNodeUtilization evicted nothing from node-000000 (%d pods at 20 cores each): %+v", onHot, report.Evictions)
		}
		for _, ev := range report.Evictions {
			if ev.Node != "node-000000" || ev.Plugin != "LowNodeUtilization" {
				t.Errorf("eviction %+v, want only from the hot node-000000", ev)
			}
		}
		e.kubectl("delete", "clusterresourceusage", "hot-node")
		e.kubectl("delete", "namespace", "lnu", "--wait=false")
	})

	t.Run("custom and external metrics served as declared and bad ones reported", func(t *testing.T) {
		testCustomMetricsServed(t, e.in(t), client)
	})

	t.Run("an HPA on the External metric queue_length scales workers out and in", func(t *testing.T) {
		testExternalHPA(t, e.in(t), client)
	})

	t.Run("an HPA on the Pods metric requests_per_second scales out and in", func(t *testing.T) {
		testPodsHPA(t, e.in(t), client)
	})

	t.Run("the component killed is restarted and serves again", func(t *testing.T) {
		e := e.in(t)
		pid := e.componentPID("usage", "usage-metrics")
		if pid == 0 {
			t.Fatal("no usage-metrics process")
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "a new usage-metrics process serving kubectl top", func() error {
			if now := e.componentPID("usage", "usage-metrics"); now == 0 || now == pid {
				return fmt.Errorf("process %d", now)
			}
			if r := e.run("kubectl", "--name", "usage", "top", "pods", "--no-headers"); r.code != 0 || !strings.Contains(r.stdout, "web-") {
				return fmt.Errorf("%s", r)
			}
			return nil
		})
	})
}

// Disabled, the component costs nothing: no process, no metrics.k8s.io.
func TestUsageMetricsDisabled(t *testing.T) {
	e := newEnv(t)
	e.createCluster("nousage", "--disable-usage-metrics", "--nodes", "1")
	if pid := e.componentPID("nousage", "usage-metrics"); pid != 0 {
		t.Errorf("usage-metrics runs (pid %d) in a cluster made with --disable-usage-metrics", pid)
	}
	r := e.run("kubectl", "--name", "nousage", "top", "nodes")
	if r.code == 0 || !strings.Contains(r.stderr, "Metrics API not available") {
		t.Errorf("kubectl top nodes: %s", r)
	}
	// Nothing serves the kubelet port: the egress proxy refuses it.
	r = e.run("kubectl", "--name", "nousage", "get", "--raw", "/api/v1/nodes/node-000000/proxy/metrics/nodes/node-000000/metrics/resource")
	if r.code == 0 || !strings.Contains(r.stderr, "is simulated") {
		t.Errorf("node proxy without usage-metrics: %s", r)
	}
}

// testHPA drives the real HPA controller with a ClusterResourceUsage over
// the namespace of a Deployment whose pods request 100m.
func testHPA(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	e.kubectl("create", "namespace", "hpa")
	d := deployment("api", 2)
	d.Namespace = "hpa"
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	if _, err := client.AppsV1().Deployments("hpa").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	load := func(cpu string) {
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: api-load}
spec:
  selector: {matchNamespaces: [hpa]}
  usages:
  - usage: {cpu: {value: ` + cpu + `}}
`)
	}
	load("40m") // 40 % of the request: under the target, 2 replicas stay
	createHPA(t, client, "hpa", "api", 2, 6, cpuUtilization(50))
	// kubectl get hpa shows the current utilisation the controller read.
	eventually(t, 60*time.Second, "the HPA to read 40% CPU", func() error {
		h, err := client.AutoscalingV2().HorizontalPodAutoscalers("hpa").Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, m := range h.Status.CurrentMetrics {
			if m.Resource != nil && m.Resource.Current.AverageUtilization != nil && *m.Resource.Current.AverageUtilization == 40 {
				if h.Status.DesiredReplicas != 2 {
					return fmt.Errorf("desired %d replicas at 40%%, want 2", h.Status.DesiredReplicas)
				}
				return nil
			}
		}
		return fmt.Errorf("current metrics %+v, conditions %+v", h.Status.CurrentMetrics, h.Status.Conditions)
	})
	if out := e.kubectl("get", "hpa", "-n", "hpa", "api").stdout; !strings.Contains(out, "cpu: 40%/50%") {
		t.Errorf("kubectl get hpa does not show 40%%/50%%:\n%s", out)
	}

	load("150m") // 150 %: 2 × 150/50 = 6, the most it may have
	waitReplicas(t, client, "hpa", "api", 6)
	// kubesim explain tells of the pods the HPA made as of any other.
	if out := e.must("explain", "deployment", "--name", "usage", "-n", "hpa", "api").stdout; !strings.Contains(out, "node-00000") {
		t.Errorf("kubesim explain deployment api names no node:\n%s", out)
	}
	load("10m") // 10 %: back to its minimum once the 5s stabilization passes
	waitReplicas(t, client, "hpa", "api", 2)
}

// waitReplicas waits until the namespace's Deployment name has n pods,
// all Running and Ready, and wants n.
func waitReplicas(t *testing.T, client kubernetes.Interface, namespace, name string, n int) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 2*time.Minute, fmt.Sprintf("%s/%s at %d Running, Ready replicas", namespace, name, n), func() error {
		d, err := client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != n || int(d.Status.ReadyReplicas) != n || int(d.Status.Replicas) != n {
			return fmt.Errorf("spec %d, %d replicas, %d ready", ptr.Deref(d.Spec.Replicas, 0), d.Status.Replicas, d.Status.ReadyReplicas)
		}
		return nil
	})
}

// wantTop polls a `top --no-headers` until each line whose first name
// column starts with a key shows the key's "CPU MEMORY", and count lines
// match in all.
func wantTop(t *testing.T, top func() (string, error), want map[string]string, count int) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("top to show %v", want), func() error {
		out, err := top()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		matched := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == "default" { // top pods -A: NAMESPACE NAME CPU MEMORY
				f = f[1:]
			}
			if len(f) < 3 {
				continue
			}
			for prefix, usage := range want {
				if strings.HasPrefix(f[0], prefix) {
					// top nodes: NAME CPU CPU% MEMORY MEMORY%
					got := f[1] + " " + f[2]
					if len(f) == 5 {
						got = f[1] + " " + f[3]
					}
					if got != usage {
						return fmt.Errorf("%s: %s, want %s\n%s", f[0], got, usage, out)
					}
					matched++
				}
			}
		}
		if matched != count {
			return fmt.Errorf("%d lines matched, want %d\n%s", matched, count, out)
		}
		return nil
	})
}

func errOf(r result) error {
	if r.code != 0 {
		return fmt.Errorf("exit %d", r.code)
	}
	return nil
}

// createHPA makes an autoscaling/v2 HPA named name over the Deployment of
// the same name, between min and max replicas, on one metric.
func createHPA(t *testing.T, client kubernetes.Interface, namespace, name string, min, max int32, metric autoscalingv2.MetricSpec) {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    ptr.To(min),
			MaxReplicas:    max,
			Metrics:        []autoscalingv2.MetricSpec{metric},
		},
	}
	if _, err := client.AutoscalingV2().HorizontalPodAutoscalers(namespace).Create(context.Background(), hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cpuUtilization is an HPA metric: the pods' average CPU at percent of
// their request.
func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)},
	}}
}
