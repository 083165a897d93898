//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestSimulatedNodesAndPods: nodes come up Ready and stay so past the
// grace period; a Deployment runs, scales and rolls; a Job completes;
// IPs are unique and recycled; a full node range is survived; drain obeys
// a PDB; a restarted simulator resumes without duplicating addresses.
func TestSimulatedNodesAndPods(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// A short grace period: a missed Lease would show within seconds.
	e.must("create", "cluster", "--name", "sim", "--nodes", "3",
		"--node-monitor-period", "1s", "--node-monitor-grace-period", "8s")
	client := e.client()

	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes.Items))
	}
	server, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		// The kubelet's version is the cluster's, as in a real cluster;
		// the runtime's says what runs the node.
		if n.Status.NodeInfo.KubeletVersion != server.GitVersion || !strings.HasPrefix(n.Status.NodeInfo.KernelVersion, "kubesim-") || internalIP(&n) == "" ||
			n.Status.Allocatable.Pods().Value() != 110 || !nodeReady(&n) {
			t.Errorf("node %s not initialized as a kubelet would: %+v", n.Name, n.Status)
		}
	}
	eventually(t, 30*time.Second, "node-ipam gives every node a podCIDR", func() error {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			if n.Spec.PodCIDR == "" {
				return fmt.Errorf("node %s has no podCIDR", n.Name)
			}
		}
		return nil
	})
	// Ready throughout twice the grace period: leases keep them alive.
	deadline := time.Now().Add(16 * time.Second)
	for time.Now().Before(deadline) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes.Items {
			if !nodeReady(&n) || len(n.Spec.Taints) > 0 {
				t.Fatalf("node %s flapped: ready=%v taints=%v", n.Name, nodeReady(&n), n.Spec.Taints)
			}
		}
		time.Sleep(500 * time.Millisecond) // sampling, not synchronisation
	}
	// The simulator is a kubelet to Priority and Fairness: its heartbeats
	// go at node-high priority, ahead of workloads.
	if n := dispatchedBy(t, client, "system-node-high"); n == 0 {
		t.Error("no request under FlowSchema system-node-high: the simulator's heartbeats queue with workloads")
	}
	// Pods are served from etcd, without the watch cache nodes have.
	const cached = `apiserver_watch_cache_resource_version{group="",resource=`
	if _, found := apiServerMetric(t, client, cached+`"pods"}`); found {
		t.Error("the API server has a watch cache of pods")
	}
	if _, found := apiServerMetric(t, client, cached+`"nodes"}`); !found {
		t.Error("the API server has no watch cache of nodes: the metric checked for pods is not there")
	}

	// A Deployment: every pod Running and Ready with a unique IP of its node's range.
	deploy := deployment("web", 9)
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 9)
	checkPodIPs(t, client, "app=web")

	// logs and exec on a simulated pod: a clear refusal, at once.
	pod := runningPods(t, client, "app=web")[0].Name
	// So are the node and pod proxies: refused by the egress proxy, never
	// looked up in the host's DNS nor connected off the machine.
	for _, args := range [][]string{
		{"logs", pod}, {"exec", pod, "--", "ls"},
		{"get", "--raw", "/api/v1/nodes/node-000000/proxy/healthz"},
		{"get", "--raw", "/api/v1/namespaces/default/pods/" + pod + ":8080/proxy/"},
	} {
		start := time.Now()
		r := e.run(append([]string{"kubectl", "--name", "sim"}, args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "is simulated") {
			t.Errorf("kubectl %s on a simulated pod: %s", args[0], r)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("kubectl %s took %s to fail", args[0], took)
		}
	}

	// Scale down and up: pods go, come, and addresses stay unique.
	scaleDeployment(t, client, "web", 3)
	waitPods(t, client, "app=web", 3)
	scaleDeployment(t, client, "web", 12)
	waitPods(t, client, "app=web", 12)
	checkPodIPs(t, client, "app=web")

	// A Job completes.
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
	if _, err := client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "job completes", func() error {
		j, err := client.BatchV1().Jobs("default").Get(ctx, "once", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if j.Status.Succeeded != 1 {
			return fmt.Errorf("job status %+v", j.Status)
		}
		return nil
	})

	t.Run("drain obeys a PDB", func(t *testing.T) { testDrain(t, e.in(t), client) })
	t.Run("small pod range: exhausted, then recycled", func(t *testing.T) { testExhaustion(t, client) })
	t.Run("simulator restart", func(t *testing.T) { testSimulatorRestart(t, e.in(t), client) })
	t.Run("API server restart", func(t *testing.T) { testAPIServerRestart(t, e.in(t), client) })
}

