package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// waitCloned returns once every cloned node is Ready and every pod
// cloned onto one of them Running, whatever else the cluster holds, and
// says how far it got if they are not within the wait. Pods not on a
// cloned node are not waited for, but named with why they do not run.
func TestWaitCloned(t *testing.T) {
	object := func(kind, ns, name, node string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		if node != "" {
			_ = unstructured.SetNestedField(u.Object, node, "spec", "nodeName")
		}
		return u
	}
	objects := []*unstructured.Unstructured{object("Node", "", "n1", ""), object("Pod", "shop", "web-0", "n1"), object("Pod", "shop", "report-0", "n1")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	pod := func(name string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: phase}}
	}
	other := pod("not-cloned", corev1.PodPending)
	logf := func(string, ...any) {}

	client := fake.NewClientset(node, pod("web-0", corev1.PodRunning), pod("report-0", corev1.PodSucceeded), other)
	if err := waitCloned(context.Background(), client, objects, 10*time.Second, "", logf); err != nil {
		t.Errorf("all there: %v", err)
	}

	// Running later: seen through the watch.
	client = fake.NewClientset(node, pod("web-0", corev1.PodPending), pod("report-0", corev1.PodRunning))
	go func() {
		time.Sleep(300 * time.Millisecond) // the change to observe, not a synchronisation
		_, _ = client.CoreV1().Pods("shop").UpdateStatus(context.Background(), pod("web-0", corev1.PodRunning), metav1.UpdateOptions{})
	}()
	if err := waitCloned(context.Background(), client, objects, 10*time.Second, "", logf); err != nil {
		t.Errorf("a pod Running later: %v", err)
	}

	client = fake.NewClientset(node, pod("web-0", corev1.PodPending), other)
	err := waitCloned(context.Background(), client, objects, time.Second, "; see the logs", logf)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 cloned nodes Ready and 0 of 2 cloned pods Running after 1s (pod shop/web-0 on node n1 is Pending); see the logs") {
		t.Errorf("a pod Pending, one missing: %v", err)
	}

	// Unbound in the snapshot (Pending in the source), or on a node it
	// lacks: not waited for, and named with why.
	unbound, orphan := pod("batch-0", corev1.PodPending), pod("orphan-0", corev1.PodPending)
	unbound.Spec.NodeName, orphan.Spec.NodeName = "", "gone"
	unbound.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available: 1 Insufficient cpu."}}
	objects = append(objects, object("Pod", "shop", "batch-0", ""), object("Pod", "shop", "orphan-0", "gone"))
	client = fake.NewClientset(node, pod("web-0", corev1.PodRunning), pod("report-0", corev1.PodRunning), unbound, orphan)
	var out strings.Builder
	logTo := func(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }
	if err := waitCloned(context.Background(), client, objects, 10*time.Second, "", logTo); err != nil {
		t.Errorf("pods that cannot run: %v", err)
	}
	want := ` ! 2 of 4 cloned pods not Running (only pods on the snapshot's nodes are waited for):
     shop/batch-0: Pending, as in the source: 0/1 nodes are available: 1 Insufficient cpu.
     shop/orphan-0: bound to node "gone", which is not in the snapshot
`
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("pods that cannot run, said:\n%s\nwant at the end:\n%s", out.String(), want)
	}

	// A node stopped in the source stays stopped: neither it nor its pod
	// is waited for, and both are named.
	stopped := object("Node", "", "n2", "")
	stopped.SetLabels(map[string]string{"kubesim.io/node-stopped": "true"})
	onStopped := pod("db-0", corev1.PodPending)
	onStopped.Spec.NodeName = "n2"
	objects = []*unstructured.Unstructured{object("Node", "", "n1", ""), stopped, object("Pod", "shop", "web-0", "n1"), object("Pod", "shop", "db-0", "n2")}
	client = fake.NewClientset(node, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, pod("web-0", corev1.PodRunning), onStopped)
	out.Reset()
	if err := waitCloned(context.Background(), client, objects, 10*time.Second, "", logTo); err != nil {
		t.Errorf("a stopped node: %v", err)
	}
	for _, line := range []string{"1 cloned nodes are held NotReady by their labels, as in the source", "n2", `shop/db-0: on node "n2", held NotReady as in the source`} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("a stopped node: the clone said\n%s\nwithout %q", out.String(), line)
		}
	}
}

// A clone whose create ended before it was whole (its pod controllers
// still held, no command working on it) is listed broken, running or not,
// and start refuses it saying what to do; while a create holds it, it is
// not broken.
func TestInterruptedCloneIsBroken(t *testing.T) {
	p, _ := testProvider(t)
	d := newTestCluster(t, p, "blue")
	status := func() string {
		infos, err := p.List()
		if err != nil || len(infos) != 1 {
			t.Fatalf("list: %v %v", infos, err)
		}
		return infos[0].Status + " " + infos[0].Cause
	}
	if got := status(); got != "stopped " {
		t.Errorf("a cluster: %q", got)
	}
	if err := os.WriteFile(controlplane.PodControllersHeldFile(d), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err := p.lockOperation(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "stopped " {
		t.Errorf("a clone loading: %q", got)
	}
	unlock()
	if got := status(); got != "broken "+interruptedCause {
		t.Errorf("an interrupted clone: %q", got)
	}
	err = p.Start(context.Background(), "blue", time.Second)
	if err == nil || err.Error() != `cluster "blue" is broken (`+interruptedCause+`): kubesim delete cluster --name blue` {
		t.Errorf("start of an interrupted clone: %v", err)
	}
}

// Cloned nodes get the pod CIDRs the controller-manager would give them,
// in order, keeping one a node has; a subnet too small is refused in one
// line naming the field.
func TestAssignPodCIDRs(t *testing.T) {
	node := func(name, cidr string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Node", "metadata": map[string]any{"name": name}}}
		if cidr != "" {
			_ = unstructured.SetNestedField(u.Object, cidr, "spec", "podCIDR")
		}
		return u
	}
	pod := &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "p"}}}
	objects := []*unstructured.Unstructured{node("a", ""), pod, node("b", "10.9.0.0/24"), node("c", "")}
	if err := assignPodCIDRs(objects, "10.0.0.0/16", 22); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{0: "10.0.0.0/22", 2: "10.9.0.0/24", 3: "10.0.4.0/22"} {
		got, _, _ := unstructured.NestedString(objects[i].Object, "spec", "podCIDR")
		if got != want {
			t.Errorf("%s: podCIDR %q, want %q", objects[i].GetName(), got, want)
		}
	}
	if cidrs, _, _ := unstructured.NestedStringSlice(objects[3].Object, "spec", "podCIDRs"); len(cidrs) != 1 || cidrs[0] != "10.0.4.0/22" {
		t.Errorf("c: podCIDRs %v", cidrs)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(pod.Object, "spec"); found {
		t.Error("a pod was given a pod CIDR")
	}
	err := assignPodCIDRs([]*unstructured.Unstructured{node("a", ""), node("b", "")}, "10.0.0.0/22", 22)
	if err == nil || !strings.HasPrefix(err.Error(), "networking.podSubnet: 10.0.0.0/22 holds 1 /22 node CIDRs") {
		t.Errorf("too small a subnet: %v", err)
	}
}
