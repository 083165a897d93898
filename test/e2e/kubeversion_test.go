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

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/kubeversion"
)

// builtVersions are the Kubernetes releases this build can run (kubesim
// version): its own, and the others built beside it (make build builds
// every one under versions/; CI builds one other per run, rotating).
func builtVersions(t *testing.T, e *env) (own string, others []string) {
	t.Helper()
	var info struct {
		Kubernetes         string   `json:"kubernetes"`
		KubernetesVersions []string `json:"kubernetesVersions"`
	}
	if err := json.Unmarshal([]byte(e.must("version", "-o", "json").stdout), &info); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(info.KubernetesVersions, info.Kubernetes) {
		t.Fatalf("kubesim version lists %v, not its own %s", info.KubernetesVersions, info.Kubernetes)
	}
	others = slices.DeleteFunc(slices.Clone(info.KubernetesVersions), func(r string) bool { return r == info.Kubernetes })
	if len(others) == 0 {
		t.Fatalf("no Kubernetes version besides kubesim's own %s is built beside %s: build them with `make build`", info.Kubernetes, binary)
	}
	return info.Kubernetes, others
}

// minor is a release's minor version: v1.35.4 → 1.35.
var minor = kubeversion.MinorOf

// TestKubernetesVersion runs the core of what users verify on each
// Kubernetes version built beside kubesim: that release's API server,
// controller-manager and scheduler, from its binary, on a scaled clock;
// pods spread across zones, explained, a drain refused by a PDB, a node
// failure and its pods moved, a scenario, a clone, a stop and a start.
func TestKubernetesVersion(t *testing.T) {
	e := newEnv(t)
	own, others := builtVersions(t, e)
	out := e.must("version").stdout
	for _, release := range append([]string{own}, others...) {
		if !strings.Contains(out, minor(release)+" ("+release+")") {
			t.Errorf("kubesim version does not list %s (%s):\n%s", minor(release), release, out)
		}
	}

	t.Run("bad input", func(t *testing.T) {
		e := e.in(t)
		e.fails("kubernetes (--kubernetes): kubesim does not offer Kubernetes 1.99: give one of", "create", "cluster", "--name", "bad", "--kubernetes", "1.99")
		e.fails("kubesim does not offer Kubernetes 1.33", "create", "cluster", "--name", "bad", "--kubernetes", "1.33")
		e.fails(`kubernetes (--kubernetes): "latest" is not a Kubernetes version`, "create", "cluster", "--name", "bad", "--kubernetes", "latest")
		e.fails("kubesim offers Kubernetes "+minor(others[0])+" as "+others[0]+" only", "create", "cluster", "--name", "bad", "--kubernetes", minor(others[0])+".99")
		if _, err := os.Stat(e.clusterDir("bad")); !os.IsNotExist(err) {
			t.Errorf("a refused create left %s behind (%v)", e.clusterDir("bad"), err)
		}
	})

	for _, release := range others {
		t.Run(minor(release), func(t *testing.T) { versionCore(t, e.in(t), release) })
	}
}

