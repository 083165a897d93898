//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodePool is a NodePool of the KWOK provider's on-demand amd64 types,
// limited to 40 CPUs, consolidating as soon as it can, and its node class.
const nodePool = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata: {name: default}
spec: {}
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

// A cluster made with --autoscaler karpenter grows and shrinks with its
// pods: Karpenter launches NodeClaims for Pending pods, its KWOK provider
// makes their nodes, the simulator makes them Ready and the pods run; with
// the pods gone, Karpenter consolidates the nodes away.
func TestKarpenterLaunchesAndConsolidates(t *testing.T) {
	e := newEnv(t)
	e.createCluster("elastic", "--autoscaler", "karpenter")
	if pid := e.componentPID("elastic", "karpenter"); pid == 0 {
		t.Fatal("no karpenter process")
	}
	e.apply(nodePool)
	client := e.client()
	d := deployment("burst", 10)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "10 pods Running on Karpenter's nodes", func() error {
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
		}
		return nil
	})
	claims := e.kubectl("get", "nodeclaims", "-o", "name").stdout
	if strings.Count(claims, "nodeclaim") == 0 {
		t.Fatalf("no NodeClaims: %q", claims)
	}
	t.Logf("NodeClaims launched: %d", strings.Count(claims, "nodeclaim"))

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
