//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/explain"
)

// otherVersion is a Kubernetes version besides kubesim's own that the
// build has (make build builds every version under versions/).
const otherVersion, otherRelease = "1.35", "v1.35.4"

// TestKubernetesVersion runs a cluster of another Kubernetes version:
// its API server, controller-manager and scheduler are that release's,
// from its binary beside kubesim, and a Deployment's pods are scheduled,
// run, and explained as in kubesim's own version.
func TestKubernetesVersion(t *testing.T) {
	e := newEnv(t)
	var info struct {
		Kubernetes         string   `json:"kubernetes"`
		KubernetesVersions []string `json:"kubernetesVersions"`
	}
	if err := json.Unmarshal([]byte(e.must("version", "-o", "json").stdout), &info); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.KubernetesVersions, otherRelease) || !slices.Contains(info.KubernetesVersions, info.Kubernetes) {
		t.Fatalf("kubesim version lists %v, want %s and its own %s (is %s built beside it?)", info.KubernetesVersions, otherRelease, info.Kubernetes,
			filepath.Join(filepath.Dir(binary), "kubesim-k8s-"+otherVersion))
	}
	if out := e.must("version").stdout; !strings.Contains(out, otherVersion+" ("+otherRelease+")") {
		t.Errorf("kubesim version does not list %s (%s):\n%s", otherVersion, otherRelease, out)
	}

	t.Run("bad input", func(t *testing.T) {
		e := e.in(t)
		e.fails("kubernetes (--kubernetes): kubesim does not offer Kubernetes 1.99: give one of", "create", "cluster", "--name", "bad", "--kubernetes", "1.99")
		e.fails("kubesim does not offer Kubernetes 1.33", "create", "cluster", "--name", "bad", "--kubernetes", "1.33")
		e.fails(`kubernetes (--kubernetes): "latest" is not a Kubernetes version`, "create", "cluster", "--name", "bad", "--kubernetes", "latest")
		e.fails("kubesim offers Kubernetes "+otherVersion+" as "+otherRelease+" only", "create", "cluster", "--name", "bad", "--kubernetes", otherVersion+".1")
		if _, err := os.Stat(e.clusterDir("bad")); !os.IsNotExist(err) {
			t.Errorf("a refused create left %s behind (%v)", e.clusterDir("bad"), err)
		}
	})

	e.createCluster("old", "--kubernetes", otherVersion, "--nodes", "3")
	client := e.client()
	got, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got.GitVersion != otherRelease {
		t.Errorf("the API server says it is %s, want %s", got.GitVersion, otherRelease)
	}
	for _, comp := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pid := e.componentPID("old", comp)
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if pid == 0 || err != nil || filepath.Base(exe) != "kubesim-k8s-"+otherVersion {
			t.Errorf("%s runs from %q (pid %d, %v), want kubesim-k8s-%s", comp, exe, pid, err, otherVersion)
		}
	}
	var clusters []struct {
		Name, Kubernetes string
	}
	if err := json.Unmarshal([]byte(e.must("get", "clusters", "-o", "json").stdout), &clusters); err != nil {
		t.Fatal(err)
	}
	if len(clusters) != 1 || clusters[0].Kubernetes != otherRelease {
		t.Errorf("get clusters: %+v, want old at %s", clusters, otherRelease)
	}
	if out := e.must("get", "clusters").stdout; !strings.Contains(out, "KUBERNETES") || !strings.Contains(out, otherRelease) {
		t.Errorf("get clusters does not show the version:\n%s", out)
	}

	// The controller-manager makes the pods, the scheduler binds them,
	// the simulator runs them.
	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), deployment("web", 6), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 6)
	pods := runningPods(t, client, "app=web")
	x := e.in(t).explainJSON(pods[0].Name)
	if x.Result != explain.Scheduled || x.Node != pods[0].Spec.NodeName || len(x.Nodes) != 3 {
		t.Errorf("explain %s: %s on %q with %d nodes, want Scheduled on %s among 3", pods[0].Name, x.Result, x.Node, len(x.Nodes), pods[0].Spec.NodeName)
	}
	checkChosenBest(t, x)

	// A clone runs its source's version; its pods are created through the
	// API server (the direct writes are kubesim's own version's).
	snap := filepath.Join(t.TempDir(), "old.yaml")
	e.must("snapshot", "export", "--context", "kubesim-old", "--path", snap)
	r := e.must("create", "cluster", "--name", "copy", "--from", snap)
	if out := r.stdout + r.stderr; !strings.Contains(out, "Pods are created through the API server") || !strings.Contains(out, "runs Kubernetes "+otherVersion) {
		t.Errorf("the clone of a %s cluster does not say it creates pods through the API server:\n%s", otherVersion, out)
	}
	copyClient := clientsetFor(t, mustConfig(t, e.kubeconfig))
	if got, err := copyClient.Discovery().ServerVersion(); err != nil || got.GitVersion != otherRelease {
		t.Errorf("the clone's API server is %v (%v), want %s like its source", got, err, otherRelease)
	}
	waitPods(t, copyClient, "app=web", 6)
	e.must("delete", "cluster", "--name", "copy")
	e.must("kubectl", "--name", "old", "config", "use-context", "kubesim-old", "--kubeconfig", e.kubeconfig)

	// Stopped and started, it runs the same version.
	e.must("stop", "cluster", "--name", "old")
	e.must("start", "cluster", "--name", "old")
	eventually(t, time.Minute, "the API server at "+otherRelease+" again", func() error {
		got, err := e.client().Discovery().ServerVersion()
		if err != nil {
			return err
		}
		if got.GitVersion != otherRelease {
			return fmt.Errorf("it says %s", got.GitVersion)
		}
		return nil
	})
}