// versionCore is TestKubernetesVersion on one release.
func versionCore(t *testing.T, e *env, release string) {
	ctx := context.Background()
	v := minor(release)
	name := "k" + strings.ReplaceAll(v, ".", "")
	// At 5×, a node is declared dead 8 s after it stops (40 s of cluster
	// time), its pods evicted 2 s later.
	e.createCluster(name, "--kubernetes", v, "--nodes", "3", "--time-scale", "5",
		"--node-monitor-grace-period", "40s", "--pod-eviction-toleration", "10s")
	defer e.must("delete", "cluster", "--name", name)
	client := e.client()
	if got, err := client.Discovery().ServerVersion(); err != nil || got.GitVersion != release {
		t.Errorf("the API server says it is %v (%v), want %s", got, err, release)
	}
	for _, comp := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pid := e.componentPID(name, comp)
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if pid == 0 || err != nil || filepath.Base(exe) != "kubesim-k8s-"+v {
			t.Errorf("%s runs from %q (pid %d, %v), want kubesim-k8s-%s", comp, exe, pid, err, v)
		}
	}
	// The supervisor runs from a copy of kubesim (execcopy), and found the
	// version's binary beside the original.
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", e.supervisorPID(name))); err != nil ||
		!strings.Contains(exe, "/.kubesim-exec/") && !strings.Contains(exe, "/kubesim/exec/") {
		t.Errorf("the supervisor runs from %q (%v), want a copy of kubesim", exe, err)
	}
	var clusters []struct{ Name, Kubernetes string }
	if err := json.Unmarshal([]byte(e.must("get", "clusters", "-o", "json").stdout), &clusters); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(clusters, func(c struct{ Name, Kubernetes string }) bool { return c.Name == name }); i < 0 || clusters[i].Kubernetes != release {
		t.Errorf("get clusters: %+v, want %s at %s", clusters, name, release)
	}

	// Nodes report the cluster's release as their kubelet's, as `kubectl
	// get nodes` shows a real cluster's.
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Status.NodeInfo.KubeletVersion != release {
			t.Errorf("node %s reports kubelet %q, want %s", n.Name, n.Status.NodeInfo.KubeletVersion, release)
		}
	}

	// Topology spread over three zones: the controller-manager makes the
	// pods, the scheduler spreads them, the simulator runs them.
	for i := range 3 {
		e.kubectl("label", "node", fmt.Sprintf("node-00000%d", i), fmt.Sprintf("topology.kubernetes.io/zone=z%d", i))
	}
	d := deployment("web", 6)
	d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
		NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
		LabelSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 6)
	waitSpread(t, client, "app=web", "2/2/2")
	// A pod free to go to any node is scored on all three, and explained.
	createPod(t, client, testPod("probe"))
	waitPhase(t, client, "probe", corev1.PodRunning)
	probe, err := client.CoreV1().Pods("default").Get(ctx, "probe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x := e.explainJSON("probe")
	if x.Result != explain.Scheduled || x.Node != probe.Spec.NodeName || len(x.Nodes) != 3 {
		t.Errorf("explain probe: %s on %q with %d nodes, want Scheduled on %s among 3", x.Result, x.Node, len(x.Nodes), probe.Spec.NodeName)
	}
	checkChosenBest(t, x)
	if err := client.CoreV1().Pods("default").Delete(ctx, "probe", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, "probe") // a pod of no controller stops a drain before any eviction

	// A PDB that allows no disruption refuses a drain.
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(6)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the PDB counted", func() error {
		p, err := client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.CurrentHealthy != 6 {
			return fmt.Errorf("status %+v", p.Status)
		}
		return nil
	})
	if r := e.run("kubectl", "--name", name, "drain", "node-000000", "--ignore-daemonsets", "--timeout=5s"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "disruption budget") {
		t.Errorf("a drain with a PDB of minAvailable 6 of 6: want refused evictions: %s", r)
	}
	e.kubectl("uncordon", "node-000000")
	if err := client.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A node fails: declared dead by this release's controller-manager on
	// the scaled clock (in real time it would take 40 s), its pods evicted
	// and placed in the zones left.
	e.must("node", "stop", "--name", name, "node-000002")
	stopped := time.Now()
	eventually(t, 30*time.Second, "node-000002 not Ready", func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, "node-000002", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if nodeReady(n) {
			return fmt.Errorf("still Ready")
		}
		return nil
	})
	t.Logf("node-000002 not Ready %s after it stopped (40 s of cluster time at 5×)", time.Since(stopped).Round(100*time.Millisecond))
	waitSpread(t, client, "app=web", "3/3/0")

	// A clone runs its source's version, its stopped node stopped; its
	// pods are created through the API server (the direct writes are
	// kubesim's own version's).
	snap := filepath.Join(t.TempDir(), "snap.yaml")
	e.must("snapshot", "export", "--context", "kubesim-"+name, "--path", snap)
	r := e.must("create", "cluster", "--name", name+"-copy", "--from", snap)
	if out := r.stdout + r.stderr; !strings.Contains(out, "Pods are created through the API server") || !strings.Contains(out, "runs Kubernetes "+v) ||
		!strings.Contains(out, "1 cloned nodes are held NotReady by their labels, as in the source") {
		t.Errorf("the clone of a %s cluster with a stopped node does not say it runs %s, creates pods through the API server and keeps the node stopped:\n%s", v, v, out)
	}
	copyClient := clientsetFor(t, mustConfig(t, e.kubeconfig))
	if got, err := copyClient.Discovery().ServerVersion(); err != nil || got.GitVersion != release {
		t.Errorf("the clone's API server is %v (%v), want %s like its source", got, err, release)
	}
	waitPods(t, copyClient, "app=web", 6)
	if n, err := copyClient.CoreV1().Nodes().Get(ctx, "node-000002", metav1.GetOptions{}); err != nil || nodeReady(n) {
		t.Errorf("the clone's node-000002, stopped in the source: %v, want NotReady", err)
	}
	e.must("delete", "cluster", "--name", name+"-copy")
	e.must("kubectl", "--name", name, "config", "use-context", "kubesim-"+name, "--kubeconfig", e.kubeconfig)

	// A scenario on the same release.
	scenario := filepath.Join(t.TempDir(), "scenario.yaml")
	writeFile(t, scenario, []byte(fmt.Sprintf(`apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: on-%s
cluster: {kubernetes: "%s", nodeGroups: [{count: 2}]}
steps:
- apply:
    resources:
    - {apiVersion: apps/v1, kind: Deployment, metadata: {name: app}, spec: {replicas: 4, selector: {matchLabels: {app: app}}, template: {metadata: {labels: {app: app}}, spec: {containers: [{name: c, image: nginx}]}}}}
- wait: {pods: {selector: app=app, phase: Running, ready: true, count: 4}}
- kubectl: [version, -o, json]
`, name, v)))
	if r := e.must("run", scenario); !strings.Contains(r.stdout+r.stderr, `"gitVersion": "`+release+`"`) {
		t.Errorf("the scenario's cluster is not %s:\n%s", release, r)
	}

	// Stopped and started, it runs the same version.
	e.must("stop", "cluster", "--name", name)
	e.must("start", "cluster", "--name", name)
	eventually(t, time.Minute, "the API server at "+release+" again", func() error {
		got, err := e.client().Discovery().ServerVersion()
		if err != nil {
			return err
		}
		if got.GitVersion != release {
			return fmt.Errorf("it says %s", got.GitVersion)
		}
		return nil
	})
}

