//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/upstream/membudget"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	toolswatch "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/yaml"
)

// TestComponentRestart kills the scheduler: the supervisor must bring it
// back, and the new one must schedule (here: report that no node fits).
//
// The components run with none of the caller's environment but what a Go
// program needs: a secret in it never reaches them.
func TestComponentRestart(t *testing.T) {
	e := newEnv(t)
	if r := e.runEnv([]string{"KUBESIM_TEST_SECRET=hunter2"}, "create", "cluster", "--name", "crash"); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	old := e.componentPID("crash", "kube-scheduler")
	if old == 0 {
		t.Fatal("no kube-scheduler process")
	}
	pidFile, _ := os.ReadFile(filepath.Join(e.clusterDir("crash"), "supervisor.pid"))
	supervisor, _ := strconv.Atoi(strings.Fields(string(pidFile) + " 0")[0])
	for comp, pid := range map[string]int{"supervisor": supervisor, "kube-scheduler": old, "kubelet-sim": e.componentPID("crash", "kubelet-sim")} {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || bytes.Contains(environ, []byte("hunter2")) || !bytes.Contains(environ, []byte("GOGC=")) {
			t.Errorf("%s (pid %d) runs with %q (%v)", comp, pid, environ, err)
		}
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var restarted int
	eventually(t, 60*time.Second, "kube-scheduler restarted", func() error {
		restarted = e.componentPID("crash", "kube-scheduler")
		if restarted == 0 || restarted == old {
			return errors.New("no new kube-scheduler process")
		}
		return nil
	})
	log, _ := os.ReadFile(filepath.Join(e.clusterDir("crash"), "logs", "supervisor.log"))
	if !strings.Contains(string(log), "kube-scheduler exited") {
		t.Errorf("supervisor log does not say why it restarted the scheduler:\n%s", log)
	}

	ctx := context.Background()
	client := e.client()
	if _, err := client.CoreV1().Pods("default").Create(ctx, testPod("waiting"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the restarted scheduler reports FailedScheduling", func() error {
		evs, err := client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "waiting").String(),
		})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "FailedScheduling" {
				return nil
			}
		}
		return fmt.Errorf("events: %v", evs.Items)
	})

	// stop leaves nothing running, whatever was restarted.
	e.must("stop", "cluster", "--name", "crash")
	if pids := e.processes(); len(pids) > 0 {
		t.Errorf("processes left after stop: %v", pids)
	}
}

// TestPortTakenWhileStopped takes the API server's port while the cluster
// is stopped: start must move to a free port and fix the kubeconfig.
func TestPortTakenWhileStopped(t *testing.T) {
	e := newEnv(t)
	e.must("create", "cluster", "--name", "moved")
	port := apiServerPort(t, e, "moved")
	e.must("stop", "cluster", "--name", "moved")
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("taking port %d: %v", port, err)
	}
	defer l.Close()
	e.must("start", "cluster", "--name", "moved")
	if now := apiServerPort(t, e, "moved"); now == port {
		t.Fatalf("API server still on taken port %d", port)
	}
	if _, err := e.client().CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("kubeconfig not updated to the new port: %v", err)
	}
	if out := e.must("kubectl", "--name", "moved", "get", "ns", "default").stdout; !strings.Contains(out, "default") {
		t.Errorf("embedded kubectl after move: %s", out)
	}

	// A port the user chose is never moved: taken means an error.
	e.fails(fmt.Sprintf("networking.apiServerPort: port %d is in use", port),
		"create", "cluster", "--name", "fixed", "--api-server-port", strconv.Itoa(port))
}

