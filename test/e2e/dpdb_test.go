//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// dpdbWorkload is a Deployment of n pods labelled app=<name> in ns.
func dpdbWorkload(name, ns string, n int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: nginx}]
`, name, ns, n)
}

// dpdbFor is dpdbWorkload with a DPDB of the same name in the default
// namespace over its pods, its budget budget ("minAvailable: 1", say).
func dpdbFor(name string, n int, budget string) string {
	return dpdbWorkload(name, "default", n) + fmt.Sprintf(`---
apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {app: %[1]s}}
  %[2]s
`, name, budget)
}

// dpdbClient reads DPDBs.
func dpdbClient(t *testing.T, kubeconfig string) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(mustConfig(t, kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

func getDPDB(dyn dynamic.Interface, ns, name string) (*unstructured.Unstructured, error) {
	return dyn.Resource(policyv1alpha1.Resource).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// waitAllowed waits until both the DPDB and its child PDB show allowed
// disruptions and the DPDB is Ready.
func waitAllowed(t *testing.T, client kubernetes.Interface, dyn dynamic.Interface, ns, name string, allowed int64) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("dpdb %s/%s allowing %d", ns, name, allowed), func() error {
		d, err := getDPDB(dyn, ns, name)
		if err != nil {
			return err
		}
		got, _, _ := unstructured.NestedInt64(d.Object, "status", "disruptionsAllowed")
		if got != allowed {
			return fmt.Errorf("dpdb allows %d; status %v", got, d.Object["status"])
		}
		if cond := dpdbCondition(d, policyv1alpha1.ConditionReady); cond["status"] != "True" {
			return fmt.Errorf("not Ready: %v", cond)
		}
		pdb, err := client.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if int64(pdb.Status.DisruptionsAllowed) != allowed || pdb.Status.ObservedGeneration != pdb.Generation {
			return fmt.Errorf("child PDB allows %d (observed generation %d of %d)", pdb.Status.DisruptionsAllowed,
				pdb.Status.ObservedGeneration, pdb.Generation)
		}
		return nil
	})
}

func dpdbCondition(d *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// TestDPDBTwoNamespaces: two namespaces of 3 pods each, each with a DPDB
// of minAvailable 3 federated with the other's child: 3 allowed each;
// the other scaled to 0: 0 allowed, and an eviction is refused.
func TestDPDBTwoNamespaces(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdb", "--nodes", "2")
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	e.kubectl("create", "namespace", "other")
	var manifest strings.Builder
	for _, ns := range []struct{ own, peer string }{{"default", "other"}, {"other", "default"}} {
		manifest.WriteString(dpdbWorkload("db", ns.own, 3) + "---\n")
		fmt.Fprintf(&manifest, `apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: db, namespace: %s}
spec:
  selector: {matchLabels: {app: db}}
  minAvailable: 3
  federation: [{name: db, namespace: %s}]
---
`, ns.own, ns.peer)
	}
	e.apply(manifest.String())
	waitPods(t, client, "app=db", 3)
	waitAllowed(t, client, dyn, "default", "db", 3)
	waitAllowed(t, client, dyn, "other", "db", 3)

	// What `kubectl get dpdb` shows.
	out := e.kubectl("get", "dpdb", "db").stdout
	for _, col := range []string{"MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "FEDERATED", "AGE", "1/1"} {
		if !strings.Contains(out, col) {
			t.Errorf("kubectl get dpdb lacks %q:\n%s", col, out)
		}
	}
	// The child is a PDB every tool understands, owned by its DPDB.
	pdb, err := client.PolicyV1().PodDisruptionBudgets("default").Get(context.Background(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pdb.OwnerReferences) != 1 || pdb.OwnerReferences[0].Kind != policyv1alpha1.Kind || pdb.Spec.Selector.MatchLabels["app"] != "db" {
		t.Errorf("child PDB: owners %v, selector %v", pdb.OwnerReferences, pdb.Spec.Selector)
	}

	e.kubectl("scale", "deployment", "db", "-n", "other", "--replicas", "0")
	waitAllowed(t, client, dyn, "default", "db", 0)
	pods := runningPods(t, client, "app=db")
	if len(pods) != 3 {
		t.Fatalf("%d running pods in default, want 3", len(pods))
	}
	err = client.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pods[0].Name, Namespace: "default"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting %s with the other namespace at 0: %v, want 429 (budget)", pods[0].Name, err)
	}
	// Deleting a pod skips PDBs, unless the pod opts in to the webhook.
	e.kubectl("label", "pod", pods[0].Name, "policy.kubesim.io/guard-delete=true")
	r := e.run("kubectl", "--name", e.cluster, "delete", "pod", pods[0].Name, "--wait=false")
	if r.code == 0 || !strings.Contains(r.stderr, "federation allows no disruption") {
		t.Errorf("deleting a guarded pod with the other namespace at 0: want the webhook's refusal: %s", r)
	}
	// Back: allowed again, and the guarded pod may go.
	e.kubectl("scale", "deployment", "db", "-n", "other", "--replicas", "3")
	waitAllowed(t, client, dyn, "default", "db", 3)
	e.kubectl("delete", "pod", pods[0].Name, "--wait=false")
}

// TestDPDBBadInput: the CRD refuses bad budgets naming the field; a
// federation entry that does not exist fails closed with a condition.
func TestDPDBBadInput(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdbbad", "--nodes", "1")
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	for _, tc := range []struct{ name, budget, want string }{
		{"both", "minAvailable: 1\n  maxUnavailable: 1", "exactly one of spec.minAvailable or spec.maxUnavailable"},
		{"neither", "", "exactly one of spec.minAvailable or spec.maxUnavailable"},
		{"negative", "minAvailable: -1", "spec.minAvailable"},
		{"over100", "maxUnavailable: 150%", "spec.maxUnavailable"},
		{"notpercent", "minAvailable: half", "spec.minAvailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e.in(t)
			f := t.TempDir() + "/dpdb.yaml"
			writeFile(t, f, fmt.Appendf(nil, `apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: %s}
