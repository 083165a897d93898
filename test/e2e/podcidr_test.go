//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodCIDRSizing: node CIDRs are sized to the pods the nodes declare
// (1,500: a /21), node counts the pod subnet cannot hold are refused at
// create and at scale with one line, and a node declaring more pods than
// its CIDR holds gets a Warning Event naming --node-cidr-mask-size.
func TestPodCIDRSizing(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()

	// A /23 holds no /22, the smallest node CIDR.
	e.fails("networking.podSubnet: 10.244.0.0/23 is smaller than one of the cluster's /22 node CIDRs (1022 pods each); give a /22 or larger (--pod-subnet)",
		"create", "cluster", "--name", "small", "--nodes", "4", "--pod-subnet", "10.244.0.0/23")
	e.fails("networking.podSubnet: 10.244.0.0/21 holds 2 /22 node CIDRs (1022 pods each), fewer than the 4 nodes; give a larger --pod-subnet (a /20 holds them) or fewer nodes",
		"create", "cluster", "--name", "small", "--nodes", "4", "--pod-subnet", "10.244.0.0/21")

	// pods: 1500 needs a /21 (2,046 addresses); a /20 holds two of them.
	config := filepath.Join(dir, "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
networking:
  podSubnet: 10.244.0.0/20
nodeGroups:
- name: dense
  count: 1
  capacity: {pods: "1500"}
`))
	e.createCluster("cidr", "--config", config)
	client := e.client()
	ctx := context.Background()

	dense, err := client.CoreV1().Nodes().Get(ctx, "dense-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, cidr, err := net.ParseCIDR(dense.Spec.PodCIDR)
	if err != nil {
		t.Fatalf("dense-0 podCIDR %q: %v", dense.Spec.PodCIDR, err)
	}
	if ones, _ := cidr.Mask.Size(); ones != 21 {
		t.Errorf("dense-0 (pods: 1500) got podCIDR %s, want a /21", cidr)
	}
	const n = 50
	for i := range n {
		p := testPod(fmt.Sprintf("dense-%d", i))
		p.Labels = map[string]string{"app": "dense"}
		p.Spec.NodeName = "dense-0"
		createPod(t, client, p)
	}
	eventually(t, 2*time.Minute, "50 pods on dense-0 Running", func() error {
		if got := len(runningPods(t, client, "app=dense")); got != n {
			return fmt.Errorf("%d Running", got)
		}
		return nil
	})
	checkPodIPs(t, client, "app=dense")

	// A node declaring 5,000 pods gets the other /21: a Warning Event.
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, []byte(`apiVersion: v1
kind: Node
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "5000"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "5000"}
`))
	e.must("scale", "node", "--name", "cidr", "--replicas", "1", "--template", big)
	waitEvent(t, client, "default", "node-000000", "PodCIDRTooSmall",
		"node node-000000 declares pods: 5000 but its podCIDR 10.244.")
	waitEvent(t, client, "default", "node-000000", "PodCIDRTooSmall", "holds 2046 pod addresses")
	waitEvent(t, client, "default", "node-000000", "PodCIDRTooSmall", "--node-cidr-mask-size")

	// Both /21s are taken: one more node is refused, before any is made.
	e.fails(`--replicas: 2 would give cluster "cidr" 3 nodes, more than the 2 /21 node CIDRs its networking.podSubnet 10.244.0.0/20 holds; give this group at most 1`,
		"scale", "node", "--name", "cidr", "--group", "dense", "--replicas", "2")
	if _, err := client.CoreV1().Nodes().Get(ctx, "dense-1", metav1.GetOptions{}); err == nil {
		t.Error("dense-1 was made by a refused scale")
	}
}