// TestKubernetesVersionAddons runs kubesim's own components, built on
// its own release's client-go, against each other built version's
// control plane: the descheduler evicts a duplicate, DRA allocates a
// simulated GPU, a DPDB counts its pods, kubectl top is answered, Kueue
// admits a queued Job and Karpenter launches a node for a pending pod.
func TestKubernetesVersionAddons(t *testing.T) {
	e := newEnv(t)
	_, others := builtVersions(t, e)
	for _, release := range others {
		t.Run(minor(release), func(t *testing.T) { versionAddons(t, e.in(t), release) })
	}
}

func versionAddons(t *testing.T, e *env, release string) {
	ctx := context.Background()
	v := minor(release)
	name := "a" + strings.ReplaceAll(v, ".", "")
	dir := t.TempDir()
	config, policy := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "dups.yaml")
	writeFile(t, config, []byte(twoGPUNodes))
	writeFile(t, policy, []byte(removeDuplicatesPolicy))
	e.createCluster(name, "--kubernetes", v, "--config", config, "--addons", "kueue", "--autoscaler", "karpenter",
		"--descheduler-policy", policy, "--descheduling-interval", "2s")
	defer e.must("delete", "cluster", "--name", name)
	for _, comp := range []string{"kubelet-sim", "usage-metrics", "dpdb-controller", "descheduler", "kueue", "karpenter"} {
		if e.componentPID(name, comp) == 0 {
			t.Errorf("no %s process on %s", comp, v)
		}
	}
	client := e.client()

	// The descheduler: two replicas on one node (the other cordoned),
	// one evicted once both nodes take pods, and placed on the other.
	e.kubectl("cordon", "gpu-1")
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deployment("dup", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=dup", 2)
	e.kubectl("uncordon", "gpu-1")
	eventually(t, time.Minute, "the descheduler moves a duplicate to gpu-1", func() error {
		if perNode := podsPerNode(t, client, "app=dup"); perNode["gpu-0"] != 1 || perNode["gpu-1"] != 1 {
			return fmt.Errorf("pods per node %v", perNode)
		}
		return nil
	})

	// DRA: a pod claiming a simulated GPU runs with its claim allocated.
	e.apply(gpuDeployment("gpu", "c", "x", 1))
	waitPods(t, client, "app=gpu", 1)
	claims, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 1 || claims.Items[0].Status.Allocation == nil {
		t.Errorf("the GPU pod's claim: %v (%v), want one allocated", claims, err)
	}

	// A DPDB counts its pods; kubectl top is answered.
	e.apply(dpdbFor("db", 2, "minAvailable: 1"))
	waitAllowed(t, client, dpdbClient(t, e.kubeconfig), "default", "db", 1)
	eventually(t, time.Minute, "kubectl top nodes", func() error {
		r := e.run("kubectl", "--name", name, "top", "nodes", "--no-headers")
		if r.code != 0 || !strings.Contains(r.stdout, "gpu-0") {
			return fmt.Errorf("%s", r)
		}
		return nil
	})

	// Kueue admits a queued Job, whose pod runs.
	e.apply(queue)
	eventually(t, time.Minute, "Kueue's queues ready", func() error {
		if _, err := client.BatchV1().Jobs("default").Create(ctx, queuedJob("queued", "1h"), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	eventually(t, time.Minute, "the queued Job admitted and Running", func() error {
		if pods := runningPods(t, client, "job=queued"); len(pods) != 1 {
			return fmt.Errorf("%d pods Running", len(pods))
		}
		return nil
	})

	// Karpenter launches a node of its NodePool for a pod only it fits.
	e.apply(nodePool)
	pod := testPod("elastic")
	pod.Spec.NodeSelector = map[string]string{"karpenter.sh/nodepool": "default"}
	createPod(t, client, pod)
	eventually(t, 2*time.Minute, "the pod Running on a node Karpenter launched", func() error {
		p, err := client.CoreV1().Pods("default").Get(ctx, "elastic", metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod elastic: %v %v", p.Status.Phase, err)
		}
		n, err := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !strings.HasPrefix(n.Spec.ProviderID, "kwok://") || n.Status.NodeInfo.KubeletVersion != release {
			return fmt.Errorf("node %s: provider %q, kubelet %q", n.Name, n.Spec.ProviderID, n.Status.NodeInfo.KubeletVersion)
		}
		return nil
	})
}

// TestKubernetesVersionDifferences: the same nodes and objects on each
// built version show what that release documents, asserted per version:
// PodTopologyLabels admission (beta and on since 1.35) copies a node's
// zone label onto the pods bound to it; an HPA may scale to zero
// (HPAScaleToZero, beta and on since 1.37) with an External metric.
func TestKubernetesVersionDifferences(t *testing.T) {
	e := newEnv(t)
	own, others := builtVersions(t, e)
	for _, release := range append([]string{own}, others...) {
		t.Run(minor(release), func(t *testing.T) {
			e := e.in(t)
			v := minor(release)
			name := "d" + strings.ReplaceAll(v, ".", "")
			e.createCluster(name, "--kubernetes", v, "--nodes", "1")
			defer e.must("delete", "cluster", "--name", name)
			client := e.client()
			ctx := context.Background()
			e.kubectl("label", "node", "node-000000", "topology.kubernetes.io/zone=z1")
			createPod(t, client, testPod("p"))
			waitPhase(t, client, "p", corev1.PodRunning)
			p, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelled := p.Labels["topology.kubernetes.io/zone"] == "z1"
			if want := atLeast(v, "1.35"); labelled != want {
				t.Errorf("%s: the pod bound to a node of zone z1 has labels %v; want the zone copied: %v (PodTopologyLabelsAdmission, on since 1.35)", release, p.Labels, want)
			}

			_, err = client.AutoscalingV2().HorizontalPodAutoscalers("default").Create(ctx, scaleToZeroHPA(), metav1.CreateOptions{})
			if want := atLeast(v, "1.37"); want && err != nil {
				t.Errorf("%s: an HPA of minReplicas 0 with an External metric: %v; want it taken (HPAScaleToZero, on since 1.37)", release, err)
			} else if !want && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "minReplicas: Invalid value: 0: must be greater than or equal to 1")) {
				t.Errorf("%s: an HPA of minReplicas 0: %v; want it refused as before 1.37", release, err)
			}
		})
	}
}

// atLeast reports whether minor v is minor min or later.
func atLeast(v, min string) bool {
	var vm, vn, mm, mn int
	fmt.Sscanf(v, "%d.%d", &vm, &vn)
	fmt.Sscanf(min, "%d.%d", &mm, &mn)
	return vm > mm || vm == mm && vn >= mn
}

// scaleToZeroHPA is an HPA of minReplicas 0 on an External metric.
func scaleToZeroHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "to-zero"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "worker"},
			MinReplicas:    ptr.To[int32](0),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue_depth"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))},
			}}},
		},
	}
}