// TestConfigFile creates a cluster from a config file, with a flag
// overriding it, and checks the options — extra upstream flags included —
// reach the components, and stay with the cluster when the files it was
// made from are gone.
func TestConfigFile(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit.yaml")
	writeFile(t, policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources:\n  - group: \"\"\n    resources: [\"configmaps\"]\n"))
	config := filepath.Join(dir, "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
name: fromfile
auditPolicy: `+policy+`
memoryLimit: 1Gi
nodeLifecycle:
  nodeMonitorPeriod: 2s
  nodeMonitorGracePeriod: 20s
extraArgs:
  kube-controller-manager: ["--concurrent-gc-syncs=7", "--profiling=true"]
`))
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: bad\nextraArgs:\n  kube-scheduler: [--no-such-flag=1]\n"))
	e.fails("extraArgs.kube-scheduler: unknown flag: --no-such-flag", "create", "cluster", "--config", bad)
	e.fails(`--memory-limit: "lots" is not a size such as 2Gi`, "create", "cluster", "--name", "bad", "--memory-limit", "lots")

	e.must("create", "cluster", "--config", config, "--node-monitor-grace-period", "12s")
	// The cluster keeps what it was made with, not a path to it.
	if err := os.Remove(policy); err != nil {
		t.Fatal(err)
	}
	e.must("stop", "cluster", "--name", "fromfile")
	e.must("start", "cluster", "--name", "fromfile")
	kcm := e.componentPID("fromfile", "kube-controller-manager")
	if kcm == 0 {
		t.Fatal("no controller-manager for cluster fromfile")
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", kcm))
	for _, want := range []string{"--node-monitor-period=2s", "--node-monitor-grace-period=12s", "--concurrent-gc-syncs=7", "--profiling=true"} {
		if !strings.Contains(string(cmdline), want) {
			t.Errorf("controller-manager lacks %s: %s", want, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	if strings.Contains(string(cmdline), "--profiling=false") {
		t.Errorf("kubesim's --profiling=false survives the user's --profiling=true: %s", strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	if log := e.must("logs", "--name", "fromfile", "supervisor").stdout; !strings.Contains(log, "--concurrent-gc-syncs=7") {
		t.Errorf("the supervisor's log does not show the controller-manager's command line:\n%s", log)
	}
	// The API server holds its Go memory to its share of memoryLimit (45
	// parts of the weights of the components the cluster runs) while its
	// live heap is well below that, as a fresh cluster's is.
	api := e.componentPID("fromfile", "kube-apiserver")
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", api))
	var share int64
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, membudget.EnvVar+"="); ok {
			share, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if percent := share * 100 / (1 << 30); percent < 40 || percent > 45 {
		t.Errorf("the API server's memory share is %d bytes, %d %% of memoryLimit 1Gi; want 45 parts of ~100-110", share, percent)
	}
	metrics, err := e.client().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("go_gc_gomemlimit_bytes %g\n", float64(share)); !strings.Contains(string(metrics), want) {
		t.Errorf("the API server's metrics lack %q (its share of memoryLimit 1Gi)", strings.TrimSpace(want))
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}, Data: map[string]string{"secret-ish": "value-in-body"}}
	if _, err := e.client().CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "audit log has the request body (RequestResponse level)", func() error {
		if out := e.must("logs", "--name", "fromfile", "audit").stdout; !strings.Contains(out, "value-in-body") {
			return errors.New("request body not in audit log")
		}
		return nil
	})
}

// apiServerPort reads the port kubesim recorded for a cluster.
func apiServerPort(t *testing.T, e *env, name string) int {
	t.Helper()
	return ports(t, e, name).APIServer
}

// ports reads the ports kubesim recorded for a cluster.
func ports(t *testing.T, e *env, name string) (p struct{ APIServer, Etcd int }) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.clusterDir(name), "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Status struct {
			Ports v1alpha1.Ports `json:"ports"`
		} `json:"status"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	p.APIServer, p.Etcd = c.Status.Ports.APIServer(), c.Status.Ports.Get("etcd", "")
	return p
}

// TestPortTakenWhileRunning kills etcd, then the API server, and takes
// each one's port before the supervisor restarts it: each moves to a free
// port, and what depends on it is restarted with the new address, so the
// cluster serves again and its nodes stay Ready. Nothing depends on etcd's
// port (the API server uses its socket), so etcd's move restarts nothing.
// The user's kubeconfig follows the API server to its new port at once:
// its context for the cluster alone changes, not the current one.
func TestPortTakenWhileRunning(t *testing.T) {
	e := newEnv(t)
	e.createCluster("hop", "--nodes", "1")
	user, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	user.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	user.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	user.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*user, e.kubeconfig); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		component string
		port      func() int
	}{
		{"etcd", func() int { return ports(t, e, "hop").Etcd }},
		{"kube-apiserver", func() int { return ports(t, e, "hop").APIServer }},
	} {
		old := tc.port()
		pid := e.componentPID("hop", tc.component)
		if pid == 0 {
			t.Fatalf("no %s process", tc.component)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The supervisor waits half a second before a restart: take the port first.
		var l net.Listener
		eventually(t, 5*time.Second, tc.component+"'s port free to take", func() (err error) {
			l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(old))
			return err
		})
		defer l.Close()
		eventually(t, 2*time.Minute, "the cluster serving again after "+tc.component+" moved", func() error {
			if now := tc.port(); now == old {
				return fmt.Errorf("%s still on port %d", tc.component, old)
			}
			if r := e.run("kubectl", "--name", "hop", "get", "node", "node-000000"); r.code != 0 || !strings.Contains(r.stdout, " Ready") {
				return fmt.Errorf("%s", r)
			}
			return nil
		})
	}
	user, err = clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	server := func(name string) string {
		if c := user.Clusters[name]; c != nil {
			return c.Server
		}
		return "(none)"
	}
	if want := fmt.Sprintf("https://127.0.0.1:%d", ports(t, e, "hop").APIServer); server("kubesim-hop") != want {
		t.Errorf("the user's kubeconfig does not follow the API server to %s: kubesim-hop's server is %s", want, server("kubesim-hop"))
	}
	if user.CurrentContext != "prod" || server("prod") != "https://prod.example:6443" {
		t.Errorf("the user's other context changed: current %q, prod's server %s", user.CurrentContext, server("prod"))
	}
	hop, err := clientcmd.NewNonInteractiveClientConfig(*user, "kubesim-hop", nil, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clientsetFor(t, hop).CoreV1().Nodes().Get(context.Background(), "node-000000", metav1.GetOptions{}); err != nil {
		t.Errorf("the user's context kubesim-hop after the move: %v", err)
	}
	log := e.must("logs", "--name", "hop", "supervisor").stdout
	for _, restarted := range []string{"kubelet-sim", "kube-controller-manager"} {
		if !strings.Contains(log, "restarting "+restarted+": a component it depends on moved") {
			t.Errorf("%s was not restarted after a move:\n%s", restarted, log)
		}
	}
}

