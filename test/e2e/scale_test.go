//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParallelScales runs several `kubesim scale node` on one cluster at
// once, twice over. They take turns: each succeeds (one that waited says
// so, naming the other command, never the kubelet simulator), and the
// cluster ends with one of the counts asked for, every one of its nodes
// Ready. (Before scales took the operation lock, one whose nodes another
// deleted waited its whole --wait and blamed the kubelet simulator.)
func TestParallelScales(t *testing.T) {
	e := newEnvAlone(t)
	e.createCluster("crowd", "--nodes", "1")
	for _, requested := range [][]int{{6, 2, 5, 0, 4}, {1, 7, 0, 3, 5}} {
		results := make([]result, len(requested))
		var wg sync.WaitGroup
		for i, n := range requested {
			wg.Go(func() {
				results[i] = e.run("scale", "node", "--name", "crowd", "--replicas", strconv.Itoa(n), "--wait", "60s")
			})
		}
		wg.Wait()
		waited := 0
		for i, r := range results {
			if r.code != 0 {
				t.Errorf("scale node --replicas %d of %v: %s", requested[i], requested, r)
			}
			if strings.Contains(r.stderr, "kubelet simulator") {
				t.Errorf("scale node --replicas %d of %v blames the kubelet simulator: %s", requested[i], requested, r)
			}
			if strings.Contains(r.stderr, `Waiting for another kubesim command working on cluster "crowd"`) {
				waited++
			}
		}
		if waited == 0 {
			t.Errorf("none of the scales to %v at once says it waited for another", requested)
		}
		checkScaledTo(t, e, requested)
	}
}

// checkScaledTo checks that the cluster has node-000000 … node-<n-1>, all
// Ready, for an n of requested.
func checkScaledTo(t *testing.T, e *env, requested []int) {
	t.Helper()
	nodes, err := e.client().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(nodes.Items)
	if !slices.Contains(requested, n) {
		t.Fatalf("%d nodes after scales to %v", n, requested)
	}
	for i := range n {
		name := fmt.Sprintf("node-%06d", i)
		if !slices.ContainsFunc(nodes.Items, func(node corev1.Node) bool { return node.Name == name }) {
			t.Errorf("%s missing of %d nodes", name, n)
		}
	}
	if r := e.must("kubectl", "--name", "crowd", "get", "nodes", "--no-headers"); strings.Contains(r.stdout, "NotReady") {
		t.Errorf("nodes not Ready after scales to %v:\n%s", requested, r.stdout)
	}
}