// TestKubernetesUpgrade upgrades a running cluster with 100 pods and a
// PodDisruptionBudget to the next minor, for each pair of consecutive
// versions built: the API server first, then the controller-manager and
// the scheduler, the simulated nodes running throughout. No pod is lost
// or replaced, the PDB is still counted and enforced by the new
// components, and each upstream component runs the new release afterwards.
func TestKubernetesUpgrade(t *testing.T) {
	e := newEnv(t)
	own, others := builtVersions(t, e)
	all := append([]string{own}, others...)
	slices.SortFunc(all, func(a, b string) int {
		if minor(a) == minor(b) {
			return 0
		} else if atLeast(minor(a), minor(b)) {
			return 1
		}
		return -1
	})
	pairs := 0
	for i := 1; i < len(all); i++ {
		from, to := all[i-1], all[i]
		if minor(to) == nextMinor(minor(from)) {
			pairs++
			t.Run(minor(from)+"-"+minor(to), func(t *testing.T) { upgrade(t, e.in(t), from, to, to == own) })
		}
	}
	if pairs == 0 {
		// CI builds one version besides kubesim's own per run: with 1.34,
		// no upgrade is built; the skew rule still refuses the skip.
		e.createCluster("skip", "--kubernetes", minor(all[0]), "--nodes", "1")
		e.fails("skips "+nextMinor(minor(all[0])), "upgrade", "cluster", "--name", "skip", "--kubernetes", minor(all[1]))
		t.Logf("no two consecutive versions built (%v): only the refusal of a skip is tested", all)
	}
}

