package usage

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// fakeUsage answers Usage from a table of containers' usage: a pod's is
// the sum of its containers', a node's of all; cumulative usage is 100 s
// of it.
type fakeUsage map[string]float64 // namespace/pod/container/resource

func (f fakeUsage) Usage(kind, namespace, name, res, container string, cumulative bool) (float64, error) {
	var sum float64
	found := false
	for k, v := range f {
		p := strings.Split(k, "/")
		if p[3] == res && (kind == "Node" || p[0] == namespace && p[1] == name && (container == "" || p[2] == container)) {
			sum += v
			found = true
		}
	}
	if !found {
		return 0, fmt.Errorf("no usage of %s %s/%s %s", kind, namespace, name, container)
	}
	if cumulative {
		sum *= 100
	}
	return sum, nil
}

func kubeletRequest(path, caller string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Host = "10.64.0.1:10250"
	if path == "/healthz" {
		r.Host = "127.0.0.1:6443"
	}
	if caller != "" {
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: caller}}}}}
	}
	return r
}

// A small node's endpoint in Prometheus' text format, exactly: a series
// per node, running pod and container as each metric's dimension says,
// labels and values from the expressions, a histogram's buckets
// cumulative with a hidden one folded into the next; a series failing for
// one pod is left out and reported; anonymous callers and the kubelet's
// other paths are refused.
func TestKubeletPortExposition(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}
	web := testPod("default", "web", map[string]string{"rps": "12"}, container("app", "", ""), container("side", "", ""))
	db := testPod("data", "db", nil, container("pg", "", ""))
	pending := testPod("default", "pending", nil, container("app", "", ""))
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeNameIndex: indexByNodeName})
	for _, p := range []*corev1.Pod{web, db, pending} {
		p.Spec.NodeName = "node-0"
		if p != pending {
			p.Status.Phase = corev1.PodRunning
			p.Status.StartTime = &metav1.Time{}
		}
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := nodes.Add(node); err != nil {
		t.Fatal(err)
	}
	usage := fakeUsage{
		"default/web/app/cpu": 0.25, "default/web/side/cpu": 0.125, "data/db/pg/cpu": 1,
		"default/web/app/memory": 1 << 20, "default/web/side/memory": 2 << 20, "data/db/pg/memory": 1 << 30,
	}
	endpoints, err := NewEndpoints(usage)
	if err != nil {
		t.Fatal(err)
	}
	err = endpoints.SetMetric(&kwokv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Name: "resource"}, Spec: kwokv1alpha1.MetricSpec{
		Path: "/metrics/nodes/{nodeName}/metrics/resource",
		Metrics: []kwokv1alpha1.MetricConfig{
			{Name: "node_memory_working_set_bytes", Help: "Working set of the node\n", Kind: "gauge", Value: `node.Usage("memory")`},
			{Name: "container_cpu_usage_seconds_total", Help: "CPU time", Kind: "counter", Dimension: "container",
				Labels: []kwokv1alpha1.MetricLabel{{Name: "container", Value: "container.name"}, {Name: "namespace", Value: "pod.metadata.namespace"},
					{Name: "pod", Value: "pod.metadata.name"}},
				Value: `pod.CumulativeUsage("cpu", container.name)`},
			{Name: "pod_requests_per_second", Kind: "gauge", Dimension: "pod", // db has no annotation: left out
				Labels: []kwokv1alpha1.MetricLabel{{Name: "pod", Value: "pod.metadata.name"}},
				Value:  `double(pod.metadata.annotations["rps"])`},
			{Name: "request_duration_seconds", Help: `a "histogram" \ with a hidden bucket`, Kind: "histogram",
				Buckets: []kwokv1alpha1.MetricBucket{{Le: 1, Value: "3"}, {Le: 0.1, Value: "2"}, {Le: 0.5, Value: "4.9", Hidden: true}}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	port := &kubeletPort{endpoints: endpoints, nodes: corelisters.NewNodeLister(nodes), byNode: pods, caller: "apiserver", use: syncedUse(),
		failed: func(e *EvalError) { failed = append(failed, e.Error()) }}

	rec := httptest.NewRecorder()
	port.ServeHTTP(rec, kubeletRequest("/metrics/nodes/node-0/metrics/resource", "apiserver"))
	want := `# HELP node_memory_working_set_bytes Working set of the node
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.076887552e+09
# HELP container_cpu_usage_seconds_total CPU time
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="pg",namespace="data",pod="db"} 100
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 25
container_cpu_usage_seconds_total{container="side",namespace="default",pod="web"} 12.5
# TYPE pod_requests_per_second gauge
pod_requests_per_second{pod="web"} 12
# HELP request_duration_seconds a "histogram" \\ with a hidden bucket
# TYPE request_duration_seconds histogram
request_duration_seconds_bucket{le="0.1"} 2
request_duration_seconds_bucket{le="1"} 9
request_duration_seconds_bucket{le="+Inf"} 9
request_duration_seconds_sum 5.2
request_duration_seconds_count 9
`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("scrape: %d\n%s\nwant\n%s", rec.Code, rec.Body, want)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "Metric resource: spec.metrics[2] (pod_requests_per_second), pod data/db") {
		t.Errorf("failures reported: %q, want db's rps", failed)
	}

	for _, tc := range []struct {
		path, caller string
		code         int
		says         string
	}{
		{"/metrics/nodes/node-0/metrics/resource", "", http.StatusUnauthorized, "answers the API server only"},
		{"/metrics/nodes/node-0/metrics/resource", "someone", http.StatusUnauthorized, "answers the API server only"},
		{"/metrics/nodes/node-9/metrics/resource", "apiserver", http.StatusNotFound, "node node-9"},
		{"/metrics/cadvisor", "apiserver", http.StatusNotFound, "no kwok.x-k8s.io Metric serves"},
		{"/containerLogs/default/web/app", "apiserver", http.StatusNotImplemented, "node 10.64.0.1 is simulated"},
		{"/exec/default/web/app", "apiserver", http.StatusNotImplemented, "node 10.64.0.1 is simulated"},
		{"/healthz", "apiserver", http.StatusNotImplemented, "this node is simulated"}, // by the node proxy: Host is the API server's
	} {
		rec := httptest.NewRecorder()
		port.ServeHTTP(rec, kubeletRequest(tc.path, tc.caller))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) || strings.Count(rec.Body.String(), "\n") != 1 {
			t.Errorf("%s by %q: %d %q, want %d and one line saying %q", tc.path, tc.caller, rec.Code, rec.Body, tc.code, tc.says)
		}
	}
}

// A Metric that is not valid says which field and why, and is not served;
// a path without {nodeName} is the node named as the Metric, as in KWOK.
func TestMetricValidation(t *testing.T) {
	endpoints, err := NewEndpoints(fakeUsage{})
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name, value string) kwokv1alpha1.MetricConfig {
		return kwokv1alpha1.MetricConfig{Name: name, Kind: "gauge", Value: value}
	}
	for _, tc := range []struct {
		path    string
		metrics []kwokv1alpha1.MetricConfig
		want    string
	}{
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a", "1"), gauge("b", "1"), gauge("c", `Usage(`)}, "spec.metrics[2].value: CEL expression"},
		{"/stats/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a", "1")}, "spec.path: \"/stats/{nodeName}\" does not start with /metrics/"},
		{"/metrics/{nodeName}/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a", "1")}, "spec.path"},
		{"/metrics/{node}", []kwokv1alpha1.MetricConfig{gauge("a", "1")}, "only {nodeName}"},
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a", "1"), gauge("a", "2")}, "spec.metrics[1].name: \"a\" is spec.metrics[0]'s too"},
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a-b", "1")}, "spec.metrics[0].name: \"a-b\" is not a Prometheus metric name"},
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{gauge("a", "")}, "spec.metrics[0].value: a gauge needs a value"},
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{{Name: "h", Kind: "histogram"}}, "spec.metrics[0].buckets: a histogram needs buckets"},
		{"/metrics/{nodeName}", []kwokv1alpha1.MetricConfig{{Name: "a", Kind: "gauge", Value: "1",
			Labels: []kwokv1alpha1.MetricLabel{{Name: "x", Value: "pod.("}}}}, "spec.metrics[0].labels[0].value"},
	} {
		err := endpoints.SetMetric(&kwokv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: kwokv1alpha1.MetricSpec{Path: tc.path, Metrics: tc.metrics}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want %q", tc.path, tc.metrics, err, tc.want)
		}
		if ep, _, ok := endpoints.match("/metrics/node-0"); ok && ep.err == nil {
			t.Errorf("%s %v: served", tc.path, tc.metrics)
		}
	}

	if err := endpoints.SetMetric(&kwokv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Name: "node-7"},
		Spec: kwokv1alpha1.MetricSpec{Path: "/metrics/fixed", Metrics: []kwokv1alpha1.MetricConfig{gauge("a", "1")}}}); err != nil {
		t.Fatal(err)
	}
	if _, node, ok := endpoints.match("/metrics/fixed"); !ok || node != "node-7" {
		t.Errorf("/metrics/fixed: node %q, %v; want node-7, the Metric's name", node, ok)
	}
	endpoints.DeleteMetric("m")
	endpoints.DeleteMetric("node-7")
	if _, _, ok := endpoints.match("/metrics/fixed"); ok {
		t.Error("a deleted Metric is served")
	}
}
