//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/internal/explain"
)

const zoneKey = "topology.kubernetes.io/zone"

// TestExplain asks the scheduler's own records why pods went where they
// did: six nodes in zones a, a, b, b, c, c, node-000000 tainted.
func TestExplain(t *testing.T) {
	e := newEnv(t)
	e.createCluster("why", "--nodes", "6")
	client := e.client()
	for i, zone := range []string{"a", "a", "b", "b", "c", "c"} {
		e.kubectl("label", "node", fmt.Sprintf("node-%06d", i), zoneKey+"="+zone)
	}
	e.kubectl("taint", "node", "node-000000", "dedicated=db:NoSchedule")

	t.Run("taint", func(t *testing.T) {
		createPod(t, client, testPod("plain"))
		waitScheduled(t, client, "plain")
		x := e.in(t).explainJSON("plain")
		for _, n := range x.Nodes {
			rejected := n.Filter == explain.Rejected && n.Plugin == "TaintToleration"
			if rejected != (n.Name == "node-000000") {
				t.Errorf("node %s: %s by %q, want TaintToleration's reject on node-000000 alone", n.Name, n.Filter, n.Plugin)
			}
		}
		checkChosenBest(t, x)
	})

	t.Run("spread", func(t *testing.T) {
		// One app=s pod each in zones a and b: one more may only go to c.
		for name, node := range map[string]string{"s-a": "node-000001", "s-b": "node-000002"} {
			p := labelledPod(name, map[string]string{"app": "s"})
			p.Spec.NodeName = node
			createPod(t, client, p)
		}
		p := labelledPod("spread", map[string]string{"app": "s"})
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "s"}},
		}}
		createPod(t, client, p)
		waitScheduled(t, client, "spread")
		x := e.in(t).explainJSON("spread")
		want := map[string]string{"node-000000": "TaintToleration", "node-000001": "PodTopologySpread",
			"node-000002": "PodTopologySpread", "node-000003": "PodTopologySpread"}
		for _, n := range x.Nodes {
			if n.Plugin != want[n.Name] {
				t.Errorf("node %s: rejected by %q, want %q", n.Name, n.Plugin, want[n.Name])
			}
		}
		if x.Node != "node-000004" && x.Node != "node-000005" {
			t.Errorf("chosen %s, want a node of zone c", x.Node)
		}
		checkChosenBest(t, x)
	})

	t.Run("bound directly", func(t *testing.T) {
		// s-a was made with spec.nodeName: the scheduler never saw it.
		r := e.in(t).must("explain", "pod", "s-a", "--name", "why")
		if !strings.Contains(r.stdout, "on node-000001, bound directly") || !strings.Contains(r.stdout, "never went through the scheduler") {
			t.Errorf("explain of a pod bound by spec.nodeName:\n%s", r)
		}
		if x := e.in(t).explainJSON("s-a"); x.Result != explain.BoundDirectly || x.Node != "node-000001" {
			t.Errorf("-o json: result %s on %q, want BoundDirectly on node-000001", x.Result, x.Node)
		}
	})

	t.Run("pending", func(t *testing.T) {
		p := testPod("nowhere")
		p.Spec.NodeSelector = map[string]string{"disk": "none-has-it"}
		createPod(t, client, p)
		waitEvent(t, client, "default", "nowhere", "FailedScheduling", "node")
		x := e.in(t).explainJSON("nowhere")
		if x.Result != explain.Unschedulable || !strings.Contains(x.Message, "preemption") {
			t.Errorf("result %s, message %q; want Unschedulable with preemption's verdict", x.Result, x.Message)
		}
		if len(x.Nodes) != 6 {
			t.Fatalf("%d nodes explained, want 6", len(x.Nodes))
		}
		for _, n := range x.Nodes {
			if n.Filter != explain.Rejected || n.Plugin == "" || len(n.Reasons) == 0 {
				t.Errorf("node %s: %s by %q %v; want a plugin and a reason", n.Name, n.Filter, n.Plugin, n.Reasons)
			}
		}
		table := e.in(t).must("explain", "pod", "nowhere", "--name", "why").stdout
		if !strings.Contains(table, "NodeAffinity: node(s) didn't match") || !strings.Contains(table, "TaintToleration") {
			t.Errorf("table lacks the plugins' reasons:\n%s", table)
		}
	})

	t.Run("node and deployment", func(t *testing.T) {
		out := e.in(t).must("explain", "pod", "plain", "--name", "why", "--node", "node-000000").stdout
		if !strings.Contains(out, "node-000000 was ruled out (Rejected) by TaintToleration") {
			t.Errorf("--node node-000000:\n%s", out)
		}
		e.apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`)
		waitPods(t, client, "app=web", 3)
		out = e.in(t).must("explain", "deployment", "web", "--name", "why").stdout
		if strings.Count(out, "Scheduled") != 3 || !strings.Contains(out, "TaintToleration") {
			t.Errorf("deployment summary: want 3 scheduled pods and TaintToleration's rejects:\n%s", out)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		e := e.in(t)
		e.fails(`pod "ghost" not found in namespace "default"`, "explain", "pod", "ghost", "--name", "why")
		gated := testPod("gated")
		gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		createPod(t, client, gated)
		e.fails("has not been through a scheduling attempt yet", "explain", "pod", "gated", "--name", "why")
		e.fails(`--node: no node "node-999999"`, "explain", "pod", "plain", "--name", "why", "--node", "node-999999")

		pid := e.componentPID("why", "kube-scheduler")
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		e.fails("does not answer", "explain", "pod", "plain", "--name", "why")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "a new scheduler", func() error {
			if p := e.componentPID("why", "kube-scheduler"); p == 0 || p == pid {
				return fmt.Errorf("scheduler pid %d", p)
			}
			r := e.run("explain", "pod", "plain", "--name", "why")
			if !strings.Contains(r.stderr, "holds no record") {
				return fmt.Errorf("%s", r)
			}
			return nil
		})
		r := e.fails("holds no record of pod default/plain", "explain", "pod", "plain", "--name", "why")
		if !strings.Contains(r.stderr, "events are above") || !strings.Contains(r.stdout, "Scheduled  Successfully assigned default/plain") {
			t.Errorf("no record: want the pod's scheduling events shown instead: %s", r)
		}
	})
}

// TestExplainThousandNodes: an explanation holds every node of a big
// cluster, the ones percentageOfNodesToScore spared included.
func TestExplainThousandNodes(t *testing.T) {
	e := newEnv(t)
	e.createCluster("big", "--nodes", "1000")
	client := e.client()
	createPod(t, client, testPod("one"))
	waitScheduled(t, client, "one")
	x := e.explainJSON("one")
	c := x.Counts()
	if len(x.Nodes) != 1000 || c[explain.Passed]+c[explain.NotEvaluated] != 1000 || c[explain.NotEvaluated] == 0 {
		t.Fatalf("%d nodes explained (%v), want all 1000, some not evaluated", len(x.Nodes), c)
	}
	checkChosenBest(t, x)
}

func (e *env) explainJSON(pod string) *explain.Explanation {
	e.t.Helper()
	out := e.must("explain", "pod", pod, "--name", e.cluster, "-o", "json").stdout
	x := &explain.Explanation{}
	if err := json.Unmarshal([]byte(out), x); err != nil {
		e.t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	return x
}

// checkChosenBest: the chosen node was scored, and no evaluated node
// scored higher.
func checkChosenBest(t *testing.T, x *explain.Explanation) {
	t.Helper()
	chosen, ok := x.Find(x.Node)
	if x.Result != explain.Scheduled || !ok || chosen.Total == nil {
		t.Fatalf("result %s on %q (scored: %v), want a scored chosen node", x.Result, x.Node, ok && chosen.Total != nil)
	}
	for _, n := range x.Nodes {
		if n.Total != nil && *n.Total > *chosen.Total {
			t.Errorf("node %s scored %d, above the chosen %s's %d", n.Name, *n.Total, x.Node, *chosen.Total)
		}
	}
}

func waitScheduled(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	eventually(t, 60*time.Second, "pod "+name+" scheduled", func() error {
		p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName == "" {
			return fmt.Errorf("not bound")
		}
		return nil
	})
}
