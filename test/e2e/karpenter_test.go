//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// nodePool is a NodePool of the KWOK provider's on-demand amd64 types,
// limited to 40 CPUs, consolidating as soon as it can, and its node class,
// whose nodes boot in a second.
const nodePool = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata: {name: default}
spec: {nodeRegistrationDelay: 1s}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: "40"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
`

// instanceTypes are a user's own: two sizes, on-demand in two zones.
const instanceTypes = `[
 {"name": "sim-4x", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "4", "memory": "16Gi"},
  "offerings": [
   {"Price": 0.25, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]},
   {"Price": 0.25, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}]}]},
 {"name": "sim-16x", "architecture": "amd64", "operatingSystems": ["linux"], "resources": {"cpu": "16", "memory": "64Gi"},
  "offerings": [
   {"Price": 0.9, "Requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}, {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}
]`

// A cluster made with --autoscaler karpenter grows and shrinks with its
// pods: Karpenter launches NodeClaims of the user's instance types for
// Pending pods, its KWOK provider makes their nodes, which boot in
// 30–60 s of cluster time (here at 10×), the simulator makes them Ready
// and the pods run; Karpenter killed while they boot comes back without
// losing a node or launching one twice; with the pods gone, it
// consolidates the nodes away.
func TestKarpenterLaunchesAndConsolidates(t *testing.T) {
	e := newEnvAlone(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, []byte(strings.Replace(instanceTypes, `"cpu": "4", `, "", 1)))
	e.fails("autoscaler.karpenter.instanceTypes: "+bad+": [0] (sim-4x).resources.cpu: missing",
		"create", "cluster", "--name", "badtypes", "--karpenter-instance-types", bad)
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "badtypes") {
		t.Errorf("a cluster refused for its instance types is listed:\n%s", out)
	}

	types := filepath.Join(dir, "types.json")
	writeFile(t, types, []byte(instanceTypes))
	e.createCluster("elastic", "--karpenter-instance-types", types, "--time-scale", "10")
	pid := e.componentPID("elastic", "karpenter")
	if pid == 0 {
		t.Fatal("no karpenter process")
	}
	// The default boot time, and the small type only, for several nodes.
	e.apply(strings.NewReplacer("spec: {nodeRegistrationDelay: 1s}", "spec: {}",
		"      requirements:\n", "      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [sim-4x]}\n").Replace(nodePool))
	client := e.client()
	claims := watchNodeClaims(t, e)
	d := deployment("burst", 10)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eventually(t, time.Minute, "a node booting: NotReady, tainted, Ready 30–60 s after it was made", func() error {
		nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			if nodeReady(&n) {
				continue
			}
			readyAt, err := time.Parse(time.RFC3339Nano, n.Annotations["kubesim.io/ready-at"])
			if err != nil {
				return fmt.Errorf("node %s: kubesim.io/ready-at: %v", n.Name, err)
			}
			if boot := readyAt.Sub(n.CreationTimestamp.Time); boot < 29*time.Second || boot > 61*time.Second {
				t.Errorf("node %s boots in %s, want 30–60 s", n.Name, boot)
			}
			if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady }) {
				t.Errorf("booting node %s has no not-ready taint: %v", n.Name, n.Spec.Taints)
			}
			return nil
		}
		return fmt.Errorf("none of %d nodes booting", len(nodes.Items))
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "karpenter restarted", func() error {
		if p := e.componentPID("elastic", "karpenter"); p == 0 || p == pid {
			return fmt.Errorf("pid %d", p)
		}
		return nil
	})

	eventually(t, 3*time.Minute, "10 pods Running on Karpenter's nodes of the user's types", func() error {
		pods := runningPods(t, client, "app=burst")
		if len(pods) != 10 {
			return fmt.Errorf("%d of 10 pods Running", len(pods))
		}
		for _, p := range pods {
			n, err := client.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !strings.HasPrefix(n.Spec.ProviderID, "kwok://") || n.Labels["karpenter.sh/nodepool"] != "default" {
				return fmt.Errorf("pod %s on %s (providerID %q, nodepool %q): not a node of the NodePool", p.Name, n.Name, n.Spec.ProviderID, n.Labels["karpenter.sh/nodepool"])
			}
			price := map[string]string{"sim-4x": "0.250000", "sim-16x": "0.900000"}[n.Labels[corev1.LabelInstanceTypeStable]]
			if price == "" || n.Labels["eks-node-viewer/instance-price"] != price {
				return fmt.Errorf("node %s: type %q at %q, not one of the user's", n.Name, n.Labels[corev1.LabelInstanceTypeStable], n.Labels["eks-node-viewer/instance-price"])
			}
		}
		return nil
	})
	launched, deleted := claims()
	if len(launched) < 3 || len(deleted) > 0 {
		t.Fatalf("NodeClaims launched %v, deleted %v: want 3 or more launched and none lost or replaced across the restart", launched, deleted)
	}
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(launched) {
		t.Errorf("%d nodes for %d NodeClaims: a node lost or made twice", len(nodes.Items), len(launched))
	}
	t.Logf("NodeClaims launched: %d", len(launched))

	e.kubectl("scale", "deployment", "burst", "--replicas", "0")
	eventually(t, 3*time.Minute, "the empty nodes consolidated away", func() error {
		nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
		if err != nil {
			return err
		}
		if len(nodes.Items) > 0 {
			return fmt.Errorf("%d nodes left", len(nodes.Items))
		}
		return nil
	})
}

// watchNodeClaims records the NodeClaims made and deleted from now on;
// the function returned says which so far.
func watchNodeClaims(t *testing.T, e *env) func() (launched, deleted []string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(mustConfig(t, e.kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	w, err := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var launched, deleted []string
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			mu.Lock()
			switch ev.Type {
			case watch.Added:
				launched = append(launched, u.GetName())
			case watch.Deleted:
				deleted = append(deleted, u.GetName())
			}
			mu.Unlock()
		}
	}()
	return func() ([]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(launched), slices.Clone(deleted)
	}
}

// A cluster without --autoscaler has no Karpenter: no process, no CRDs.
func TestNoAutoscalerNoKarpenter(t *testing.T) {
	e := newEnv(t)
	e.createCluster("fixed", "--nodes", "1")
	if pid := e.componentPID("fixed", "karpenter"); pid != 0 {
		t.Errorf("a karpenter process (%d) in a cluster without --autoscaler", pid)
	}
	if out := e.kubectl("get", "crd", "-o", "name").stdout; strings.Contains(out, "karpenter") {
		t.Errorf("Karpenter's CRDs in a cluster without --autoscaler:\n%s", out)
	}
	if r := e.run("create", "cluster", "--name", "other", "--autoscaler", "cluster-autoscaler"); r.code == 0 || !strings.Contains(r.stderr, "--autoscaler") {
		t.Errorf("--autoscaler cluster-autoscaler: %s; want a refusal naming the flag", r)
	}
}
