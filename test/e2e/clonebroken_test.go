//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// boundPodSpec is a pod on n1 as admission makes it: a clone writes it
// straight into etcd.
const boundPodSpec = `spec: {nodeName: n1, serviceAccountName: default, priority: 0, preemptionPolicy: PreemptLowerPriority,
  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}, {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}],
  containers: [{name: c, image: c}]}`

// TestCloneOfPodsThatCannotRun: a source's pod Pending there (no node
// fits it) and one bound to a node the file lacks do not fail the clone:
// it waits for the pod on n1 alone, then names the two with why (the
// scheduler's own words for the first), and the first stays Pending.
func TestCloneOfPodsThatCannotRun(t *testing.T) {
	e := newEnv(t)
	file := oneNodeSnapshot(t,
		"metadata: {name: runs, namespace: default}\n"+boundPodSpec,
		"metadata: {name: stuck, namespace: default}\nspec: {nodeSelector: {disk: none}, containers: [{name: c, image: c}]}",
		"metadata: {name: orphan, namespace: default}\nspec: {nodeName: gone, containers: [{name: c, image: c}]}")
	r := e.must("create", "cluster", "--name", "pend", "--from", file, "--wait", "60s")
	out := r.stdout + r.stderr
	for _, want := range []string{
		"1 nodes Ready, 1 pods Running",
		"2 of 3 cloned pods not Running (only pods on the snapshot's nodes are waited for):",
		`default/orphan: bound to node "gone", which is not in the snapshot`,
		"default/stuck: Pending, as in the source: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the clone does not say %q: %s", want, r)
		}
	}
	c := contextClient(t, e.kubeconfig, "kubesim-pend")
	if p := getPod(t, c, "runs"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("pod runs is %s, want Running", p.Status.Phase)
	}
	if p := getPod(t, c, "stuck"); p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Errorf("pod stuck is %s on %q, want Pending and unbound, as in the source", p.Status.Phase, p.Spec.NodeName)
	}
	if r := e.must("get", "clusters"); !strings.Contains(r.stdout, "running") || strings.Contains(r.stdout, "broken") {
		t.Errorf("a finished clone is not running: %s", r.stdout)
	}
}

// TestCloneKilledMidLoadIsBroken: a create killed while it loads the
// clone leaves a cluster whose pod controllers are held; get clusters says
// it is broken and why (but not while the clone loads), start refuses it
// with what to do, running or stopped, and delete removes it.
func TestCloneKilledMidLoadIsBroken(t *testing.T) {
	e := newEnv(t)
	pods := make([]string, 2000) // enough to be loading still when killed
	for i := range pods {
		pods[i] = fmt.Sprintf("metadata: {name: p%d, namespace: default}\nspec: {containers: [{name: c, image: c}]}", i)
	}
	file := oneNodeSnapshot(t, pods...)

	cmd := exec.Command(binary, "create", "cluster", "--name", "killed", "--from", file)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Killed once the node, made before any pod, is in the clone.
	kubeconfig := filepath.Join(e.clusterDir("killed"), "kubeconfig")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := nodeMade(kubeconfig); err == nil {
			break
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the clone made no node within 3 minutes: %v\n%s", err, out.String())
		}
		select {
		case err := <-exited:
			t.Fatalf("create exited (%v) before it was killed:\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if r := e.must("get", "clusters"); strings.Contains(r.stdout, "broken") {
		t.Errorf("a clone loading is shown broken: %s", r.stdout)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if _, err := os.Stat(filepath.Join(e.clusterDir("killed"), "pod-controllers.held")); err != nil {
		t.Fatalf("the clone finished before it was killed (%v); the test needs a larger file:\n%s", err, out.String())
	}

	const cause = "broken (clone interrupted: not all of its objects were made and its pod controllers are held; delete it and clone again)"
	if r := e.must("get", "clusters"); !strings.Contains(r.stdout, cause) {
		t.Errorf("get clusters of a killed clone, want %q: %s", cause, r.stdout)
	}
	const todo = `delete it and clone again): kubesim delete cluster --name killed`
	e.fails(todo, "start", "cluster", "--name", "killed")
	e.must("stop", "cluster", "--name", "killed")
	if r := e.must("get", "clusters"); !strings.Contains(r.stdout, cause) {
		t.Errorf("get clusters of a stopped killed clone, want %q: %s", cause, r.stdout)
	}
	e.fails(todo, "start", "cluster", "--name", "killed")
	e.must("delete", "cluster", "--name", "killed")
	if r := e.run("get", "clusters"); strings.Contains(r.stdout, "killed") {
		t.Errorf("deleted, still listed: %s", r.stdout)
	}
}

// nodeMade reports whether the cluster of kubeconfig has node n1.
func nodeMade(kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 2 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = c.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
	return err
}

// TestSnapshotRestoreOfAnotherCluster: restoring a cluster's own
// snapshot says nothing more; restoring another cluster's says so.
func TestSnapshotRestoreOfAnotherCluster(t *testing.T) {
	e := newEnv(t)
	e.must("create", "cluster", "--name", "a")
	e.must("create", "cluster", "--name", "b")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	e.must("snapshot", "save", "--name", "a", "--path", a)
	e.must("snapshot", "save", "--name", "b", "--path", b)
	e.must("stop", "cluster", "--name", "b")

	r := e.must("snapshot", "restore", "--name", "b", "--path", b)
	if out := r.stdout + r.stderr; !strings.Contains(out, `Restored cluster "b" from `+b+"\n") {
		t.Errorf("restoring b's own snapshot: %s", r)
	}
	r = e.must("snapshot", "restore", "--name", "b", "--path", a)
	if out := r.stdout + r.stderr; !strings.Contains(out, `Restored cluster "b" from `+a+`, a snapshot of another cluster (its kube-system namespace is `) ||
		!strings.Contains(out, `"b" now holds that cluster's objects`) {
		t.Errorf("restoring a's snapshot into b does not say what it is: %s", r)
	}
	e.must("start", "cluster", "--name", "b")
	ns := func(ctx string) string {
		got, err := contextClient(t, e.kubeconfig, ctx).CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(got.UID)
	}
	if ua, ub := ns("kubesim-a"), ns("kubesim-b"); ua != ub {
		t.Errorf("b's kube-system is %s after restoring a's snapshot, a's is %s", ub, ua)
	}
}
