package usage

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// providerFor is a provider over pods and the CustomMetrics and
// ExternalMetrics in docs (YAML), with the errors Set returned by name and
// the evaluation failures it reported.
func providerFor(t *testing.T, pods []*corev1.Pod, docs ...string) (*metricsProvider, map[string]error, *[]*EvalError) {
	t.Helper()
	metrics, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	setErrs := map[string]error{}
	for _, doc := range docs {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		switch kind.Kind {
		case v1alpha1.CustomMetricKind:
			var cm v1alpha1.CustomMetric
			if err := yaml.UnmarshalStrict([]byte(doc), &cm); err != nil {
				t.Fatal(err)
			}
			setErrs[cm.Name] = metrics.SetCustomMetric(&cm)
		case v1alpha1.ExternalMetricKind:
			var em v1alpha1.ExternalMetric
			if err := yaml.UnmarshalStrict([]byte(doc), &em); err != nil {
				t.Fatal(err)
			}
			setErrs[em.Name] = metrics.SetExternalMetric(&em)
		default:
			t.Fatalf("kind %q", kind.Kind)
		}
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, labelIndex: indexByLabels})
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	failed := &[]*EvalError{}
	return &metricsProvider{
		metrics: metrics,
		pods:    corelisters.NewPodLister(indexer),
		byLabel: podIndex{corelisters.NewPodLister(indexer), indexer},
		nodes:   corelisters.NewNodeLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		now:     func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) },
		failed:  func(e *EvalError) { *failed = append(*failed, e) },
	}, setErrs, failed
}

func runningPod(ns, name string, lbls map[string]string, annotations map[string]string) *corev1.Pod {
	p := testPod(ns, name, annotations, container("c", "100m", ""))
	p.Labels = lbls
	p.Status.Phase = corev1.PodRunning
	return p
}

var podsInfo = provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "requests_per_second"}

// A pods CustomMetric gives each running pod its selector matches its
// value (an expression over the pod), and those it does not match none.
func TestCustomMetricOfPods(t *testing.T) {
	pods := []*corev1.Pod{
		runningPod("shop", "web-1", map[string]string{"app": "web"}, map[string]string{"rps": "20"}),
		runningPod("shop", "web-2", map[string]string{"app": "web"}, map[string]string{"rps": "7.5"}),
		runningPod("shop", "db-1", map[string]string{"app": "db"}, nil),
		runningPod("other", "web-3", map[string]string{"app": "web"}, map[string]string{"rps": "1"}),
	}
	pending := runningPod("shop", "web-4", map[string]string{"app": "web"}, map[string]string{"rps": "1"})
	pending.Status.Phase = corev1.PodPending
	pods = append(pods, pending)
	p, errs, failed := providerFor(t, pods, `
kind: CustomMetric
metadata: {name: web-rps, namespace: shop}
spec:
  metric: requests_per_second
  pods: {selector: {matchLabels: {app: web}}}
  expression: 'double(pod.metadata.annotations["rps"])'
`)
	if errs["web-rps"] != nil {
		t.Fatal(errs["web-rps"])
	}
	list, err := p.GetMetricBySelector(context.Background(), "shop", labels.Everything(), podsInfo, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, v := range list.Items {
		if v.DescribedObject.Kind != "Pod" || v.Metric.Name != "requests_per_second" || !v.Timestamp.Time.Equal(p.now()) {
			t.Errorf("value %+v", v)
		}
		got[v.DescribedObject.Name] = v.Value.MilliValue()
	}
	if len(got) != 2 || got["web-1"] != 20000 || got["web-2"] != 7500 {
		t.Errorf("values %v, want web-1 20 and web-2 7.5 (not db-1, not the pending web-4, not other's web-3)", got)
	}
	one, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web-2"}, podsInfo, labels.Everything())
	if err != nil || one.Value.MilliValue() != 7500 {
		t.Errorf("web-2: %v, %v; want 7.5", one, err)
	}
	if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "db-1"}, podsInfo, labels.Everything()); !apierrors.IsNotFound(err) {
		t.Errorf("db-1, which no CustomMetric selects: %v, want not found", err)
	}
	if len(*failed) != 0 {
		t.Errorf("failures: %v", *failed)
	}
}

