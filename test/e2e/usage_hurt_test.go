//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// TestUsageObjectsThatHurt: usage objects that would cost more than an
// evaluation may, or declare more than metrics.k8s.io carries, are refused
// on the object (Accepted False naming the field, a Warning), and one whose
// expressions cost too much for the pods it covers is cut off within a read
// of the metrics, so the other pods' metrics are served promptly (issue 47:
// `kubectl top pods` took 9–13 s for 100 pods; 1e300 cores was served
// negative).
func TestUsageObjectsThatHurt(t *testing.T) {
	e := newEnv(t)
	e.createCluster("hurt", "--nodes", "2")
	client := e.client()
	ctx := context.Background()
	big := deployment("big", 100)
	big.Spec.Template.Annotations = map[string]string{}
	for i := range 150 { // what the costly expression loops over, squared
		big.Spec.Template.Annotations[fmt.Sprint("a", i)] = ""
	}
	for _, d := range []*appsv1.Deployment{big, deployment("small", 3)} {
		if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPods(t, client, "app=big", 100)
	waitPods(t, client, "app=small", 3)
	small := runningPods(t, client, "app=small")
	mc := metricsclient.NewForConfigOrDie(mustConfig(t, e.kubeconfig))

	// served lists the pods' metrics, which must answer promptly and
	// never negative, and says which pods have them.
	served := func(t *testing.T) map[string]bool {
		t.Helper()
		start := time.Now()
		list, err := mc.MetricsV1beta1().PodMetricses("default").List(ctx, metav1.ListOptions{})
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("listing the pods' metrics took %v", d)
		}
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, m := range list.Items {
			for _, c := range m.Containers {
				if c.Usage.Cpu().Sign() < 0 || c.Usage.Memory().Sign() < 0 {
					t.Fatalf("pod %s: negative usage %v", m.Name, c.Usage)
				}
			}
			names[m.Name] = true
		}
		return names
	}
	accepted := func(t *testing.T, name, want string) {
		t.Helper()
		eventually(t, 30*time.Second, name+" Accepted "+want, func() error {
			r := e.run("kubectl", "--name", "hurt", "get", "clusterresourceusage", name,
				"-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].message}`)
			if !strings.HasPrefix(r.stdout, want) {
				return fmt.Errorf("%s", r)
			}
			return nil
		})
	}

	t.Run("over its budget or past what can be served: refused on the object", func(t *testing.T) {
		e := e.in(t)
		ten := "[1,2,3,4,5,6,7,8,9,10]"
		loops := fmt.Sprintf("%s.all(a, %s.all(b, %s.all(c, %s.all(d, %s.all(e, %s.all(f, a+b+c+d+e+f > 0)))))) ? 1.0 : 0.0", ten, ten, ten, ten, ten, ten)
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: loops}
spec:
  selector: {matchLabels: {app: big}}
  usages:
  - usage: {cpu: {expression: '` + loops + `'}}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: huge}
spec:
  selector: {matchNames: [` + small[0].Name + `]}
  usages:
  - usage: {memory: {value: "1e300"}}
`)
		accepted(t, "loops", "False spec.usages[0].usage.cpu.expression: CEL expression")
		waitEvent(t, client, "default", "loops", "InvalidUsage", "over the limit of 10000")
		accepted(t, "huge", "False spec.usages[0].usage.memory.value: 1e+300 is more than metrics.k8s.io can carry")
		waitEvent(t, client, "default", "huge", "InvalidUsage", "spec.usages[0].usage.memory.value")
		// Their pods have no metric, at no cost; the others have theirs.
		eventually(t, 30*time.Second, "the two other small pods served, none covered by a refused object", func() error {
			got := served(t)
			if len(got) != 2 || got[small[0].Name] {
				return fmt.Errorf("served %v", got)
			}
			return nil
		})
		e.kubectl("delete", "clusterresourceusage", "loops", "huge")
	})

	t.Run("costly for its pods: cut off within a read, the other pods served", func(t *testing.T) {
		e := e.in(t)
		e.apply(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: costly}
spec:
  selector: {matchLabels: {app: big}}
  usages:
  - usage: {cpu: {expression: 'pod.metadata.annotations.all(a, pod.metadata.annotations.all(b, a != b || a == b)) ? 1.0 : 0.0'}}
`)
		accepted(t, "costly", "True")
		eventually(t, 30*time.Second, "the small pods served, the big ones not", func() error {
			got := served(t)
			for _, p := range small {
				if !got[p.Name] {
					return fmt.Errorf("small pod %s not served: %v", p.Name, got)
				}
			}
			if len(got) != len(small) {
				return fmt.Errorf("%d pods served, want the %d small ones", len(got), len(small))
			}
			return nil
		})
		// One Warning for the object, not one a pod. (Its budget for a read
		// outlasts these 100 pods: TestReadBudgetOfAnObject shows past it.)
		waitEvent(t, client, "default", "costly", "UsageFailed", "cpu: CEL expression ran past its cost limit (10000)")
	})
}