// testAPIServerRestart kills the API server under the simulator: once the
// supervisor has it back, new pods still start, with no address twice.
func testAPIServerRestart(t *testing.T, e *env, client kubernetes.Interface) {
	old := e.componentPID("sim", "kube-apiserver")
	if old == 0 {
		t.Fatal("no kube-apiserver process")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "API server back", func() error {
		if pid := e.componentPID("sim", "kube-apiserver"); pid == 0 || pid == old {
			return errors.New("not restarted yet")
		}
		_, err := client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
	// Renewals that failed while it was down must not wedge the Leases.
	back := time.Now()
	eventually(t, 30*time.Second, "every node Lease renewed after the restart", func() error {
		leases, err := client.CoordinationV1().Leases("kube-node-lease").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, l := range leases.Items {
			if l.Spec.RenewTime == nil || l.Spec.RenewTime.Before(&metav1.MicroTime{Time: back}) {
				return fmt.Errorf("lease %s last renewed %v", l.Name, l.Spec.RenewTime)
			}
		}
		return nil
	})
	scaleDeployment(t, client, "web", 26)
	waitPods(t, client, "app=web", 26)
	checkPodIPs(t, client, "app=web")
}

func testDrain(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	// Ten pods pinned to node-000000, guarded by a PDB of minAvailable 95%.
	d := deployment("pinned", 10)
	d.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-000000"}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=pinned", 10)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "pinned"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromString("95%")),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pinned"}},
		},
	}
	if _, err := client.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "PDB observed", func() error {
		p, err := client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "pinned", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.CurrentHealthy != 10 {
			return fmt.Errorf("pdb status %+v", p.Status)
		}
		return nil
	})
	r := e.run("kubectl", "--name", "sim", "drain", "node-000000", "--ignore-daemonsets", "--timeout=8s")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "disruption budget") {
		t.Fatalf("drain with a 95%% PDB over 10 pods: want refused evictions: %s", r)
	}
	if pods := runningPods(t, client, "app=pinned"); len(pods) != 10 {
		t.Errorf("%d pinned pods running after refused drain, want 10", len(pods))
	}

	// Without the PDB the drain evicts them all.
	if err := client.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "pinned", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.must("kubectl", "--name", "sim", "drain", "node-000000", "--ignore-daemonsets", "--timeout=60s")
	eventually(t, 30*time.Second, "node-000000 empty", func() error {
		pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-000000").String()})
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
	e.must("kubectl", "--name", "sim", "uncordon", "node-000000")
	if err := client.AppsV1().Deployments("default").Delete(ctx, "pinned", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testExhaustion gives a node a tiny pod range: the pod beyond it waits
// with an Event, and gets the address a deleted pod frees.
func testExhaustion(t *testing.T, client kubernetes.Interface) {
	ctx := context.Background()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny", Labels: map[string]string{"kubernetes.io/hostname": "tiny"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.250.0/29", PodCIDRs: []string{"10.0.250.0/29"},
			// Only the test's own pods, bound by name, go there.
			Taints: []corev1.Taint{{Key: "kubesim.io/test", Value: "tiny", Effect: corev1.TaintEffectNoSchedule}}},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNode(t, client, "tiny", corev1.ConditionTrue)
	// A /29 holds 6 addresses.
	for i := range 7 {
		p := testPod(fmt.Sprintf("tiny-%d", i))
		p.Labels = map[string]string{"app": "tiny"}
		p.Spec.NodeName = "tiny"
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var waiting string
	eventually(t, 30*time.Second, "6 tiny pods running, one waiting with an Event", func() error {
		pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=tiny"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			} else {
				waiting = p.Name
			}
		}
		if running != 6 || waiting == "" {
			return fmt.Errorf("%d running", running)
		}
		evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", waiting).String()})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, "exhausted") {
				return nil
			}
		}
		return fmt.Errorf("no exhaustion event for %s", waiting)
	})
	checkPodIPs(t, client, "app=tiny")
	victim := "tiny-0"
	if waiting == victim {
		victim = "tiny-1"
	}
	old, err := client.CoreV1().Pods("default").Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "waiting pod gets the freed address", func() error {
		p, err := client.CoreV1().Pods("default").Get(ctx, waiting, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		if p.Status.PodIP != old.Status.PodIP {
			return fmt.Errorf("got %s, want the recycled %s", p.Status.PodIP, old.Status.PodIP)
		}
		return nil
	})
}

// testSimulatorRestart kills the kubelet simulator: pods made meanwhile
// still start once it is back, with no address given twice.
func testSimulatorRestart(t *testing.T, e *env, client kubernetes.Interface) {
	ctx := context.Background()
	old := e.componentPID("sim", "kubelet-sim")
	if old == 0 {
		t.Fatal("no kubelet-sim process")
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	scaleDeployment(t, client, "web", 20)
	eventually(t, 60*time.Second, "kubelet-sim restarted", func() error {
		if pid := e.componentPID("sim", "kubelet-sim"); pid == 0 || pid == old {
			return errors.New("not yet")
		}
		return nil
	})
	waitPods(t, client, "app=web", 20)
	checkPodIPs(t, client, "app=web")
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !nodeReady(&n) {
			t.Errorf("node %s not Ready after simulator restart", n.Name)
		}
	}
}