// An object's CustomMetric is found by the resource of its kind and its
// name, as the HPA controller asks (deployments.apps/web).
func TestCustomMetricOfObject(t *testing.T) {
	p, _, _ := providerFor(t, nil, `
kind: CustomMetric
metadata: {name: ingress-rps, namespace: shop}
spec:
  metric: requests_per_second
  object: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: web}
  value: 1500m
`)
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, Namespaced: true, Metric: "requests_per_second"}
	v, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}, info, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if v.Value.MilliValue() != 1500 || v.DescribedObject.Kind != "Ingress" || v.DescribedObject.Name != "web" {
		t.Errorf("%+v, want Ingress web at 1.5", v)
	}
	if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "api"}, info, labels.Everything()); !apierrors.IsNotFound(err) {
		t.Errorf("ingress api: %v, want not found", err)
	}
	if got := p.ListAllMetrics(); len(got) != 1 || got[0] != info {
		t.Errorf("ListAllMetrics %v, want %v", got, info)
	}
}

// External metrics are matched by name and labels and evaluated when
// read; bad ones are refused (not served) with the field named, a failing
// one reports its failure and the others are served.
func TestExternalMetrics(t *testing.T) {
	p, errs, failed := providerFor(t, nil, `
kind: ExternalMetric
metadata: {name: jobs, namespace: work}
spec: {metric: queue_length, labels: {queue: jobs}, value: "30"}
`, `
kind: ExternalMetric
metadata: {name: mail, namespace: work}
spec: {metric: queue_length, labels: {queue: mail}, expression: 'Quantity("2k") + 0.5'}
`, `
kind: ExternalMetric
metadata: {name: broken, namespace: work}
spec: {metric: queue_length, labels: {queue: broken}, expression: 'Quantity("1" *'}
`, `
kind: ExternalMetric
metadata: {name: negative, namespace: work}
spec: {metric: queue_length, labels: {queue: negative}, value: "-1"}
`, `
kind: ExternalMetric
metadata: {name: text, namespace: work}
spec: {metric: queue_length, labels: {queue: text}, expression: '"many"'}
`)
	if err := errs["broken"]; err == nil || !strings.HasPrefix(err.Error(), "spec.expression: ") {
		t.Errorf("broken: %v, want an error naming spec.expression", err)
	}
	if err := errs["negative"]; err == nil || !strings.HasPrefix(err.Error(), "spec.value: -1 is negative") {
		t.Errorf("negative: %v, want spec.value refused", err)
	}
	get := func(selector string) map[string]int64 {
		t.Helper()
		sel, err := labels.Parse(selector)
		if err != nil {
			t.Fatal(err)
		}
		list, err := p.GetExternalMetric(context.Background(), "work", sel, provider.ExternalMetricInfo{Metric: "queue_length"})
		if err != nil {
			t.Fatalf("%s: %v", selector, err)
		}
		got := map[string]int64{}
		for _, v := range list.Items {
			got[v.MetricLabels["queue"]] = v.Value.MilliValue()
		}
		return got
	}
	if got := get("queue=jobs"); len(got) != 1 || got["jobs"] != 30000 {
		t.Errorf("queue=jobs: %v, want 30", got)
	}
	if got := get(""); len(got) != 2 || got["mail"] != 2000500 || got["jobs"] != 30000 {
		t.Errorf("every queue: %v, want jobs 30 and mail 2000.5, not the refused or failing ones", got)
	}
	if len(*failed) == 0 || (*failed)[0].Usage.Name != "text" || !strings.Contains((*failed)[0].Error(), "not a number") {
		t.Errorf("failures %v, want ExternalMetric text's", *failed)
	}
	if _, err := p.GetExternalMetric(context.Background(), "elsewhere", labels.Everything(), provider.ExternalMetricInfo{Metric: "queue_length"}); !apierrors.IsNotFound(err) {
		t.Errorf("another namespace: %v, want not found", err)
	}
	// Fixed, a refused metric is served.
	var em v1alpha1.ExternalMetric
	if err := yaml.Unmarshal([]byte(`{metadata: {name: negative, namespace: work}, spec: {metric: queue_length, labels: {queue: negative}, value: "4"}}`), &em); err != nil {
		t.Fatal(err)
	}
	if err := p.metrics.SetExternalMetric(&em); err != nil {
		t.Fatal(err)
	}
	if got := get("queue=negative"); got["negative"] != 4000 {
		t.Errorf("fixed: %v, want 4", got)
	}
}
