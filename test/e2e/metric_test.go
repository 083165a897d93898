//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

const kwokMetricsResource = "testdata/kwok-v0.8.0/metrics/resource/metrics-resource.yaml"

// scrapeNode reads a node's /metrics/resource as Prometheus' kubernetes_sd
// node role does through the API server's node proxy, and parses it.
func scrapeNode(ctx context.Context, client kubernetes.Interface, node, path string) (map[string]*dto.MetricFamily, error) {
	raw, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + node + "/proxy" + path).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(bytes.NewReader(raw))
}

// series are a family's samples by their labels, written k=v,….
func series(mf *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	if mf == nil {
		return out
	}
	for _, m := range mf.Metric {
		var ls []string
		for _, l := range m.Label {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		v := m.GetGauge().GetValue()
		if m.Counter != nil {
			v = m.GetCounter().GetValue()
		}
		out[strings.Join(ls, ",")] = v
	}
	return out
}

// KWOK's own metrics-resource.yaml, applied unchanged, served per node
// through the API server's node proxy: each of its metrics with HELP and
// TYPE, a series per pod and container of the node, the node's memory
// that of metrics.k8s.io, counters that grow; a bad Metric reported and
// not served, an expression failing for one pod leaving out its series;
// logs still refused clearly.
func testMetricEndpoint(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	data, err := os.ReadFile(kwokMetricsResource)
	if err != nil {
		t.Fatal(err)
	}
	var manifest kwokv1alpha1.Metric
	if err := yaml.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	e.kubectl("apply", "-f", kwokMetricsResource)
	eventually(t, 30*time.Second, "Accepted=True on metrics-resource", func() error {
		r := e.run("kubectl", "--name", e.cluster, "get", "metric", manifest.Name, "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status}`)
		if r.stdout != "True" {
			return fmt.Errorf("%s", r)
		}
		return nil
	})

	// The node with the most web pods: 2 or 3 of the 3 on 2 nodes.
	byNode := map[string][]string{}
	node := ""
	for _, p := range runningPods(t, client, "app=web") {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
		if len(byNode[p.Spec.NodeName]) > len(byNode[node]) {
			node = p.Spec.NodeName
		}
	}
	onNode := byNode[node]
	if len(onNode) < 2 {
		t.Fatalf("web pods by node: %v; want a node with 2", byNode)
	}
	path := strings.ReplaceAll(manifest.Spec.Path, "{nodeName}", node)
	fams, err := scrapeNode(ctx, client, node, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest.Spec.Metrics {
		mf := fams[m.Name]
		if mf == nil {
			t.Errorf("%s: not served", m.Name)
			continue
		}
		if mf.GetHelp() == "" || !strings.EqualFold(mf.GetType().String(), string(m.Kind)) {
			t.Errorf("%s: HELP %q, TYPE %s; want the manifest's help and %s", m.Name, mf.GetHelp(), mf.GetType(), m.Kind)
		}
		got := series(mf)
		switch m.Dimension {
		case kwokv1alpha1.MetricDimensionNode:
			if len(got) != 1 {
				t.Errorf("%s: %v, want one series of the node", m.Name, got)
			}
		case kwokv1alpha1.MetricDimensionPod, kwokv1alpha1.MetricDimensionContainer:
			want := map[string]bool{}
			for _, p := range onNode {
				key := "namespace=default,pod=" + p
				if m.Dimension == kwokv1alpha1.MetricDimensionContainer {
					key = "container=c," + key // deployment()'s one container
				}
				want[key] = true
			}
			if len(got) != len(want) {
				t.Errorf("%s: %v, want a series for each of %v", m.Name, got, onNode)
			}
			for k := range want {
				if _, ok := got[k]; !ok {
					t.Errorf("%s: no series {%s}: %v", m.Name, k, got)
				}
			}
		}
	}

	mc := metricsclient.NewForConfigOrDie(mustConfig(t, e.kubeconfig))
	nm, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := series(fams["node_memory_working_set_bytes"])[""], float64(nm.Usage.Memory().Value()); got != want || want == 0 {
		t.Errorf("node_memory_working_set_bytes of %s = %v, metrics.k8s.io (kubectl top node) says %v", node, got, want)
	}
	cpuOf := func(fams map[string]*dto.MetricFamily) float64 {
		return series(fams["container_cpu_usage_seconds_total"])["container=c,namespace=default,pod="+onNode[0]]
	}
	first := cpuOf(fams)
	eventually(t, 30*time.Second, "container_cpu_usage_seconds_total grows", func() error {
		fams, err := scrapeNode(ctx, client, node, path)
		if err != nil {
			return err
		}
		if now := cpuOf(fams); now <= first || first <= 0 {
			return fmt.Errorf("%v, then %v", first, now)
		}
		return nil
	})

	// A Metric that does not compile is reported and not served; one that
	// fails for a pod leaves out that pod's series, and warns.
	e.kubectl("annotate", "pod", onNode[0], "rps=7")
	e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata: {name: bad-metric}
spec:
  path: /metrics/nodes/{nodeName}/bad
  metrics:
  - {name: a, kind: gauge, value: '1'}
  - {name: b, kind: gauge, value: '2'}
  - {name: c, kind: gauge, value: 'node.Usage("cpu" *'}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata: {name: rps}
spec:
  path: /metrics/nodes/{nodeName}/rps
  metrics:
  - name: requests_per_second
    dimension: pod
    kind: gauge
    labels: [{name: pod, value: pod.metadata.name}]
    value: 'double(pod.metadata.annotations["rps"])'
`)
	eventually(t, 30*time.Second, "Accepted=False on bad-metric", func() error {
		r := e.run("kubectl", "--name", e.cluster, "get", "metric", "bad-metric", "-o",
			`jsonpath={.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].message}`)
		if !strings.HasPrefix(r.stdout, "False spec.metrics[2].value: CEL expression") {
			return fmt.Errorf("%s", r)
		}
		return nil
	})
	waitEvent(t, client, "default", "bad-metric", "InvalidMetric", "spec.metrics[2].value")
	if _, err := scrapeNode(ctx, client, node, "/metrics/nodes/"+node+"/bad"); !apierrors.IsNotFound(err) ||
		!strings.Contains(err.Error(), "Metric bad-metric is not served: spec.metrics[2].value") {
		t.Errorf("bad-metric's path: %v, want it not served, saying why", err)
	}
	eventually(t, 30*time.Second, "requests_per_second of "+onNode[0]+" alone", func() error {
		fams, err := scrapeNode(ctx, client, node, "/metrics/nodes/"+node+"/rps")
		if err != nil {
			return err
		}
		if got := series(fams["requests_per_second"]); len(got) != 1 || got["pod="+onNode[0]] != 7 {
			return fmt.Errorf("%v", got)
		}
		return nil
	})
	waitEvent(t, client, "default", "rps", "MetricFailed", "pod default/"+onNode[1])
	if fams, err := scrapeNode(ctx, client, node, path); err != nil || len(fams) != len(manifest.Spec.Metrics) {
		t.Errorf("metrics-resource beside them: %d metrics, %v", len(fams), err)
	}

	r := e.run("kubectl", "--name", e.cluster, "logs", onNode[0])
	if r.code == 0 || !strings.Contains(r.stderr, "is simulated") {
		t.Errorf("kubectl logs: %s", r)
	}
	e.kubectl("delete", "metric", "bad-metric", "rps")
	e.kubectl("annotate", "pod", onNode[0], "rps-")
}
