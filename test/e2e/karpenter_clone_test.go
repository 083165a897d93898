//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var (
	nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	nodePools  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
)

// A clone of a cluster run by Karpenter, given Karpenter, adopts the
// source's nodes: its NodePools and NodeClaims are the source's, pointed
// at KWOKNodeClasses, each claim is registered on its own cloned node
// (none launched anew, none taken for drifted), and Karpenter
// consolidates them as its own. The source is made to look like a
// cloud's: its export is rewritten as an AWS cluster's would read.
func TestCloneAdoptsKarpenterNodes(t *testing.T) {
	e := newEnv(t)
	e.createCluster("src", "--autoscaler", "karpenter")
	// One type of 4 CPUs, so six pods of one CPU take two nodes and
	// fill them: nothing to consolidate in the source or in a clone.
	e.apply(strings.Replace(nodePool, "      requirements:\n",
		"      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [c-4x-amd64-linux]}\n", 1))
	src := e.client()
	makeDeployment(t, src, "web", 6)
	srcDyn := dynamicFor(t, e, "kubesim-src")
	claims := map[string]string{} // NodeClaim → its node, in the source
	eventually(t, 2*time.Minute, "6 pods Running on initialized NodeClaims' nodes in the source", func() error {
		if n := len(runningPods(t, src, "app=web")); n != 6 {
			return fmt.Errorf("%d of 6 Running", n)
		}
		list, err := srcDyn.Resource(nodeClaims).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		clear(claims)
		for _, c := range list.Items {
			if !conditionTrue(c, "Initialized") {
				return fmt.Errorf("NodeClaim %s not initialized", c.GetName())
			}
			node, _, _ := unstructured.NestedString(c.Object, "status", "nodeName")
			claims[c.GetName()] = node
		}
		if len(claims) < 2 {
			return fmt.Errorf("%d NodeClaims", len(claims))
		}
		return nil
	})

	snap := filepath.Join(t.TempDir(), "src.yaml")
	e.must("snapshot", "export", "--context", "kubesim-src", "--path", snap)
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	aws := strings.NewReplacer("providerID: kwok://", "providerID: aws:///zone-a/i-",
		"group: karpenter.kwok.sh", "group: karpenter.k8s.aws", "kind: KWOKNodeClass", "kind: EC2NodeClass",
		"karpenter.kwok.sh/kwoknodeclass", "karpenter.k8s.aws/ec2nodeclass").Replace(string(data))
	aws = regexp.MustCompile(`(?m)^\s*(kubesim\.io/nodeclaim|kwok\.x-k8s\.io/node|kubesim\.io/ready-at):.*\n`).ReplaceAllString(aws, "")
	if !strings.Contains(aws, "\nkind: NodeClaim\n") || !strings.Contains(aws, "\nkind: NodePool\n") || strings.Contains(aws, "kwok://") {
		t.Fatalf("the export lacks NodePools or NodeClaims, or still has kwok:// nodes:\n%s", aws)
	}
	writeFile(t, snap, []byte(aws))

	// Without Karpenter, a clone says what it left out and how to have it.
	r := e.must("create", "cluster", "--name", "fixed", "--from", snap)
	if out := r.stdout + r.stderr; !strings.Contains(out, "NodePool") || !strings.Contains(out, "clone with --autoscaler karpenter") {
		t.Errorf("a clone without Karpenter does not say its NodePools were left out:\n%s", out)
	}
	e.must("delete", "cluster", "--name", "fixed")

	r = e.must("create", "cluster", "--name", "adopt", "--from", snap, "--autoscaler", "karpenter")
	if out := r.stdout + r.stderr; !strings.Contains(out, fmt.Sprintf("%d nodes adopted by Karpenter", len(claims))) {
		t.Errorf("create does not say it adopted %d nodes:\n%s", len(claims), out)
	}
	e.cluster = "adopt"
	clone := e.client()
	cloneDyn := dynamicFor(t, e, "kubesim-adopt")
	pool, err := cloneDyn.Resource(nodePools).Get(context.Background(), "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := unstructured.NestedStringMap(pool.Object, "spec", "template", "spec", "nodeClassRef"); ref["kind"] != "KWOKNodeClass" || pool.GetAnnotations()["kubesim.io/source-node-class"] != "EC2NodeClass default" {
		t.Errorf("the cloned NodePool's node class: %v, annotations %v", ref, pool.GetAnnotations())
	}
	eventually(t, 2*time.Minute, "each NodeClaim registered on its own cloned node, initialized, and looked at for disruption", func() error {
		list, err := cloneDyn.Resource(nodeClaims).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != len(claims) {
			return fmt.Errorf("%d NodeClaims, want the source's %d", len(list.Items), len(claims))
		}
		for _, c := range list.Items {
			node, _, _ := unstructured.NestedString(c.Object, "status", "nodeName")
			if want, ok := claims[c.GetName()]; !ok || node != want {
				return fmt.Errorf("NodeClaim %s on node %q, want the source's %q", c.GetName(), node, want)
			}
			if !conditionTrue(c, "Initialized") || condition(c, "Consolidatable") == nil {
				return fmt.Errorf("NodeClaim %s: conditions %v", c.GetName(), conditionTypes(c))
			}
			if conditionTrue(c, "Drifted") {
				t.Errorf("NodeClaim %s taken for drifted: %v", c.GetName(), condition(c, "Drifted"))
			}
		}
		return nil
	})
	nodes, err := clone.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
		if n.Spec.ProviderID != "kwok://"+n.Name {
			t.Errorf("adopted node %s: providerID %q", n.Name, n.Spec.ProviderID)
		}
	}
	for _, node := range claims {
		want = append(want, node)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the clone's NodePool has nodes %v, the source's %v", names, want)
	}

	e.kubectl("scale", "deployment", "web", "--replicas", "0")
	eventually(t, 3*time.Minute, "the adopted nodes consolidated away once empty", func() error {
		nodes, err := clone.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
		if err != nil {
			return err
		}
		if len(nodes.Items) > 0 {
			return fmt.Errorf("%d nodes left", len(nodes.Items))
		}
		return nil
	})
}

func dynamicFor(t *testing.T, e *env, context string) dynamic.Interface {
	t.Helper()
	cfg := contextConfig(t, e.kubeconfig, context)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// condition is the status condition of type typ of a custom object.
func condition(obj unstructured.Unstructured, typ string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == typ {
			return c
		}
	}
	return nil
}

func conditionTrue(obj unstructured.Unstructured, typ string) bool {
	c := condition(obj, typ)
	return c != nil && c["status"] == "True"
}

func conditionTypes(obj unstructured.Unstructured) []string {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var types []string
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok {
			types = append(types, fmt.Sprintf("%v=%v", c["type"], c["status"]))
		}
	}
	return types
}