// TestAPIServerOutage freezes the API server (kill -STOP) for three node
// grace periods, then lets it go on. Nobody could renew a Lease meanwhile,
// so the controller-manager's view that the nodes went silent is about the
// outage, not the nodes: afterwards no node may go NotReady and no pod be
// evicted. The nodes and pods are watched from before the outage, so even
// a flap of a moment is seen.
func TestAPIServerOutage(t *testing.T) {
	e := newEnv(t)
	e.createCluster("frozen", threeNodesFastFailures...)
	ctx := context.Background()
	client := e.client()
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deployment("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPods(t, client, "app=web", 3)

	flaps := watchFlaps(t, client)

	pid := e.componentPID("frozen", "kube-apiserver")
	if pid == 0 {
		t.Fatal("no kube-apiserver process")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The outage itself: three grace periods (threeNodesFastFailures: 10s).
	time.Sleep(30 * time.Second)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Watch for what the controller-manager would do once it hears again:
	// mark the nodes NotReady within a grace period, taint them, evict.
	eventually(t, time.Minute, "the API server answering again", func() error {
		_, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err
	})
	time.Sleep(25 * time.Second)
	if seen := flaps(); len(seen) > 0 {
		t.Errorf("after a %s API server outage:\n%s", 30*time.Second, strings.Join(seen, "\n"))
	}
	waitPods(t, client, "app=web", 3)
}

// watchFlaps watches the nodes and the default namespace's pods from now
// on, and returns what lists what went wrong so far: a node not Ready or
// tainted NoExecute, a pod deleted. Watched, so even a flap of a moment
// is seen.
func watchFlaps(t *testing.T, client kubernetes.Interface) (seenSoFar func() []string) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	var seen []string // what went wrong, in the order it was seen
	watchFor := func(list func() (runtime.Object, string, error), watchFrom func(rv string) (watch.Interface, error), judge func(watch.Event) string) {
		_, rv, err := list()
		if err != nil {
			t.Fatal(err)
		}
		w, err := toolswatch.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			return watchFrom(o.ResourceVersion)
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if bad := judge(ev); bad != "" {
					mu.Lock()
					seen = append(seen, bad)
					mu.Unlock()
				}
			}
		}()
	}
	watchFor(func() (runtime.Object, string, error) {
		l, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		return l, l.ResourceVersion, nil
	}, func(rv string) (watch.Interface, error) {
		return client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}, func(ev watch.Event) string {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type == watch.Bookmark {
			return ""
		}
		if !nodeReady(n) {
			return fmt.Sprintf("node %s not Ready (%v)", n.Name, n.Status.Conditions)
		}
		for _, taint := range n.Spec.Taints {
			if taint.Effect == corev1.TaintEffectNoExecute {
				return fmt.Sprintf("node %s tainted %s", n.Name, taint.Key)
			}
		}
		return ""
	})
	watchFor(func() (runtime.Object, string, error) {
		l, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		return l, l.ResourceVersion, nil
	}, func(rv string) (watch.Interface, error) {
		return client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}, func(ev watch.Event) string {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Bookmark {
			return ""
		}
		if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
			return "pod " + p.Name + " deleted"
		}
		return ""
	})

	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
