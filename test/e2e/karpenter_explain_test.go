//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/internal/explain"
)

// limitedPool is nodePool limited to 8 CPUs and consolidating any number
// of nodes at once (the default budget of 10% takes them one by one).
var limitedPool = strings.NewReplacer(`limits: {cpu: "40"}`, `limits: {cpu: "8"}`,
	"consolidateAfter: 0s\n", "consolidateAfter: 0s\n    budgets: [{nodes: \"100%\"}]\n").Replace(nodePool)

// explain pod and explain node say what Karpenter says: why a pod gets
// no NodeClaim (no instance type fits; the NodePool's limit), and that a
// PDB allowing no disruption holds an underused node.
func TestKarpenterExplain(t *testing.T) {
	e := newEnv(t)
	// node-000000, tainted, is a node no autoscaler manages.
	e.createCluster("why-nodes", "--autoscaler", "karpenter", "--nodes", "1")
	e.kubectl("taint", "node", "node-000000", "dedicated=other:NoSchedule")
	e.apply(limitedPool)
	client := e.client()
	ctx := context.Background()

	t.Run("no instance type fits", func(t *testing.T) {
		// Alone, before any node: Karpenter tries it against every type
		// the limit allows, and none has 1000 CPUs.
		createPod(t, client, cpuPod("huge", nil, "1000"))
		text := karpenterSays(t, e.in(t), client, "huge", "FailedScheduling")
		// Karpenter writes quantities in their canonical form: 1000 is 1k.
		if !strings.Contains(text, "no instance type has enough resources") || !strings.Contains(text, `resources={"cpu":"1k","pods":"1"}`) {
			t.Errorf("Karpenter's reason for a pod no instance type fits:\n%s", text)
		}
	})

	var held string
	t.Run("a PDB holds an underused node", func(t *testing.T) {
		makeDeployment(t, client, "hold", 1)
		makeDeployment(t, client, "fill", 2)
		zero := intstr.FromInt32(0)
		if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "hold"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hold"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "hold and fill Running", func() error {
			if n := len(runningPods(t, client, "app in (hold,fill)")); n != 3 {
				return fmt.Errorf("%d of 3 Running", n)
			}
			return nil
		})
		held = runningPods(t, client, "app=hold")[0].Spec.NodeName
		e.in(t).kubectl("scale", "deployment", "fill", "--replicas", "0")

		// Karpenter writes DisruptionBlocked once in 2 minutes per node,
		// whatever the reason: when its pass found the node in the second
		// between registered and initialized, "Node isn't initialized"
		// holds the place that long (rarely: the pass is every 10s).
		var x explain.NodeExplanation
		eventually(t, 150*time.Second, "Karpenter's DisruptionBlocked naming the PDB on "+held, func() error {
			x = explain.NodeExplanation{}
			if err := json.Unmarshal([]byte(e.in(t).must("explain", "node", held, "--name", "why-nodes", "-o", "json").stdout), &x); err != nil {
				return err
			}
			for _, ev := range x.Events {
				if ev.Reason == "DisruptionBlocked" && strings.Contains(ev.Message, "default/hold") {
					return nil
				}
			}
			return fmt.Errorf("events %+v", x.Events)
		})
		if x.ManagedBy != "karpenter" || x.NodeClaim == nil || x.NodePool == nil || x.NodePool.Name != "default" || x.InstanceType == "" || x.Price == "" {
			t.Errorf("explain node %s: %+v", held, x)
		}
		// Karpenter's own words, as it wrote them on the node or its NodeClaim.
		blocked := karpenterEvents(t, client, "DisruptionBlocked", held, x.NodeClaim.Name)
		if !strings.Contains(blocked, "default/hold") {
			t.Errorf("Karpenter's DisruptionBlocked events do not name the PDB: %q", blocked)
		}
		text := e.in(t).must("explain", "node", held, "--name", "why-nodes").stdout
		t.Logf("explain node %s:\n%s", held, text)
		// kubesim ui's node drawer shows the same.
		var fromUI struct{ Text string }
		if err := json.Unmarshal(uiGet(t, startUI(t, e, "why-nodes", "--read-only"), "/api/explain-node/"+held), &fromUI); err != nil || !strings.Contains(fromUI.Text, "managed by Karpenter") {
			t.Errorf("kubesim ui's explain of node %s: %v\n%s", held, err, fromUI.Text)
		}
		for _, want := range []string{"managed by Karpenter, NodeClaim " + x.NodeClaim.Name + " of NodePool default", "Consolidatable: True", "DisruptionBlocked", "PodDisruptionBudget=[default/hold]"} {
			if !strings.Contains(text, want) {
				t.Errorf("explain node lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("the NodePool's limit", func(t *testing.T) {
		// 8 CPUs of nodes at most, one CPU used by hold: 12 pods of one CPU
		// cannot all run.
		makeDeployment(t, client, "over", 12)
		// A pod Pending now may be bound a moment later (over's first pods
		// land on nodes fill left empty), so the text checked is the one
		// explain printed while the pod was Pending.
		eventually(t, 40*time.Second, "explain pod of a Pending over pod giving Karpenter's limit reason", func() error {
			pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=over"})
			if err != nil {
				return err
			}
			pending, last := 0, ""
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					continue
				}
				pending++
				r := e.in(t).run("explain", "pod", p.Name, "--name", "why-nodes")
				last = r.stdout + r.stderr
				if r.code == 0 && strings.Contains(r.stdout, "Karpenter's newest event on the pod:") && limitReason(r.stdout) {
					t.Logf("explain pod %s:\n%s", p.Name, r.stdout)
					return nil
				}
			}
			return fmt.Errorf("%d pending, none explained with Karpenter's limit reason yet; the last:\n%s", pending, last)
		})
	})

	t.Run("consolidation passes the held node by", func(t *testing.T) {
		if held == "" {
			t.Fatal("no node held by the PDB: its case failed")
		}
		// Karpenter consolidates the nodes over emptied; the one the PDB
		// holds, though underused, stays.
		e.in(t).kubectl("scale", "deployment", "over", "--replicas", "0")
		eventually(t, 60*time.Second, "the NodePool's other nodes consolidated away", func() error {
			nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=default"})
			if err != nil {
				return err
			}
			var others []string
			for _, n := range nodes.Items {
				if n.Name != held {
					others = append(others, n.Name)
				}
			}
			if len(others) > 0 {
				return fmt.Errorf("%d other nodes left: %v", len(others), others)
			}
			return nil
		})
		if _, err := client.CoreV1().Nodes().Get(ctx, held, metav1.GetOptions{}); err != nil {
			t.Errorf("the node the PDB holds: %v", err)
		}
		text := e.in(t).must("explain", "node", held, "--name", "why-nodes").stdout
		if !strings.Contains(text, "PodDisruptionBudget=[default/hold]") || !strings.Contains(text, "Being disrupted: no") {
			t.Errorf("explain node %s after consolidation:\n%s", held, text)
		}
	})

	t.Run("other nodes", func(t *testing.T) {
		r := e.in(t).must("explain", "node", "node-000000", "--name", "why-nodes")
		if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); !strings.HasPrefix(lines[0], "Node node-000000: no autoscaler manages this node") {
			t.Errorf("explain node of a node no autoscaler manages:\n%s", r.stdout)
		}
		e.in(t).fails(`node "nosuch" not found`, "explain", "node", "nosuch", "--name", "why-nodes")
	})
}