spec:
  selector: {matchLabels: {app: x}}
  %s
`, tc.name, tc.budget))
			r := e.run("kubectl", "--name", e.cluster, "apply", "-f", f)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("applying %q: want a refusal naming %q: %s", tc.budget, tc.want, r)
			}
		})
	}

	e.apply(dpdbWorkload("lonely", "default", 2) + `---
apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: lonely}
spec:
  selector: {matchLabels: {app: lonely}}
  minAvailable: 1
  federation: [{name: nothere}, {name: faraway, cluster: blue}]
`)
	waitPods(t, client, "app=lonely", 2)
	eventually(t, 60*time.Second, "lonely fails closed", func() error {
		d, err := getDPDB(dyn, "default", "lonely")
		if err != nil {
			return err
		}
		deg := dpdbCondition(d, policyv1alpha1.ConditionDegraded)
		msg, _ := deg["message"].(string)
		if deg["status"] != "True" || !strings.Contains(msg, "default/nothere not found") || !strings.Contains(msg, "cluster blue unknown") {
			return fmt.Errorf("Degraded: %v", deg)
		}
		if got, _, _ := unstructured.NestedInt64(d.Object, "status", "disruptionsAllowed"); got != 0 {
			return fmt.Errorf("allows %d", got)
		}
		pdb, err := client.PolicyV1().PodDisruptionBudgets("default").Get(context.Background(), "lonely", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.CurrentHealthy != 2 || pdb.Status.DisruptionsAllowed != 0 {
			return fmt.Errorf("child PDB status %+v", pdb.Status)
		}
		return nil
	})
	// The missing member appears (a plain PDB): the budget opens.
	e.apply(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: nothere}
spec:
  selector: {matchLabels: {app: nobody}}
  minAvailable: 0
`)
	e.kubectl("patch", "dpdb", "lonely", "--type=json", "-p", `[{"op":"remove","path":"/spec/federation/1"}]`)
	waitAllowed(t, client, dyn, "default", "lonely", 1)
}

// TestDPDBWebhookFollowsPort: the dpdb controller's port taken while it
// restarts moves, and the webhook's registration follows it, so evictions
// are answered again rather than refused for good.
func TestDPDBWebhookFollowsPort(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdbport", "--nodes", "1")
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	e.apply(dpdbFor("web", 2, "minAvailable: 1"))
	waitPods(t, client, "app=web", 2)
	waitAllowed(t, client, dyn, "default", "web", 1)
	webhookURL := func() string {
		cfg, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "eviction.dpdb.policy.kubesim.io", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *cfg.Webhooks[0].ClientConfig.URL
	}
	old := webhookURL()
	u, err := url.Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	pid := e.componentPID("dpdbport", "dpdb-controller")
	if pid == 0 {
		t.Fatal("no dpdb-controller process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var l net.Listener
	eventually(t, 5*time.Second, "the webhook's port free to take", func() (err error) {
		l, err = net.Listen("tcp", u.Host)
		return err
	})
	defer l.Close()
	eventually(t, time.Minute, "the webhook registered on a new port", func() error {
		if now := webhookURL(); now == old {
			return fmt.Errorf("still %s", now)
		}
		return nil
	})
	pod := runningPods(t, client, "app=web")[0]
	eventually(t, 30*time.Second, "an eviction answered by the moved webhook", func() error {
		return client.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: "default"}})
	})
}
