//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pricedPool is a NodePool whose nodes boot in a second (the default is a
// real boot time, too long for CI) and go as soon as they are empty.
const pricedPool = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata: {name: quick}
spec: {nodeRegistrationDelay: 1s}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: priced}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: quick}
      expireAfter: Never
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  limits: {cpu: "20"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
`

// costReport is `kubesim get cost -o json` as a program reads it.
type costReport struct {
	Time      time.Time  `json:"time"`
	NodePools []poolCost `json:"nodePools"`
	Total     poolCost   `json:"total"`
}

type poolCost struct {
	NodePool    string  `json:"nodePool"`
	Nodes       int     `json:"nodes"`
	Launched    int     `json:"launched"`
	NodeHours   float64 `json:"nodeHours"`
	Cost        float64 `json:"cost"`
	CostPerHour float64 `json:"costPerHour"`
}

// A NodePool's nodes are costed from their price labels over their lives,
// in the cluster's time: while they run, what they cost grows; once
// Karpenter has removed them, what they cost stays.
func TestKarpenterCostPerNodePool(t *testing.T) {
	e := newEnvAlone(t)
	// On a clock 10× real time: node-hours are the cluster's hours, and
	// they add up ten times as fast.
	e.createCluster("costly", "--autoscaler", "karpenter", "--time-scale", "10")
	e.apply(pricedPool)
	client := e.client()
	ctx := context.Background()
	d := deployment("priced", 3)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "3 pods Running", func() error {
		if n := len(runningPods(t, client, "app=priced")); n != 3 {
			return fmt.Errorf("%d of 3 pods Running", n)
		}
		return nil
	})

	getCost := func() (costReport, poolCost, error) {
		t.Helper()
		var r costReport
		out := e.must("get", "cost", "--name", "costly", "-o", "json").stdout
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("get cost -o json: %v\n%s", err, out)
		}
		for _, p := range r.NodePools {
			if p.NodePool == "priced" {
				return r, p, nil
			}
		}
		return r, poolCost{}, fmt.Errorf("get cost: no NodePool priced in %+v", r)
	}

	// While the nodes run: get cost agrees with the nodes there and their
	// price labels. Karpenter may replace a node meanwhile, so compare once
	// the nodes are the same before and after.
	var running poolCost
	eventually(t, 30*time.Second, "get cost agrees with the NodePool's nodes", func() error {
		before := poolNodes(t, e)
		r, p, err := getCost()
		if err != nil {
			return err
		}
		if after := poolNodes(t, e); nodeNames(after) != nodeNames(before) {
			return fmt.Errorf("the nodes changed meanwhile: %s, then %s", nodeNames(before), nodeNames(after))
		}
		if p.Nodes != len(before) || p.Launched < p.Nodes || p.Launched < 1 {
			return fmt.Errorf("get cost: %+v; the NodePool has %d nodes", p, len(before))
		}
		var perHour, sinceCreated float64 // of the nodes there, from their labels
		for _, n := range before {
			price, err := strconv.ParseFloat(n.Labels["eks-node-viewer/instance-price"], 64)
			if err != nil || price <= 0 {
				return fmt.Errorf("node %s has no price label: %v", n.Name, n.Labels)
			}
			if r.Time.Before(n.CreationTimestamp.Time) {
				return fmt.Errorf("get cost's time %s is before node %s was made (%s): not the cluster's clock", r.Time, n.Name, n.CreationTimestamp)
			}
			perHour += price
			sinceCreated += price * r.Time.Sub(n.CreationTimestamp.Time).Hours()
		}
		if math.Abs(p.CostPerHour-perHour) > 1e-6 {
			return fmt.Errorf("COST/H %v, the nodes' prices add up to %v", p.CostPerHour, perHour)
		}
		// The nodes there cost their price since they were made; nodes
		// replaced before them add their own.
		if p.Cost <= 0 || p.Cost < sinceCreated-1e-9 || (p.Launched == p.Nodes && math.Abs(p.Cost-sinceCreated) > 1e-9) {
			return fmt.Errorf("COST %v; the nodes there have cost %v since they were made (%d launched)", p.Cost, sinceCreated, p.Launched)
		}
		running = p
		return nil
	})
	if r := e.must("get", "cost", "--name", "costly"); !strings.Contains(r.stdout, "priced") || !strings.Contains(r.stdout, "TOTAL") || !strings.Contains(r.stdout, "not a bill") {
		t.Errorf("get cost's table: %s", r)
	}
	if info, err := os.Stat(filepath.Join(e.clusterDir("costly"), "nodes.jsonl")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the ledger: %v, %v; want a file of mode 0600", info, err)
	}

	// Scaled to nothing, Karpenter removes the nodes; their cost stays.
	e.kubectl("scale", "deployment", "priced", "--replicas", "0")
	eventually(t, 90*time.Second, "the empty nodes removed", func() error {
		if n := len(poolNodes(t, e)); n > 0 {
			return fmt.Errorf("%d nodes left", n)
		}
		return nil
	})
	_, gone, err := getCost()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("get cost while the nodes ran: %+v; once gone: %+v", running, gone)
	if gone.Nodes != 0 || gone.CostPerHour != 0 || gone.Launched < running.Launched ||
		gone.NodeHours < running.NodeHours || gone.Cost < running.Cost || gone.Cost <= 0 {
		t.Errorf("get cost once the nodes are gone: %+v; want no nodes, and no less than while they ran: %+v", gone, running)
	}
	if _, later, _ := getCost(); later != gone {
		t.Errorf("get cost with no nodes changed from %+v to %+v", gone, later)
	}
}

// poolNodes are the nodes of the NodePool priced.
func poolNodes(t *testing.T, e *env) []corev1.Node {
	t.Helper()
	nodes, err := e.client().CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=priced"})
	if err != nil {
		t.Fatal(err)
	}
	return nodes.Items
}

func nodeNames(nodes []corev1.Node) string {
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return strings.Join(names, ",")
}