// limitReason says whether explain's text gives one of Karpenter's two
// words for a NodePool at its limit. Its scheduler first drops the
// instance types the remaining limit cannot hold: none left is "all
// available instance types exceed limits"; only types too small for a pod
// of one CPU left is "no instance type has enough resources". Which one a
// pod gets depends on the nodes and NodeClaims when Karpenter tried it,
// and a pod's FailedScheduling is not written again for 5 minutes.
func limitReason(text string) bool {
	return strings.Contains(text, "all available instance types exceed limits for nodepool (NodePool=default)") ||
		strings.Contains(text, `no instance type has enough resources`) && strings.Contains(text, `resources={"cpu":"1","pods":"1"}`)
}

// cpuPod is a pod requesting cpu.
func cpuPod(name string, labels map[string]string, cpu string) *corev1.Pod {
	p := labelledPod(name, labels)
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return p
}

// makeDeployment makes a Deployment app=name of pods of one CPU.
func makeDeployment(t *testing.T, client kubernetes.Interface, name string, replicas int32) {
	t.Helper()
	d := deployment(name, replicas)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// explainJSON is explain pod -o json, when the scheduler has tried the pod.
func pendingExplanation(e *env, pod string) (*explain.Explanation, bool) {
	r := e.run("explain", "pod", pod, "--name", e.cluster, "-o", "json")
	x := &explain.Explanation{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), x) != nil {
		return nil, false
	}
	return x, true
}

// karpenterSays waits for Karpenter's event of reason on a Pending pod to
// show in explain pod, checks it is Karpenter's own message, and returns
// explain pod's text.
func karpenterSays(t *testing.T, e *env, client kubernetes.Interface, pod, reason string) string {
	t.Helper()
	var x *explain.Explanation
	eventually(t, 30*time.Second, "Karpenter's "+reason+" in explain pod "+pod, func() error {
		var ok bool
		if x, ok = pendingExplanation(e, pod); !ok {
			return fmt.Errorf("no explanation yet")
		}
		if x.Karpenter == nil || x.Karpenter.Event == nil || x.Karpenter.Event.Reason != reason {
			return fmt.Errorf("karpenter: %+v", x.Karpenter)
		}
		return nil
	})
	if own := karpenterEvents(t, client, reason, pod); !strings.Contains(own, x.Karpenter.Event.Message) {
		t.Errorf("explain shows %q; Karpenter wrote %q", x.Karpenter.Event.Message, own)
	}
	text := e.must("explain", "pod", pod, "--name", e.cluster).stdout
	t.Logf("explain pod %s:\n%s", pod, text)
	if !strings.Contains(text, "Unschedulable:") || !strings.Contains(text, "Karpenter's newest event on the pod:") || !strings.Contains(text, x.Karpenter.Event.Message) {
		t.Errorf("explain pod %s: want the scheduler's explanation, then Karpenter's:\n%s", pod, text)
	}
	return text
}

// karpenterEvents are the messages of Karpenter's events of reason on the
// named objects, one a line.
func karpenterEvents(t *testing.T, client kubernetes.Interface, reason string, names ...string) string {
	t.Helper()
	list, err := client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		for _, name := range names {
			if ev.InvolvedObject.Name == name && ev.Source.Component == "karpenter" {
				out = append(out, ev.Message)
			}
		}
	}
	return strings.Join(out, "\n")
}
