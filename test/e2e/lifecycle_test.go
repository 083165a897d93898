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
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// TestLifecycle walks through what a new user does: create, use kubectl,
// a second cluster beside the first, stop/start keeping objects, delete.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	r := e.must("create", "cluster")
	if !strings.Contains(r.stderr, `Cluster "kubesim" is ready`) {
		t.Errorf("create did not say the cluster is ready: %s", r)
	}
	kc, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != "kubesim-kubesim" {
		t.Errorf("current context = %q, want kubesim-kubesim", kc.CurrentContext)
	}

	checkSyncedAtReady(t, e.home, "kubesim")

	// kubectl-equivalent access works at once, and the version is stamped.
	client := e.client()
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.36.") {
		t.Errorf("server version %q, want v1.36.x", v.GitVersion)
	}
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNamespace(nss.Items, "kube-system") || !hasNamespace(nss.Items, "default") {
		t.Errorf("namespaces %v lack default or kube-system", nss.Items)
	}
	if out := e.must("kubectl", "get", "ns").stdout; !strings.Contains(out, "kube-system") {
		t.Errorf("kubesim kubectl get ns printed %q", out)
	}
	// A pod can be created at once: the default ServiceAccount exists.
	if _, err := client.CoreV1().Pods("default").Create(ctx, testPod("first"), metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a pod right after create: %v", err)
	}

	checkModes(t, e.kubeconfig, filepath.Join(e.clusterDir("kubesim"), "kubeconfig"),
		filepath.Join(e.clusterDir("kubesim"), "pki", "ca.key"), filepath.Join(e.clusterDir("kubesim"), "pki", "sa.key"))

	// A second cluster beside the first; the same name again is refused.
	e.must("create", "cluster", "--name", "blue")
	e.fails(`cluster "blue" already exists`, "create", "cluster", "--name", "blue")
	out := e.must("kubectl", "--name", "blue", "get", "pods", "-A").stdout
	if strings.Contains(out, "first") {
		t.Errorf("blue shows a pod of the other cluster: %s", out)
	}
	// Without --name, kubectl follows the current context, now blue's.
	if out := e.must("kubectl", "get", "pods").stdout; strings.Contains(out, "first") {
		t.Errorf("kubectl without --name after creating blue shows the first cluster: %s", out)
	}
	if out := e.must("kubectl", "--name", "kubesim", "get", "pods").stdout; !strings.Contains(out, "first") {
		t.Errorf("kubectl --name kubesim: %s", out)
	}
	list := e.must("get", "clusters").stdout
	for _, want := range []string{"NAME", "STATUS", "API SERVER", "AGE", "kubesim", "blue", "running", "https://127.0.0.1:"} {
		if !strings.Contains(list, want) {
			t.Errorf("get clusters lacks %q:\n%s", want, list)
		}
	}

	// get kubeconfig works standalone.
	kcFile := filepath.Join(t.TempDir(), "blue.kubeconfig")
	if err := os.WriteFile(kcFile, []byte(e.must("get", "kubeconfig", "--name", "blue").stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	blueCfg, err := clientcmd.BuildConfigFromFlags("", kcFile)
	if err != nil {
		t.Fatal(err)
	}
	testOwnCAOnly(t, mustConfig(t, filepath.Join(e.clusterDir("kubesim"), "kubeconfig")), blueCfg)

	blueCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep-me"}, Data: map[string]string{"k": "v"}}
	blue := clientsetFor(t, blueCfg)
	if _, err := blue.CoreV1().ConfigMaps("default").Create(ctx, blueCM, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// stop/start keeps objects; a stopped cluster refuses work.
	e.must("stop", "cluster", "--name", "blue")
	if pid := e.componentPID("blue", "kube-apiserver"); pid != 0 {
		t.Errorf("blue's kube-apiserver still runs after stop (pid %d)", pid)
	}
	if !strings.Contains(e.must("get", "clusters").stdout, "stopped") {
		t.Errorf("get clusters does not show blue stopped")
	}
	e.fails(`cluster "blue" is stopped`, "kubectl", "--name", "blue", "get", "pods")
	e.must("start", "cluster", "--name", "blue")
	checkSyncedAtReady(t, e.home, "blue")
	cm, err := clientsetFor(t, mustConfig(t, e.kubeconfig)).CoreV1().ConfigMaps("default").Get(ctx, "keep-me", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap lost across stop/start: %v", err)
	}
	if cm.Data["k"] != "v" {
		t.Errorf("configmap data %v", cm.Data)
	}

	// Logs: components and the audit log of writes.
	if out := e.must("logs", "--name", "blue", "kube-apiserver").stdout; len(out) == 0 {
		t.Error("kube-apiserver log is empty")
	}
	eventually(t, 30*time.Second, "audit log records the configmap create", func() error {
		if out := e.must("logs", "--name", "blue", "audit").stdout; !strings.Contains(out, `"resource":"configmaps"`) {
			return fmt.Errorf("no configmaps entry in audit log")
		}
		return nil
	})
	e.fails(`no log named "kubelet"`, "logs", "--name", "blue", "kubelet")
	testLogsFollow(t, e, blue)

	// delete leaves no process, no files and no context.
	e.must("delete", "cluster", "--name", "blue")
	if _, err := os.Stat(e.clusterDir("blue")); !os.IsNotExist(err) {
		t.Errorf("blue's directory survives delete: %v", err)
	}
	kc, err = clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := kc.Contexts["kubesim-blue"]; ok {
		t.Error("context kubesim-blue survives delete")
	}
	if _, ok := kc.Contexts["kubesim-kubesim"]; !ok {
		t.Error("deleting blue removed the other cluster's context")
	}
	for _, pid := range e.processes() {
		if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmd), e.clusterDir("blue")) {
			t.Errorf("process %d of blue survives delete: %s", pid, cmd)
		}
	}
	e.must("delete", "cluster", "--all")
	if pids := e.processes(); len(pids) != 0 {
		t.Errorf("processes left after delete --all: %v", pids)
	}
	if out := e.must("get", "clusters"); !strings.Contains(out.stderr, "No clusters") {
		t.Errorf("get clusters after delete --all: %s", out)
	}
}

