//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// deschedule runs `kubesim deschedule ... -o json` and decodes its report.
func (e *env) deschedule(args ...string) descheduleReport {
	e.t.Helper()
	r := e.must(append([]string{"deschedule", "--name", e.cluster, "-o", "json"}, args...)...)
	var report descheduleReport
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		e.t.Fatalf("deschedule output is not JSON: %v\n%s", err, r.stdout)
	}
	return report
}

type descheduleReport struct {
	DryRun    bool `json:"dryRun"`
	Evictions []struct {
		Namespace, Pod, Node, Plugin, Result, Message string
	} `json:"evictions"`
}

// results counts the report's evictions by result, and the distinct pods.
func (r descheduleReport) results() (map[string]int, int) {
	counts, pods := map[string]int{}, map[string]bool{}
	for _, e := range r.Evictions {
		counts[e.Result]++
		pods[e.Pod] = true
	}
	return counts, len(pods)
}

// TestDescheduler: the upstream descheduler on a simulated cluster —
// topology spread restored after a node failure, PDBs honoured in real and
// dry runs, LowNodeUtilization relieving a hot node, and the component.
func TestDescheduler(t *testing.T) {
	e := newEnv(t)
	e.createCluster("desched", threeNodesFastFailures...)
	client := e.client()
	ctx := context.Background()
	for i := range 3 {
		e.kubectl("label", "node", fmt.Sprintf("node-00000%d", i), fmt.Sprintf("topology.kubernetes.io/zone=tok%d", i))
	}

	// Bad input: one line each, naming what to fix.
	e.fails("TopologyAndDuplicates", "deschedule", "--name", "desched", "--profile", "Nope")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, bad, []byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n    balance:\n      enabled: [NoSuchPlugin]\n"))
	e.fails("NoSuchPlugin", "deschedule", "--name", "desched", "--policy", bad)
	if out := e.must("deschedule", "--profile", "TopologyAndDuplicates", "--print-policy").stdout; !strings.Contains(out, "RemovePodsViolatingTopologySpreadConstraint") || !strings.Contains(out, "DoNotSchedule") {
		t.Errorf("--print-policy:\n%s", out)
	}

	d := deployment("spread", 3)
	d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
		NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
		LabelSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
	}}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSpread(t, client, "app=spread", "1/1/1")

	// A node fails: its pod moves, and stays doubled up once it is back.
	e.must("node", "stop", "--name", "desched", "node-000002")
	waitSpread(t, client, "app=spread", "1/2/0", "2/1/0")
	e.must("node", "start", "--name", "desched", "node-000002")
	waitNode(t, client, "node-000002", corev1.ConditionTrue)
	waitUntainted(t, client, "node-000002")

	// A PDB allowing no disruption refuses the eviction, real or dry.
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "spread"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		},
	}
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "PDB observed", func() error {
		p, err := client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "spread", metav1.GetOptions{})
		if err != nil || p.Status.ObservedGeneration != p.Generation || p.Status.ExpectedPods != 3 {
			return fmt.Errorf("not yet observed (%v)", err)
		}
		return nil
	})
	before := podNames(t, client, "app=spread")
	for _, dry := range []bool{true, false} {
		args := []string{"--profile", "TopologyAndDuplicates"}
		want := "Refused"
		if dry {
			args, want = append(args, "--dry-run"), "WouldBeRefused"
		}
		report := e.deschedule(args...)
		counts, _ := report.results()
		if counts[want] == 0 || counts[want] != len(report.Evictions) {
			t.Fatalf("dry run %v with a 0-disruption PDB: %+v", dry, report.Evictions)
		}
		if !strings.Contains(report.Evictions[0].Message, "disruption budget") {
			t.Errorf("refusal does not name the budget: %q", report.Evictions[0].Message)
		}
	}
	if after := podNames(t, client, "app=spread"); after != before {
		t.Fatalf("refused evictions changed pods: %s -> %s", before, after)
	}
	waitEventReason(t, client, "EvictionFailed")
	if err := client.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "spread", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Dry run: exactly one pod would go, and nothing changes.
	report := e.deschedule("--profile", "TopologyAndDuplicates", "--dry-run")
	if counts, pods := report.results(); pods != 1 || counts["WouldEvict"] != 1 || !report.DryRun {
		t.Fatalf("dry run: %+v", report.Evictions)
	}
	if after := podNames(t, client, "app=spread"); after != before {
		t.Fatalf("dry run changed pods: %s -> %s", before, after)
	}
	table := e.must("deschedule", "--name", "desched", "--profile", "TopologyAndDuplicates", "--dry-run").stdout
	if !strings.Contains(table, "WouldEvict") || !strings.Contains(table, "nothing changed") {
		t.Errorf("dry-run table:\n%s", table)
	}

	// For real: exactly one eviction; its replacement lands on the empty node.
	report = e.deschedule("--profile", "TopologyAndDuplicates")
	if counts, pods := report.results(); pods != 1 || counts["Evicted"] != 1 {
		t.Fatalf("real run: %+v", report.Evictions)
	}
	if ev := report.Evictions[0]; ev.Node == "node-000002" || ev.Plugin != "RemovePodsViolatingTopologySpreadConstraint" {
		t.Errorf("evicted %+v", ev)
	}
	waitSpread(t, client, "app=spread", "1/1/1")
	waitEventReason(t, client, "Descheduled")

	// LowNodeUtilization: 30 pods crowd node-000000; some move off it.
	for _, n := range []string{"node-000001", "node-000002"} {
		e.kubectl("cordon", n)
	}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deployment("crowd", 30), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=crowd", 30)
	for _, n := range []string{"node-000001", "node-000002"} {
		e.kubectl("uncordon", n)
	}
	policy := filepath.Join(t.TempDir(), "lnu.yaml")
	writeFile(t, policy, []byte(`apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: relieve
  pluginConfig:
  - name: LowNodeUtilization
    args:
      thresholds: {pods: 5}
      targetThresholds: {pods: 20}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
`))
	report = e.deschedule("--policy", policy)
	counts, _ := report.results()
	if counts["Evicted"] == 0 {
		t.Fatalf("LowNodeUtilization evicted nothing: %+v", report.Evictions)
	}
	for _, ev := range report.Evictions {
		if ev.Node != "node-000000" || ev.Plugin != "LowNodeUtilization" {
			t.Errorf("eviction %+v, want from node-000000 by LowNodeUtilization", ev)
		}
	}
	eventually(t, 60*time.Second, "crowd spread out", func() error {
		perNode := podsPerNode(t, client, "app=crowd")
		if perNode["node-000000"] >= 30 || perNode["node-000001"]+perNode["node-000002"] == 0 {
			return fmt.Errorf("pods per node %v", perNode)
		}
		return nil
	})
}