// TestKubernetesUpgrade upgrades a running 1.35 cluster with 100 pods and
// PodDisruptionBudgets to kubesim's own version: the API server first,
// then the controller-manager and the scheduler, the simulated nodes
// running throughout. No pod is lost or replaced, the PDBs are still
// counted and enforced by the new components, and each upstream component
// runs the new release afterwards.
func TestKubernetesUpgrade(t *testing.T) {
	e := newEnv(t)
	e.createCluster("up", "--kubernetes", otherVersion, "--nodes", "10")
	client := e.client()
	ctx := context.Background()
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deployment("web", 100), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(100)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 100)
	before := podUIDs(t, client, "app=web")

	t.Run("bad input", func(t *testing.T) {
		e := e.in(t)
		e.fails("kubernetes (--kubernetes): the cluster runs Kubernetes "+otherRelease+" already", "upgrade", "cluster", "--name", "up", "--kubernetes", otherVersion)
		e.fails("kubesim does not offer Kubernetes 1.99", "upgrade", "cluster", "--name", "up", "--kubernetes", "1.99")
		e.fails("--kubernetes: give the version to upgrade to", "upgrade", "cluster", "--name", "up")
	})

	own := e.must("version", "-o", "json").stdout
	var info struct{ Kubernetes string }
	if err := json.Unmarshal([]byte(own), &info); err != nil {
		t.Fatal(err)
	}
	r := e.must("upgrade", "cluster", "--name", "up", "--kubernetes", strings.TrimPrefix(info.Kubernetes, "v"))
	if !strings.Contains(r.stderr, "runs Kubernetes "+info.Kubernetes) {
		t.Errorf("upgrade does not say the cluster runs %s:\n%s", info.Kubernetes, r)
	}
	if got, err := client.Discovery().ServerVersion(); err != nil || got.GitVersion != info.Kubernetes {
		t.Errorf("after the upgrade the API server is %v (%v), want %s", got, err, info.Kubernetes)
	}
	for _, comp := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pid := e.componentPID("up", comp)
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if pid == 0 || err != nil || filepath.Base(exe) != filepath.Base(binary) {
			t.Errorf("after the upgrade %s runs from %q (pid %d, %v), want kubesim's own", comp, exe, pid, err)
		}
	}
	if out := e.must("get", "clusters").stdout; !strings.Contains(out, info.Kubernetes) {
		t.Errorf("get clusters does not show %s:\n%s", info.Kubernetes, out)
	}

	// The same 100 pods, none replaced, all running.
	waitPods(t, client, "app=web", 100)
	if after := podUIDs(t, client, "app=web"); !slices.Equal(after, before) {
		t.Errorf("the upgrade replaced pods: %d before, %d after, %d in common", len(before), len(after), len(common(before, after)))
	}
	// The new controller-manager counts the PDB, and the new API server
	// refuses an eviction it forbids.
	eventually(t, time.Minute, "the PDB counted by the new controller-manager", func() error {
		pdb, err := client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.CurrentHealthy != 100 || pdb.Status.DisruptionsAllowed != 0 {
			return fmt.Errorf("status %+v", pdb.Status)
		}
		return nil
	})
	err := client.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: firstPod(t, client, "app=web"), Namespace: "default"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting a web pod (PDB minAvailable 100 of 100) after the upgrade: %v, want refused", err)
	}
	// The new scheduler schedules, the new controller-manager scales.
	e.kubectl("scale", "deployment", "web", "--replicas", "110")
	waitPods(t, client, "app=web", 110)

	e.fails("1.35 is older than the cluster's "+strings.Join(strings.Split(strings.TrimPrefix(info.Kubernetes, "v"), ".")[:2], ".")+": Kubernetes does not downgrade",
		"upgrade", "cluster", "--name", "up", "--kubernetes", otherVersion)
}

func podUIDs(t *testing.T, client kubernetes.Interface, selector string) []string {
	t.Helper()
	pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, p := range pods.Items {
		uids = append(uids, string(p.UID))
	}
	slices.Sort(uids)
	return uids
}

func common(a, b []string) []string {
	var both []string
	for _, x := range a {
		if slices.Contains(b, x) {
			both = append(both, x)
		}
	}
	return both
}