// nextMinor is the minor after v: 1.35 → 1.36.
func nextMinor(v string) string {
	var m, n int
	fmt.Sscanf(v, "%d.%d", &m, &n)
	return fmt.Sprintf("%d.%d", m, n+1)
}

// upgrade is TestKubernetesUpgrade from one release to the next; toOwn
// says the new release is kubesim's own, run from its own binary.
func upgrade(t *testing.T, e *env, from, to string, toOwn bool) {
	name := "up" + strings.ReplaceAll(minor(from), ".", "")
	e.createCluster(name, "--kubernetes", minor(from), "--nodes", "10")
	defer e.must("delete", "cluster", "--name", name)
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

	e.fails("kubernetes (--kubernetes): the cluster runs Kubernetes "+from+" already", "upgrade", "cluster", "--name", name, "--kubernetes", minor(from))
	e.fails("kubesim does not offer Kubernetes 1.99", "upgrade", "cluster", "--name", name, "--kubernetes", "1.99")
	e.fails("--kubernetes: give the version to upgrade to", "upgrade", "cluster", "--name", name)

	r := e.must("upgrade", "cluster", "--name", name, "--kubernetes", minor(to))
	if !strings.Contains(r.stderr, "runs Kubernetes "+to) {
		t.Errorf("upgrade does not say the cluster runs %s:\n%s", to, r)
	}
	if got, err := client.Discovery().ServerVersion(); err != nil || got.GitVersion != to {
		t.Errorf("after the upgrade the API server is %v (%v), want %s", got, err, to)
	}
	wantExe := "kubesim-k8s-" + minor(to)
	if toOwn {
		wantExe = filepath.Base(binary)
	}
	for _, comp := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pid := e.componentPID(name, comp)
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if pid == 0 || err != nil || filepath.Base(exe) != wantExe {
			t.Errorf("after the upgrade %s runs from %q (pid %d, %v), want %s", comp, exe, pid, err, wantExe)
		}
	}
	if out := e.must("get", "clusters").stdout; !strings.Contains(out, to) {
		t.Errorf("get clusters does not show %s:\n%s", to, out)
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
	// The kubelets were not upgraded: the nodes keep the version they
	// reported; a node made now reports the new one.
	e.must("scale", "node", "--name", name, "--replicas", "11")
	eventually(t, time.Minute, "node-000010 Ready", func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, "node-000010", metav1.GetOptions{})
		if err != nil || !nodeReady(n) {
			return fmt.Errorf("not Ready (%v)", err)
		}
		return nil
	})
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if want := map[bool]string{true: to, false: from}[n.Name == "node-000010"]; n.Status.NodeInfo.KubeletVersion != want {
			t.Errorf("after the upgrade node %s reports kubelet %s, want %s", n.Name, n.Status.NodeInfo.KubeletVersion, want)
		}
	}

	e.fails(minor(from)+" is older than the cluster's "+minor(to)+": Kubernetes does not downgrade",
		"upgrade", "cluster", "--name", name, "--kubernetes", minor(from))
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