// TestKubeletSimInExternalCluster runs `kubesim kubelet-sim` against a
// cluster whose own simulator is off: it manages the annotated node only.
func TestKubeletSimInExternalCluster(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.must("create", "cluster", "--name", "bare", "--disable-kubelet-sim")
	if pid := e.componentPID("bare", "kubelet-sim"); pid != 0 {
		t.Fatalf("kubelet-sim runs although disabled (pid %d)", pid)
	}
	client := e.client()
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "fake-one", Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "real-one"}},
	} {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// deploy/ installs in any cluster; the simulator then runs with exactly
	// its ServiceAccount's rights (impersonated here, as no image runs).
	e.cluster = "bare"
	e.kubectl("apply", "-k", filepath.Join("..", "..", "deploy"))
	if out := e.kubectl("get", "stages", "-o", "name").stdout; strings.Count(out, "stage.kwok.x-k8s.io/") != 11 {
		t.Errorf("deploy/ applied these stages, want the 10 of the fast set and resourceclaim-binding-conditions:\n%s", out)
	}
	e.apply(`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: tag-running}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.status.phase', operator: In, values: [Running]}
    - {key: '.status.conditions[]? | select(.type == "example.com/Tagged") | .status', operator: DoesNotExist}
  weight: 10
  next:
    statusTemplate: |
      conditions:
      - {type: example.com/Tagged, status: "True"}
`)
	sim := exec.Command(binary, "kubelet-sim", "--kubeconfig", impersonating(t, filepath.Join(e.clusterDir("bare"), "kubeconfig"),
		"system:serviceaccount:kubesim-system:kubelet-sim"), "--holder", "external-test")
	sim.Stdout, sim.Stderr = os.Stderr, os.Stderr
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sim.Process.Kill(); _ = sim.Wait() }()
	waitNode(t, client, "fake-one", corev1.ConditionTrue)
	if n := dispatchedBy(t, client, "kubesim-kubelet-sim-heartbeats"); n == 0 {
		t.Error("no request under deploy/'s FlowSchema kubesim-kubelet-sim-heartbeats")
	}
	p := testPod("on-real")
	p.Spec.NodeName = "real-one"
	if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = testPod("on-fake")
	p.Spec.NodeName = "fake-one"
	if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, client, "on-fake", corev1.PodRunning)
	eventually(t, 30*time.Second, "user stage applied by the external simulator", func() error {
		if conditionStatus(getPod(t, client, "on-fake"), "example.com/Tagged") != "True" {
			return errors.New("not tagged")
		}
		return nil
	})
	real, err := client.CoreV1().Nodes().Get(ctx, "real-one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(real.Status.Conditions) > 0 {
		t.Errorf("unannotated node was touched: %+v", real.Status.Conditions)
	}
	if pod, _ := client.CoreV1().Pods("default").Get(ctx, "on-real", metav1.GetOptions{}); pod.Status.Phase != corev1.PodPending {
		t.Errorf("pod on the unmanaged node is %s, want Pending", pod.Status.Phase)
	}
	if _, err := client.CoordinationV1().Leases("kube-node-lease").Get(ctx, "real-one", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a lease exists for the unmanaged node: %v", err)
	}
}

// impersonating writes a copy of kubeconfig whose user acts as user.
func impersonating(t *testing.T, kubeconfig, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	out := filepath.Join(t.TempDir(), "impersonating.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func scaleDeployment(t *testing.T, client kubernetes.Interface, name string, replicas int32) {
	t.Helper()
	// The deployment controller writes the Deployment too: read again on a
	// conflict, as kubectl scale would not meet one.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := client.AppsV1().Deployments("default").GetScale(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = client.AppsV1().Deployments("default").UpdateScale(context.Background(), name, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPodIPs: every running pod's IP is unique among live pods and lies in
// its node's podCIDR; hostIP is its node's InternalIP.
func checkPodIPs(t *testing.T, client kubernetes.Interface, selector string) {
	t.Helper()
	ctx := context.Background()
	all, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range all.Items {
		if p.Status.PodIP == "" || p.Spec.HostNetwork {
			continue
		}
		if other, dup := seen[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", other, p.Name, p.Status.PodIP)
		}
		seen[p.Status.PodIP] = p.Name
	}
	sel, _ := labels.Parse(selector)
	for _, p := range all.Items {
		if !sel.Matches(labels.Set(p.Labels)) || p.Status.PodIP == "" {
			continue
		}
		node, err := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, cidr, err := net.ParseCIDR(node.Spec.PodCIDR)
		if err != nil || !cidr.Contains(net.ParseIP(p.Status.PodIP)) {
			t.Errorf("pod %s IP %s not in node %s podCIDR %q", p.Name, p.Status.PodIP, node.Name, node.Spec.PodCIDR)
		}
		if p.Status.HostIP != internalIP(node) {
			t.Errorf("pod %s hostIP %s, node InternalIP %s", p.Name, p.Status.HostIP, internalIP(node))
		}
	}
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