// removeDuplicatesPolicy is a descheduler policy of one profile, dups,
// running RemoveDuplicates.
const removeDuplicatesPolicy = `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: dups
  pluginConfig:
  - {name: RemoveDuplicates, args: {}}
  plugins:
    balance:
      enabled: [RemoveDuplicates]
`

// TestDeschedulerComponent: the descheduler as a cluster component, every
// interval, logging to logs/descheduler.log; and the two-node minimum.
func TestDeschedulerComponent(t *testing.T) {
	e := newEnv(t)
	e.cluster = "dcomp"
	policy := filepath.Join(t.TempDir(), "dups.yaml")
	writeFile(t, policy, []byte(removeDuplicatesPolicy))
	e.fails("descheduler.interval", "create", "cluster", "--name", "bad", "--descheduling-interval", "5s")
	unconfigured := filepath.Join(t.TempDir(), "unconfigured.yaml")
	writeFile(t, unconfigured, []byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"))
	e.fails("plugin RemoveDuplicates is enabled but has no entry", "create", "cluster", "--name", "bad", "--descheduler-policy", unconfigured)
	e.must("create", "cluster", "--name", "dcomp", "--nodes", "1", "--descheduler-policy", policy, "--descheduling-interval", "2s")
	client := e.client()
	e.fails("at least two ready nodes", "deschedule", "--name", "dcomp", "--profile", "TopologyAndDuplicates")

	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), deployment("dup", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=dup", 2)
	e.must("scale", "node", "--name", "dcomp", "--replicas", "2")
	eventually(t, 60*time.Second, "duplicate moved to the new node", func() error {
		if perNode := podsPerNode(t, client, "app=dup"); perNode["node-000000"] != 1 || perNode["node-000001"] != 1 {
			return fmt.Errorf("pods per node %v", perNode)
		}
		return nil
	})
	log, err := os.ReadFile(filepath.Join(e.clusterDir("dcomp"), "logs", "descheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `result="Evicted"`) || !strings.Contains(string(log), "RemoveDuplicates") {
		t.Errorf("descheduler.log has no eviction:\n%s", log)
	}
}

// podsPerNode counts the running, not terminating pods per node.
func podsPerNode(t *testing.T, client kubernetes.Interface, selector string) map[string]int {
	t.Helper()
	perNode := map[string]int{}
	for _, p := range runningPods(t, client, selector) {
		if p.DeletionTimestamp == nil && podReady(&p) {
			perNode[p.Spec.NodeName]++
		}
	}
	return perNode
}

// waitSpread waits until the pods per node of node-000000/1/2 read like
// one of want ("1/1/1").
func waitSpread(t *testing.T, client kubernetes.Interface, selector string, want ...string) {
	t.Helper()
	eventually(t, 90*time.Second, "spread "+strings.Join(want, " or "), func() error {
		perNode := podsPerNode(t, client, selector)
		got := fmt.Sprintf("%d/%d/%d", perNode["node-000000"], perNode["node-000001"], perNode["node-000002"])
		for _, w := range want {
			if got == w {
				return nil
			}
		}
		return fmt.Errorf("spread %s", got)
	})
}

// podNames lists a selector's pods and their state, to compare before and after.
func podNames(t *testing.T, client kubernetes.Interface, selector string) string {
	t.Helper()
	pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, fmt.Sprintf("%s@%s(deleting=%v)", p.Name, p.Spec.NodeName, p.DeletionTimestamp != nil))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func waitEventReason(t *testing.T, client kubernetes.Interface, reason string) {
	t.Helper()
	eventually(t, 30*time.Second, "event "+reason, func() error {
		events, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			return err
		}
		if len(events.Items) == 0 {
			return fmt.Errorf("no %s event", reason)
		}
		return nil
	})
}
