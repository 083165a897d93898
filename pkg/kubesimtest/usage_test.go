package kubesimtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// SetUsage changes what metrics.k8s.io reports for the pods it selects,
// replaces its own usage when called again, and fails the test in one line
// on bad input.
func TestSetUsage(t *testing.T) {
	t.Parallel()
	c, ns := Shared(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	for _, name := range []string{"web", "db"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// waitUsage waits until the pod's metrics say cpu and memory.
	waitUsage := func(pod, cpu, memory string) {
		t.Helper()
		var got map[string]resource.Quantity
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", ns, "pods", pod).DoRaw(ctx)
			if err != nil {
				return false, nil
			}
			var m struct {
				Containers []struct {
					Usage map[string]resource.Quantity `json:"usage"`
				} `json:"containers"`
			}
			if json.Unmarshal(raw, &m) != nil || len(m.Containers) != 1 {
				return false, nil
			}
			got = m.Containers[0].Usage
			c, mem := got["cpu"], got["memory"]
			return c.Cmp(resource.MustParse(cpu)) == 0 && mem.Cmp(resource.MustParse(memory)) == 0, nil
		})
		if err != nil {
			t.Fatalf("pod %s: metrics %v, want cpu %s memory %s", pod, got, cpu, memory)
		}
	}

	c.SetUsage(ns, "app=web", "900m", "200Mi")
	waitUsage("web", "900m", "200Mi")
	waitUsage("db", "100m", "1Mi") // not selected: half its request; no memory request: 1Mi

	c.SetUsage(ns, "app=web", `Quantity("250m") * 2.0`, "")
	waitUsage("web", "500m", "1Mi")
	dyn := dynamic.NewForConfigOrDie(c.Config())
	list, err := dyn.Resource(kwokv1alpha1.ClusterResourceUsagesResource).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubesimtest"})
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, u := range list.Items {
		if strings.Contains(u.GetName(), ns) {
			mine = append(mine, u.GetName())
		}
	}
	if len(mine) != 1 {
		t.Errorf("ClusterResourceUsages of SetUsage(%s, app=web): %v; want one, replaced", ns, mine)
	}

	for _, tc := range []struct{ selector, cpu, memory, want string }{
		{"app in (web", "1", "", "selector: "},
		{"app=web", "", "", "give cpu or memory"},
		{"app=web", "-1", "", "cpu: -1 is negative"},
		{"app=web", "", "Quantity(", "spec.usages[0].usage.memory.expression"},
	} {
		f := &fakeT{TB: t}
		bad := *c
		bad.t = f
		f.within(func() {
			bad.SetUsage(ns, tc.selector, tc.cpu, tc.memory)
			t.Errorf("SetUsage(%q, %q, %q) returned; want it to fail with %q", tc.selector, tc.cpu, tc.memory, tc.want)
		})
		msg := strings.TrimSpace(f.out.String())
		if !f.failed || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("SetUsage(%q, %q, %q) failed with %q; want one line containing %q", tc.selector, tc.cpu, tc.memory, msg, tc.want)
		}
	}
}
