//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestCloneNamespaces: `snapshot export -n shop` copies the namespace shop
// (its Deployment's pods, and a CronJob) and nothing of another namespace;
// its clone has the CronJob as it was and every pod of shop on its node,
// Running, and no namespace other.
func TestCloneNamespaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createCluster("src", "--nodes", "2")
	e.apply(`apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 3 1 1 *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: report, image: busybox}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: other}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: nginx}]}
`)
	src := contextClient(t, e.kubeconfig, "kubesim-src")
	eventually(t, 2*time.Minute, "the source's pods Running", func() error {
		for ns, n := range map[string]int{"shop": 3, "other": 2} {
			if err := runningIn(ctx, src, ns, n); err != nil {
				return err
			}
		}
		return nil
	})
	placement := map[string]string{}
	for pod, node := range podPlacement(t, src) {
		if strings.HasPrefix(pod, "shop/") {
			placement[pod] = node
		}
	}

	snap := filepath.Join(t.TempDir(), "shop.yaml")
	e.must("snapshot", "export", "--context", "kubesim-src", "--path", snap, "-n", "shop")
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"namespace: other", "name: other\n", "name: api"} {
		if strings.Contains(string(data), absent) {
			t.Errorf("the export of -n shop holds %q", absent)
		}
	}
	if !strings.Contains(string(data), "\nkind: CronJob\n") {
		t.Error("the export of -n shop holds no CronJob")
	}

	e.createCluster("what-if", "--from", snap)
	clone := contextClient(t, e.kubeconfig, "kubesim-what-if")
	cron, err := clone.BatchV1().CronJobs("shop").Get(ctx, "report", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cron.Spec.Schedule != "0 3 1 1 *" || len(cron.Spec.JobTemplate.Spec.Template.Spec.Containers) != 1 {
		t.Errorf("the clone's CronJob: schedule %q, containers %v", cron.Spec.Schedule, cron.Spec.JobTemplate.Spec.Template.Spec.Containers)
	}
	if _, err := clone.CoreV1().Namespaces().Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace other in the clone: %v, want not found", err)
	}
	got := podPlacement(t, clone)
	if fmt.Sprint(got) != fmt.Sprint(placement) {
		t.Errorf("the clone's pods and nodes\n%v\nthe source's in shop\n%v", got, placement)
	}
	if err := runningIn(ctx, clone, "shop", len(placement)); err != nil {
		t.Errorf("the clone: %v", err)
	}
}

// runningIn says why namespace ns has not exactly n pods, all Running.
func runningIn(ctx context.Context, c kubernetes.Interface, ns string, n int) error {
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(pods.Items) != n {
		return fmt.Errorf("%d pods in %s, want %d", len(pods.Items), ns, n)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s/%s is %s", ns, p.Name, p.Status.Phase)
		}
	}
	return nil
}

// TestCloneAllocatedClaims: pods holding allocated ResourceClaims (two
// made from a template, one named directly) are cloned Running on their
// nodes, each claim with the device it has in the source, reserved for
// the same pod, and no claim made anew.
func TestCloneAllocatedClaims(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(twoGPUNodes))
	e.createCluster("src", "--config", config)
	e.apply(gpuDeployment("infer", "infer", "server", 2) + `---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: direct}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.kubesim.io}}]
---
apiVersion: v1
kind: Pod
metadata: {name: direct, labels: {app: direct}}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: direct}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
`)
	src := contextClient(t, e.kubeconfig, "kubesim-src")
	ctx := context.Background()
	eventually(t, 90*time.Second, "the source's 3 pods Running", func() error { return runningIn(ctx, src, "default", 3) })
	placement, claims := podPlacement(t, src), claimsOf(t, src)
	if len(claims) != 3 {
		t.Fatalf("the source has claims %v, want 3", claims)
	}

	snap := filepath.Join(t.TempDir(), "gpus.yaml")
	e.must("snapshot", "export", "--context", "kubesim-src", "--path", snap)
	e.createCluster("what-if", "--from", snap)
	clone := contextClient(t, e.kubeconfig, "kubesim-what-if")
	if err := runningIn(ctx, clone, "default", 3); err != nil {
		t.Errorf("the clone: %v", err)
	}
	if got := podPlacement(t, clone); fmt.Sprint(got) != fmt.Sprint(placement) {
		t.Errorf("the clone's pods and nodes\n%v\nthe source's\n%v", got, placement)
	}
	// The claim controller, let go, finds each pod's claim: none made
	// anew, each pod's status naming its own.
	eventually(t, 30*time.Second, "the clone's claims as the source's", func() error {
		if got := claimsOf(t, clone); fmt.Sprint(got) != fmt.Sprint(claims) {
			return fmt.Errorf("claim → device and pods\n%v\nthe source's\n%v", got, claims)
		}
		pods, err := clone.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=infer"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if len(p.Status.ResourceClaimStatuses) != 1 || claims[*p.Status.ResourceClaimStatuses[0].ResourceClaimName] == "" {
				return fmt.Errorf("pod %s: claim statuses %v", p.Name, p.Status.ResourceClaimStatuses)
			}
		}
		return nil
	})
}

// claimsOf is each claim in default: its allocated devices (pool/device)
// and the pods it is reserved for.
func claimsOf(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	claims, err := c.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, claim := range claims.Items {
		var s []string
		if a := claim.Status.Allocation; a != nil {
			for _, r := range a.Devices.Results {
				s = append(s, r.Pool+"/"+r.Device)
			}
		}
		for _, r := range claim.Status.ReservedFor {
			s = append(s, "for "+r.Resource+"/"+r.Name)
		}
		out[claim.Name] = strings.Join(s, " ")
	}
	return out
}