// testOwnCAOnly: an API server takes the client certificates of its own
// cluster's CA and refuses another cluster's, on every request (the API
// server keeps the chains a certificate verified to: patches/README.md, 0002).
func testOwnCAOnly(t *testing.T, own, other *rest.Config) {
	t.Helper()
	ctx := context.Background()
	if len(other.CertData) == 0 && other.CertFile == "" {
		t.Fatal("the other cluster's kubeconfig has no client certificate")
	}
	cross := rest.CopyConfig(own)
	cross.CertData, cross.KeyData = other.CertData, other.KeyData
	cross.CertFile, cross.KeyFile = other.CertFile, other.KeyFile
	ownClient, crossClient := clientsetFor(t, own), clientsetFor(t, cross)
	for i := 1; i <= 3; i++ {
		if _, err := ownClient.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Errorf("request %d with the cluster's own client certificate: %v", i, err)
		}
		// Refused: unauthenticated, or served as the anonymous user, who
		// may not read namespaces; never as the certificate's user.
		_, err := crossClient.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		if !apierrors.IsUnauthorized(err) && !(apierrors.IsForbidden(err) && strings.Contains(err.Error(), `"system:anonymous"`)) {
			t.Errorf("request %d with another cluster's client certificate: %v, want it refused", i, err)
		}
	}
}

func hasNamespace(nss []corev1.Namespace, name string) bool {
	for _, ns := range nss {
		if ns.Name == name {
			return true
		}
	}
	return false
}

// checkModes fails for any file that others than its owner may read.
func checkModes(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if mode := info.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o, want 600", p, mode)
		}
	}
}

// testLogsFollow follows blue's audit log and sees a write made after it
// started.
func testLogsFollow(t *testing.T, e *env, blue *kubernetes.Clientset) {
	t.Helper()
	cmd := exec.Command(binary, "logs", "--name", "blue", "audit", "-f")
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	var out safeBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "followed-later"}}
	if _, err := blue.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "logs -f shows a later write", func() error {
		if !strings.Contains(out.String(), "followed-later") {
			return fmt.Errorf("not in the followed output yet")
		}
		return nil
	})
}

// safeBuffer is a bytes.Buffer a process may write while a test reads.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// checkSyncedAtReady: create and start return only once the scheduler and
// the controller-manager have synced their informers (their own
// readiness, recorded before the cluster counts as started), so a pod made
// at once is scheduled at once and a Deployment gets its pods at once.
// Before, they were merely started.
func checkSyncedAtReady(t *testing.T, home, cluster string) {
	t.Helper()
	events, err := supervisor.Startup(clusterdir.For(home, cluster))
	if err != nil {
		t.Fatal(err)
	}
	synced := map[string]bool{}
	for _, ev := range events {
		switch {
		case ev.Event == supervisor.EventReady:
			synced[ev.Component] = true
		case ev.Event == supervisor.EventClusterStarted:
			for _, comp := range []string{controlplane.KubeScheduler, controlplane.KubeControllerManager} {
				if !synced[comp] {
					t.Fatalf("cluster %q started before %s synced: %+v", cluster, comp, events)
				}
			}
			if _, err := os.Stat(filepath.Join(clusterdir.For(home, cluster).Path, "controller-manager.synced")); err != nil {
				t.Fatalf("cluster %q started without the controller-manager's synced file: %v", cluster, err)
			}
			return
		}
	}
	t.Fatalf("cluster %q: no cluster-started event in %+v", cluster, events)
}
