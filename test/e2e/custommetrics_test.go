//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// testCustomMetricsServed: CustomMetrics and ExternalMetrics read back
// through the API server's aggregator with kubectl get --raw, as declared;
// a selector matching nothing says so in status; bad ones reported.
func testCustomMetricsServed(t *testing.T, e *env, client kubernetes.Interface) {
	e.kubectl("create", "namespace", "shop")
	d := deployment("front", 2)
	d.Namespace = "shop"
	if _, err := client.AppsV1().Deployments("shop").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.apply(`apiVersion: kubesim.io/v1alpha1
kind: CustomMetric
metadata: {name: front-rps, namespace: shop}
spec:
  metric: requests_per_second
  pods: {selector: {matchLabels: {app: front}}}
  expression: 'pod.metadata.name.startsWith("front-") ? Quantity("12500m") : 0.0'
---
apiVersion: kubesim.io/v1alpha1
kind: CustomMetric
metadata: {name: ingress-rps, namespace: shop}
spec:
  metric: requests_per_second
  object: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: front}
  value: "25"
---
apiVersion: kubesim.io/v1alpha1
kind: CustomMetric
metadata: {name: nobody, namespace: shop}
spec:
  metric: requests_per_second
  pods: {selector: {matchLabels: {app: nobody}}}
  value: "1"
---
apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: jobs, namespace: shop}
spec:
  metric: queue_length
  labels: {queue: jobs}
  value: "42"
---
apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: mail, namespace: shop}
spec:
  metric: queue_length
  labels: {queue: mail}
  expression: 'Quantity("3") * 2.0'
`)
	type value struct {
		DescribedObject struct{ Kind, Name string } `json:"describedObject"`
		MetricLabels    map[string]string           `json:"metricLabels"`
		Value           resource.Quantity           `json:"value"`
	}
	raw := func(path string) ([]value, error) {
		r := e.run("kubectl", "--name", "usage", "get", "--raw", path)
		if r.code != 0 {
			return nil, fmt.Errorf("%s", r)
		}
		var list struct{ Items []value }
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			return nil, fmt.Errorf("%v: %s", err, r.stdout)
		}
		return list.Items, nil
	}
	eventually(t, 30*time.Second, "each front pod's requests_per_second 12.5", func() error {
		items, err := raw("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/requests_per_second")
		if err != nil {
			return err
		}
		if len(items) != 2 {
			return fmt.Errorf("%d values, want 2: %+v", len(items), items)
		}
		for _, v := range items {
			if v.DescribedObject.Kind != "Pod" || !strings.HasPrefix(v.DescribedObject.Name, "front-") || v.Value.MilliValue() != 12500 {
				return fmt.Errorf("%+v, want a front pod at 12.5", v)
			}
		}
		return nil
	})
	items, err := raw("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/ingresses.networking.k8s.io/front/requests_per_second")
	if err != nil || len(items) != 1 || items[0].DescribedObject.Kind != "Ingress" || items[0].Value.MilliValue() != 25000 {
		t.Errorf("Ingress front: %+v, %v; want 25", items, err)
	}
	items, err = raw("/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_length?labelSelector=queue%3Djobs")
	if err != nil || len(items) != 1 || items[0].MetricLabels["queue"] != "jobs" || items[0].Value.MilliValue() != 42000 {
		t.Errorf("queue_length{queue=jobs}: %+v, %v; want 42", items, err)
	}
	items, err = raw("/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_length")
	if err != nil || len(items) != 2 {
		t.Errorf("queue_length of every queue: %+v, %v; want jobs' and mail's", items, err)
	}
	for _, v := range items {
		if v.MetricLabels["queue"] == "mail" && v.Value.MilliValue() != 6000 {
			t.Errorf("queue_length{queue=mail} %s, want 6", v.Value.String())
		}
	}
	eventually(t, 30*time.Second, "status.pods of front-rps 2 and of nobody 0", func() error {
		r := e.run("kubectl", "--name", "usage", "get", "custommetric", "-n", "shop", "front-rps", "nobody", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.pods} {end}")
		if strings.TrimSpace(r.stdout) != "front-rps=2 nobody=0" {
			return fmt.Errorf("%s", r)
		}
		return nil
	})

	// Bad input: refused or warned of on its object; the rest is served.
	e.apply(`apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: broken, namespace: shop}
spec:
  metric: queue_length
  labels: {queue: broken}
  expression: 'Quantity("1" *'
---
apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: negative, namespace: shop}
spec:
  metric: queue_length
  labels: {queue: negative}
  value: "-5"
---
apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: wordy, namespace: shop}
spec:
  metric: queue_length
  labels: {queue: wordy}
  expression: '"lots"'
`)
	eventually(t, 30*time.Second, "Accepted=False on broken and negative", func() error {
		for name, want := range map[string]string{"broken": "False spec.expression", "negative": "False spec.value: -5 is negative"} {
			r := e.run("kubectl", "--name", "usage", "get", "externalmetric", "-n", "shop", name,
				"-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].message}`)
			if !strings.HasPrefix(r.stdout, want) {
				return fmt.Errorf("%s: %s", name, r)
			}
		}
		return nil
	})
	waitEvent(t, client, "shop", "broken", "InvalidMetric", "spec.expression")
	items, err = raw("/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_length")
	if err != nil || len(items) != 2 {
		t.Errorf("queue_length with bad ones beside: %+v, %v; want jobs' and mail's alone", items, err)
	}
	waitEvent(t, client, "shop", "wordy", "MetricFailed", "not a number")
	e.kubectl("delete", "namespace", "shop", "--wait=false")
}

