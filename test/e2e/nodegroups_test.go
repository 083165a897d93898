//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeGroups creates a cluster from a Cluster file with two node
// groups, checks their nodes, scales one group and checks that the other
// is left as it was.
func TestNodeGroups(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: worker
  count: 3
  labels: {topology.kubernetes.io/zone: "zone-${index}"}
- name: infra
  count: 2
  labels: {pool: infra}
  capacity: {cpu: "8"}
  taints: [{key: dedicated, value: infra, effect: NoSchedule}]
`))
	e.createCluster("groups", "--config", config)
	client := e.client()
	ctx := context.Background()

	nodes := func() map[string]corev1.Node {
		t.Helper()
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]corev1.Node{}
		for _, n := range list.Items {
			out[n.Name] = n
		}
		return out
	}
	names := func(m map[string]corev1.Node) string {
		var out []string
		for name := range m {
			out = append(out, name)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	before := nodes()
	if got := names(before); got != "infra-0 infra-1 worker-0 worker-1 worker-2" {
		t.Fatalf("nodes: %s, want infra-0 infra-1 worker-0 … worker-2", got)
	}
	for name, n := range before {
		group, _, _ := strings.Cut(name, "-")
		if n.Labels["kubesim.io/node-group"] != group || !nodeReady(&n) {
			t.Errorf("node %s: group label %q, Ready %v; want %s and Ready", name, n.Labels["kubesim.io/node-group"], nodeReady(&n), group)
		}
		infra := group == "infra"
		tainted := slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "dedicated" && t.Effect == corev1.TaintEffectNoSchedule })
		if tainted != infra || (n.Labels["pool"] == "infra") != infra || (n.Status.Allocatable.Cpu().String() == "8") != infra {
			t.Errorf("node %s: taints %v, labels %v, allocatable cpu %s; want the infra group's only on infra nodes",
				name, n.Spec.Taints, n.Labels, n.Status.Allocatable.Cpu())
		}
	}
	if zone := before["worker-2"].Labels["topology.kubernetes.io/zone"]; zone != "zone-2" {
		t.Errorf("worker-2: zone %q, want zone-2 (${index})", zone)
	}

	// --replicas is the group's total: 3 → 5 adds worker-3 and worker-4.
	e.must("scale", "node", "--name", "groups", "--group", "worker", "--replicas", "5")
	after := nodes()
	if got := names(after); got != "infra-0 infra-1 worker-0 worker-1 worker-2 worker-3 worker-4" {
		t.Fatalf("after scaling worker to 5: %s", got)
	}
	if n := after["worker-4"]; n.Labels["topology.kubernetes.io/zone"] != "zone-4" || !nodeReady(&n) {
		t.Errorf("worker-4: labels %v, Ready %v; want zone-4 and Ready", n.Labels, nodeReady(&n))
	}
	for _, name := range []string{"infra-0", "infra-1"} {
		if after[name].UID != before[name].UID || after[name].ResourceVersion == "" {
			t.Errorf("%s was remade while scaling worker", name)
		}
	}
	e.must("scale", "node", "--name", "groups", "--group", "worker", "--replicas", "1")
	eventually(t, 30*time.Second, "worker scaled down to 1", func() error {
		if got := names(nodes()); got != "infra-0 infra-1 worker-0" {
			return fmt.Errorf("nodes: %s", got)
		}
		return nil
	})

	e.fails(`cluster "groups" has no node group "gpu"; its groups are worker, infra`,
		"scale", "node", "--name", "groups", "--group", "gpu", "--replicas", "1")
	e.fails("nodeGroups: set nodeGroups or nodes and nodeTemplate", "create", "cluster", "--name", "both", "--config", config, "--nodes", "2")
}