// testExternalHPA: an autoscaling/v2 HPA on the External metric
// queue_length (10 jobs per worker) scales the worker Deployment out as
// the queue rises and back in as it falls.
func testExternalHPA(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	e.kubectl("create", "namespace", "queue")
	d := deployment("worker", 1)
	d.Namespace = "queue"
	if _, err := client.AppsV1().Deployments("queue").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	queue := func(n string) {
		e.apply(`apiVersion: kubesim.io/v1alpha1
kind: ExternalMetric
metadata: {name: jobs, namespace: queue}
spec:
  metric: queue_length
  labels: {queue: jobs}
  value: "` + n + `"
`)
	}
	queue("5")
	createHPA(t, client, "queue", "worker", 1, 5, autoscalingv2.MetricSpec{
		Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue_length", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
		},
	})
	eventually(t, 60*time.Second, "the HPA to read a queue of 5", func() error {
		h, err := client.AutoscalingV2().HorizontalPodAutoscalers("queue").Get(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, m := range h.Status.CurrentMetrics {
			if m.External != nil && m.External.Current.AverageValue != nil && m.External.Current.AverageValue.MilliValue() == 5000 {
				if h.Status.DesiredReplicas != 1 {
					return fmt.Errorf("desired %d replicas for 5 jobs, want 1", h.Status.DesiredReplicas)
				}
				return nil
			}
		}
		return fmt.Errorf("current metrics %+v, conditions %+v", h.Status.CurrentMetrics, h.Status.Conditions)
	})
	queue("40") // 40 jobs at 10 a worker: 4 workers
	waitReplicas(t, client, "queue", "worker", 4)
	queue("0") // empty: back to the minimum once the 5s stabilization passes
	waitReplicas(t, client, "queue", "worker", 1)
}

// testPodsHPA: an HPA on the Pods metric requests_per_second (a
// CustomMetric of the Deployment's pods) scales out to its maximum while
// each pod serves 3 times the target and back in when they serve little.
func testPodsHPA(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	e.kubectl("create", "namespace", "rps")
	d := deployment("api", 2)
	d.Namespace = "rps"
	if _, err := client.AppsV1().Deployments("rps").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rps := func(n string) {
		e.apply(`apiVersion: kubesim.io/v1alpha1
kind: CustomMetric
metadata: {name: api-rps, namespace: rps}
spec:
  metric: requests_per_second
  pods: {selector: {matchLabels: {app: api}}}
  value: "` + n + `"
`)
	}
	rps("30")
	createHPA(t, client, "rps", "api", 2, 4, autoscalingv2.MetricSpec{
		Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
		},
	})
	waitReplicas(t, client, "rps", "api", 4)
	rps("1")
	waitReplicas(t, client, "rps", "api", 2)
}
